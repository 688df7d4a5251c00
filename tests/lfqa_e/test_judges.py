"""LLM judges: verdict and score parsing, prompts, the order swap and the final-preference rule.

The judges here are test doubles for the ChatModel protocol, labelled as such: canned replies
chosen from the prompt's text. One test runs the embedded SmolLM2 to check the pipeline end to end.
"""

from __future__ import annotations

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.llm import Completion, LLMError, RefusalsAsEmpty, UsageMeter
from iclr26.lfqa_e.data import Comparison
from iclr26.lfqa_e.judges import (
    DEFAULT_MAX_TOKENS,
    JudgeConfig,
    PairVerdict,
    RubricVerdict,
    accuracy,
    final_preference,
    judge,
    judge_pairs,
    judge_rubric,
    pair_prompt,
    parse_score,
    parse_verdict,
    position_bias_summary,
    preference_from_scores,
    rubric_prompt,
)

# ------------------------------------------------------------------ the verdict parser

EN_REPLIES = [
    ("Verdict: Response 1 is better", "response_1"),
    ("Verdict: Response 2 is better", "response_2"),
    ("Verdict: the two responses are equally good", "equal"),
    ("Therefore, [Response 1] is better.", "response_1"),
    ("Therefore, [Response 2] is better.", "response_2"),
    ("Therefore, [Both responses are equal].", "equal"),
    ("**Verdict:** Response 2", "response_2"),
    ("**Response 1** is better.", "response_1"),
    ("Response **2** is clearly better!!", "response_2"),
    ("RESPONSE 1 IS BETTER", "response_1"),
    ("response one is slightly better", "response_1"),
    ("Response two wins.", "response_2"),
    ("The first response is better.", "response_1"),
    ("I think the second one is the better one.", "response_2"),
    ("The second response is superior.", "response_2"),
    ("Both are equal.", "equal"),
    ("It's a tie.", "equal"),
    ("tie", "equal"),
    ("Neither response is better than the other.", "equal"),
    ("Final verdict: equal", "equal"),
    ("They are roughly equal in quality.", "equal"),
    ("Response 1 and Response 2 are equally good.", "equal"),
    ("Response 1.", "response_1"),
    ("2", "response_2"),
    ("Verdict: [Response 1]", "response_1"),
    ("I would choose Response 2.", "response_2"),
    ("I'd go with Response 2.", "response_2"),
    ("Final answer: 1", "response_1"),
    ("The better response is Response 2.", "response_2"),
    ("Response 1 (the longer one) is better.", "response_1"),
    ("response_2 is better", "response_2"),
    ("Response 1 is the same length as Response 2, but Response 2 is better", "response_2"),
    ("I prefer the first answer over the second.", "response_1"),
    ("Response 2 is better than Response 1.", "response_2"),
    ("Response 1 is worse than Response 2.", "response_2"),
    ("Response 2 > Response 1", "response_2"),
    ("Response #1 is better", "response_1"),
    ("Response 2 is the winner", "response_2"),
    # verdict not on the last line
    ("Verdict: Response 2 is better\n\nThe reference stresses X, which Response 2 keeps.", "response_2"),
    # contradictory mentions: the last explicit verdict wins
    (
        "Response 1 is better in tone.\nHowever, Response 2 is better overall.\nVerdict: Response 2",
        "response_2",
    ),
    ("Verdict: Response 2\nOn reflection, Response 1 is better.", "response_1"),
    ("Response 1 is better at first glance. But both responses are equal.", "equal"),
    (
        "Response 1 covers the causes; Response 2 misses them.\nBoth are fluent.\n"
        "Therefore, Response 1 is better.",
        "response_1",
    ),
    # analysis that names responses but gives no verdict
    ("Response 1 covers the causes; Response 2 misses them.", None),
    ("Both responses are good.", None),
    ("Response 1 is not better than Response 2.", None),
    ("The lengths are equal in length... hard to say", None),
    ("", None),
    ("   \n ", None),
    ("I cannot judge this.", None),
]


@pytest.mark.parametrize(("reply", "want"), EN_REPLIES)
def test_english_verdicts(reply, want):
    assert parse_verdict(reply, "en") == want


ZH_REPLIES = [
    ("因此，【回答一】更优秀", "response_1"),
    ("因此，【回答二】更优秀。", "response_2"),
    ("因此，【两个回答相同】", "equal"),
    ("结论：回答一更好", "response_1"),
    ("结论：回答二更好", "response_2"),
    ("结论：两个回答相同", "equal"),
    ("**回答二**更优秀", "response_2"),
    ("第一个回答更好。", "response_1"),
    ("第二个回答更贴近参考答案。", "response_2"),
    ("两个回答不相上下。", "equal"),
    ("二者质量相当", "equal"),
    ("回答一和回答二差不多", "equal"),
    ("回答二比回答一更好", "response_2"),
    ("回答一不如回答二", "response_2"),
    ("回答一优于回答二。", "response_1"),
    ("回答1更好", "response_1"),
    ("结论：回答二", "response_2"),
    ("回答二", "response_2"),
    ("我认为回答二更优秀！", "response_2"),
    ("回答一覆盖了要点，回答二遗漏了原因。\n因此，【回答一】更优秀\n", "response_1"),
    ("回答一更优秀。\n但仔细比较后，回答二更好。", "response_2"),
    ("结论：回答一更好\n\n补充：回答一保留了参考答案的关键结论。", "response_1"),
    ("综上所述，回答二更胜一筹。", "response_2"),
    ("相比回答二，回答一更好", "response_1"),
    ("回答一和回答二相比，回答二更优秀", "response_2"),
    ("我认为两者不相上下。", "equal"),
    ("因此，回答一。", "response_1"),
    ("回答一覆盖了要点，回答二遗漏了原因。", None),
    ("所以回答一的覆盖更少。", None),
    ("", None),
    # a judge may answer in the other language
    ("Response 2 is better", "response_2"),
]


@pytest.mark.parametrize(("reply", "want"), ZH_REPLIES)
def test_chinese_verdicts(reply, want):
    assert parse_verdict(reply, "zh") == want


def test_english_replies_to_a_chinese_prompt_and_back():
    assert parse_verdict("因此，【回答二】更优秀", "en") == "response_2"
    assert parse_verdict("两个回答相同", "en") == "equal"


def test_parse_verdict_rejects_an_unknown_language():
    with pytest.raises(ConfigError, match="language"):
        parse_verdict("Response 1 is better", "fr")


@pytest.mark.parametrize(
    ("reply", "want"),
    [
        ("The answer is faithful.\nScore: 4", 4),
        ("Score: **5**", 5),
        ("**Score:** 3/5", 3),
        ("Feedback: misses two points. [RESULT] 2", 2),
        ("Score 1 would mean a contradiction; this deserves more.\nScore: 3", 3),
        ("It deserves a score of 4 out of 5.", 4),
        ("评语：遗漏了要点。\n评分：2", 2),
        ("评分：４", 4),
        ("得分：5分", 5),
        ("Rating: 1", 1),
        ("3", 3),
        ("Score: 7", None),
        ("Score: 0", None),
        ("Score: 8/10", None),
        ("Score: 3.5", None),
        ("Score: 4\nOn reflection, Score: 9", None),
        ("A solid answer overall.", None),
        ("", None),
        ('The answer to the question "How does it work?" is:  The answer is 5.', 5),  # SmolLM2's shape
        ("It makes 3 points and deserves 4.", None),  # two numbers and no cue: no score
        ("The answer is 9.", None),
        ("The answer is 2.5.", None),
    ],
)
def test_scores(reply, want):
    assert parse_score(reply) == want


# ------------------------------------------------------------------ the preference rules


@pytest.mark.parametrize(
    ("forward", "backward", "want"),
    [
        ("response_a", "response_a", "response_a"),
        ("response_b", "response_b", "response_b"),
        ("same", "same", "same"),
        ("response_a", "response_b", "same"),  # order-inconsistent: no stable preference
        ("response_a", "same", "same"),
        ("response_b", None, "response_b"),  # one order failed to parse: the other decides
        (None, "response_a", "response_a"),
        (None, None, None),
    ],
)
def test_final_preference(forward, backward, want):
    assert final_preference(forward, backward) == want


def test_preference_from_scores():
    assert preference_from_scores(4, 2) == "response_a"
    assert preference_from_scores(1, 5) == "response_b"
    assert preference_from_scores(3, 3) == "same"
    assert preference_from_scores(None, 3) is None


# ------------------------------------------------------------------ test doubles


class ScriptedJudge:
    """A test double for the ChatModel protocol: `answer(prompt) -> reply`, or an LLMError to raise."""

    supports_images = supports_json_schema = supports_logprobs = False

    def __init__(self, answer):
        self.name, self.usage, self.answer, self.calls = "scripted", UsageMeter(), answer, []

    def chat(self, messages, **kw):
        prompt = messages[-1]["content"]
        self.calls.append((prompt, kw))
        reply = self.answer(prompt)
        if isinstance(reply, Exception):
            raise reply
        return [Completion(reply, finish_reason="stop")]


def shown(prompt: str) -> tuple[str, str]:
    """The responses a pairwise prompt shows first and second (either language)."""
    one, two = ("## 回答一", "## 回答二") if "## 回答一" in prompt else ("## Response 1", "## Response 2")
    first = prompt.split(one, 1)[1].split(two, 1)[0]
    second = prompt.split(two, 1)[1].split("\n\n", 2)[0]
    return first.strip(), second.strip()


def keyword_judge(keyword: str = "GOOD") -> ScriptedJudge:
    """Prefers the response holding `keyword`, wherever it is shown; a tie when neither or both do."""

    def answer(prompt: str) -> str:
        first, second = shown(prompt)
        zh = "## 回答一" in prompt
        if (keyword in first) == (keyword in second):
            return "结论：两个回答相同" if zh else "Verdict: the two responses are equally good"
        n = 1 if keyword in first else 2
        return (
            f"分析……\n因此，【回答{'一二'[n - 1]}】更优秀"
            if zh
            else f"Some analysis.\nVerdict: Response {n} is better"
        )

    return ScriptedJudge(answer)


def first_judge() -> ScriptedJudge:
    """Always prefers whatever is shown first: pure position bias."""
    return ScriptedJudge(
        lambda p: "因此，【回答一】更优秀" if "## 回答一" in p else "**Response 1** is better."
    )


def comparisons() -> list[Comparison]:
    return [
        Comparison(
            "1", "Why is the sky blue?", "Rayleigh scattering.", "GOOD: scattering", "the sun", "response_a"
        ),
        Comparison("2", "What causes tides?", "The moon's gravity.", "wind", "GOOD: gravity", "response_b"),
        Comparison("3", "Boiling point of water?", "100 C at sea level.", "hot", "warm", "same"),
        Comparison(
            "4", "天空为什么是蓝色的？", "瑞利散射。", "阳光", "GOOD：散射", "response_b", language="zh"
        ),
    ]


# ------------------------------------------------------------------ prompts


@pytest.mark.parametrize("kind", ["pairwise", "reasoning"])
def test_pair_prompt_shows_question_reference_and_both_orders(kind):
    c = comparisons()[0]
    cfg = JudgeConfig(kind=kind)
    fwd, back = pair_prompt(c, cfg), pair_prompt(c, cfg, swapped=True)
    for p in (fwd, back):
        assert c.question in p and c.reference in p and "Verdict: Response 1 is better" in p
    assert shown(fwd) == (c.response_a, c.response_b)
    assert shown(back) == (c.response_b, c.response_a)
    assert ("step by step" in fwd) == (kind == "reasoning")


def test_reference_free_prompts_omit_the_reference():
    c = comparisons()[0]
    for p in (
        pair_prompt(c, JudgeConfig(kind="pairwise", use_reference=False)),
        rubric_prompt(c, c.response_a, JudgeConfig(kind="rubric", use_reference=False)),
    ):
        assert c.question in p and c.reference not in p and "Reference answer" not in p


def test_context_is_shown_only_when_asked():
    c = Comparison("x", "Q?", "ref", "a", "b", "same", context="PASSAGE ABOUT Q")
    assert "PASSAGE ABOUT Q" not in pair_prompt(c, JudgeConfig(kind="pairwise"))
    assert "PASSAGE ABOUT Q" in pair_prompt(c, JudgeConfig(kind="pairwise", use_context=True))


def test_chinese_comparisons_get_chinese_prompts():
    c = comparisons()[3]
    p = pair_prompt(c, JudgeConfig(kind="reasoning"))
    assert "## 回答一" in p and "结论：两个回答相同" in p and c.reference in p and "Response 1" not in p
    r = rubric_prompt(c, c.response_b, JudgeConfig(kind="rubric"))
    assert "评分：N" in r and c.response_b in r and "Score" not in r


def test_rubric_prompt_grades_one_response():
    c = comparisons()[0]
    p = rubric_prompt(c, c.response_b, JudgeConfig(kind="rubric"))
    assert c.response_b in p and c.response_a not in p and c.reference in p and '"Score: N"' in p


# ------------------------------------------------------------------ judging, order swap


def test_a_judge_that_always_prefers_the_first_response_is_inconsistent():
    cs = comparisons()
    verdicts = judge_pairs(first_judge(), cs, JudgeConfig(kind="pairwise"))
    assert [v.forward for v in verdicts] == ["response_a"] * 4
    assert [v.backward for v in verdicts] == ["response_b"] * 4
    assert all(v.consistent is False and v.preference == "same" for v in verdicts)
    s = position_bias_summary(verdicts, cs)
    assert s["consistency_pct"] == 0.0 and s["first_position_pct"] == 100.0
    assert s["forward_accuracy_pct"] == 25.0 and s["backward_accuracy_pct"] == 50.0
    assert s["accuracy_pct"] == 25.0 and s["failure_pct"] == 0.0 and s["same_pct"] == 100.0


def test_a_judge_that_follows_content_is_consistent_in_both_languages():
    cs = comparisons()
    model = keyword_judge()
    verdicts = judge_pairs(model, cs, JudgeConfig(kind="reasoning", max_tokens=64, max_concurrency=2))
    assert [v.preference for v in verdicts] == ["response_a", "response_b", "same", "response_b"]
    assert all(v.consistent for v in verdicts)
    assert verdicts[0].positions == ("response_1", "response_2")  # a first, then b first
    assert "Response 1" in verdicts[0].replies[0] and "Response 2" in verdicts[0].replies[1]
    assert "回答" in verdicts[3].replies[0]
    assert len(model.calls) == 8 and all(
        kw == {"max_tokens": 64, "temperature": 0.0} for _, kw in model.calls
    )
    s = position_bias_summary(verdicts, cs)
    assert s["accuracy_pct"] == s["forward_accuracy_pct"] == s["backward_accuracy_pct"] == 100.0
    assert s["consistency_pct"] == 100.0 and s["first_position_pct"] == 50.0  # 3 of 6 decided are first


def test_one_order_asked_when_both_orders_is_off():
    cs = comparisons()
    model = first_judge()
    verdicts = judge_pairs(model, cs, JudgeConfig(kind="pairwise", both_orders=False))
    assert len(model.calls) == 4 and [v.preference for v in verdicts] == ["response_a"] * 4
    assert all(v.backward is None and v.consistent is None and len(v.replies) == 1 for v in verdicts)
    s = position_bias_summary(verdicts, cs)
    assert s["backward_accuracy_pct"] is None and s["consistency_pct"] is None and s["accuracy_pct"] == 25.0


def test_default_budgets_by_kind():
    model = keyword_judge()
    judge_pairs(model, comparisons()[:1], JudgeConfig(kind="pairwise"))
    assert {kw["max_tokens"] for _, kw in model.calls} == {DEFAULT_MAX_TOKENS["pairwise"]} == {32}
    assert JudgeConfig(kind="reasoning").budget == 384 and JudgeConfig(max_tokens=10).budget == 10


def test_an_unparsable_order_leaves_the_other_to_decide():
    def answer(prompt):
        first, _ = shown(prompt)
        return "Response 1 is better" if "GOOD" in first else "I am not sure."

    verdicts = judge_pairs(ScriptedJudge(answer), comparisons()[:2], JudgeConfig(kind="pairwise"))
    assert [v.preference for v in verdicts] == ["response_a", "response_b"]
    assert verdicts[0].positions == ("response_1", None) and verdicts[0].consistent is None
    assert position_bias_summary(verdicts, comparisons()[:2])["failure_pct"] == 50.0


def test_refused_requests_are_parse_failures_not_crashes():
    cs = comparisons()

    def answer(prompt):
        return LLMError("server returned an error: request exceeds the available context size")

    verdicts = judge_pairs(ScriptedJudge(answer), cs, JudgeConfig(kind="reasoning"))
    assert all(v.preference is None and v.replies == ("", "") and v.refused == 2 for v in verdicts)
    s = position_bias_summary(verdicts, cs)
    assert s["failure_pct"] == 100.0 and s["pair_failure_pct"] == 100.0 and s["refused"] == 8
    assert s["accuracy_pct"] == 0.0 and s["consistency_pct"] is None and s["first_position_pct"] is None


def test_a_refused_order_is_counted_and_the_other_decides():
    def answer(prompt):
        first, _ = shown(prompt)
        return LLMError("prompt too long") if "GOOD" not in first else "Verdict: Response 1 is better"

    guard = RefusalsAsEmpty(ScriptedJudge(answer))
    verdicts = judge_pairs(guard, comparisons()[:2], JudgeConfig(kind="pairwise"))
    assert [v.preference for v in verdicts] == ["response_a", "response_b"]
    assert [v.refused for v in verdicts] == [1, 1] and guard.refused == 2


def test_rubric_judge_compares_the_two_scores():
    cs = comparisons()

    def answer(prompt):
        graded = (
            prompt.split("## Answer to grade\n", 1)[-1].split("## 待评分的回答\n", 1)[-1].split("\n\n")[0]
        )
        if "GOOD" in graded:
            return "Faithful and complete.\nScore: 5" if "Score" in prompt else "评语：完整。\n评分：5"
        return "Misses the point.\nScore: 2" if "Score" in prompt else "评语：偏题。\n评分：2"

    model = ScriptedJudge(answer)
    verdicts = judge_rubric(model, cs, JudgeConfig(kind="rubric"))
    assert all(isinstance(v, RubricVerdict) for v in verdicts)
    assert [(v.score_a, v.score_b) for v in verdicts] == [(5, 2), (2, 5), (2, 2), (2, 5)]
    assert [v.preference for v in verdicts] == ["response_a", "response_b", "same", "response_b"]
    assert len(model.calls) == 8 and {kw["max_tokens"] for _, kw in model.calls} == {384}
    s = position_bias_summary(verdicts, cs)
    assert s["accuracy_pct"] == 100.0 and s["failure_pct"] == 0.0 and s["forward_accuracy_pct"] is None


def test_a_missing_score_leaves_the_pair_unjudged():
    model = ScriptedJudge(lambda p: "Score: 4" if "GOOD" in p.split("## Answer to grade")[1] else "no idea")
    (v,) = judge_rubric(model, comparisons()[:1])
    assert (v.score_a, v.score_b, v.preference) == (4, None, None)
    assert position_bias_summary([v], comparisons()[:1])["failure_pct"] == 50.0


def test_judge_dispatches_on_kind():
    cs = comparisons()[:2]
    assert all(isinstance(v, PairVerdict) for v in judge(keyword_judge(), cs, JudgeConfig(kind="pairwise")))
    rubric = ScriptedJudge(lambda p: "Score: 3")
    assert all(isinstance(v, RubricVerdict) for v in judge(rubric, cs, JudgeConfig(kind="rubric")))
    with pytest.raises(ConfigError, match="judge_rubric"):
        judge_pairs(rubric, cs, JudgeConfig(kind="rubric"))
    with pytest.raises(ConfigError, match="judge_pairs"):
        judge_rubric(rubric, cs, JudgeConfig(kind="pairwise"))
    assert judge_pairs(rubric, []) == []


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"kind": "pointwise"}, "JudgeConfig.kind"),
        ({"max_tokens": 0}, "JudgeConfig.max_tokens"),
        ({"max_tokens": 3.5}, "JudgeConfig.max_tokens"),
        ({"max_concurrency": 0}, "JudgeConfig.max_concurrency"),
        ({"use_reference": "no"}, "JudgeConfig.use_reference"),
        ({"both_orders": 1}, "JudgeConfig.both_orders"),
    ],
)
def test_config_errors_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        JudgeConfig(**kwargs)


def test_bad_inputs_are_named():
    with pytest.raises(ConfigError, match=r"comparisons\[1\]"):
        judge_pairs(keyword_judge(), [comparisons()[0], "not a comparison"])  # type: ignore[list-item]
    bad = Comparison("x", "Q", "R", "a", "b", "same", language="fr")
    with pytest.raises(ConfigError, match=r"comparisons\[0\]\.language"):
        judge_pairs(keyword_judge(), [bad])
    with pytest.raises(ValueError, match="predictions"):
        accuracy(["response_a"], comparisons())
    with pytest.raises(ValueError, match=r"predictions\[0\]"):
        accuracy(["response_1"], comparisons()[:1])


# ------------------------------------------------------------------ the real embedded model


def test_pipeline_runs_with_smollm2(smollm2):
    """SmolLM2-135M is weak: only the pipeline and its failure counts are checked, not accuracy."""
    cs = comparisons()[:2]
    verdicts = judge_pairs(smollm2, cs, JudgeConfig(kind="pairwise", max_tokens=8, max_concurrency=1))
    assert len(verdicts) == 2 and all(len(v.replies) == 2 for v in verdicts)
    positions = [parse_verdict(r, "en") for v in verdicts for r in v.replies]
    assert positions == [p for v in verdicts for p in v.positions]
    s = position_bias_summary(verdicts, cs)
    assert s["failure_pct"] == pytest.approx(100 * positions.count(None) / 4, abs=0.01)
    assert s["refused"] == 0


# ------------------------------------------------------------------ the log-prob judge


class LogprobJudge:
    """A test double: after the verdict prefix, the log-probs of "1" and "2" favour the response
    holding `keyword` by `gap` nats (equal when neither or both hold it)."""

    supports_images = supports_json_schema = False
    supports_logprobs = True

    def __init__(self, keyword: str = "GOOD", gap: float = 1.0):
        self.name, self.usage, self.keyword, self.gap, self.calls = "scripted", UsageMeter(), keyword, gap, []

    def chat(self, messages, **kw):
        from iclr26.core.llm import TokenLogprob

        self.calls.append(kw)
        first, second = shown(messages[-1]["content"])
        one = -1.0 + (self.gap if self.keyword in first else 0.0)
        two = -1.0 + (self.gap if self.keyword in second else 0.0)
        top = ((" 1", one), (" 2", two), ("The", -5.0))
        best = max(top, key=lambda t: t[1])
        return [Completion(best[0], "length", (TokenLogprob(best[0], best[1], top),))]


def test_logprob_judge_reads_the_verdict_token():
    from iclr26.lfqa_e.judges import judge_logprob, verdict_from_logprobs

    comps = [
        Comparison("1", "q", "r", "GOOD answer", "bad answer", "response_a"),
        Comparison("2", "q", "r", "bad answer", "GOOD answer", "response_b"),
        Comparison("3", "q", "r", "bad answer", "bad too", "same"),
    ]
    model = LogprobJudge(gap=1.0)
    got = judge_logprob(model, comps, margin=0.1)
    assert [v.preference for v in got] == ["response_a", "response_b", "same"]
    assert all(v.consistent for v in got)
    assert model.calls[0]["prefix"] == "Verdict: Response" and model.calls[0]["max_tokens"] == 1
    assert model.calls[0]["logprobs"] and len(model.calls) == 6  # both orders
    # a gap inside the margin is a tie; no label token among the alternatives is no verdict
    assert [v.preference for v in judge_logprob(LogprobJudge(gap=0.05), comps, margin=0.1)] == ["same"] * 3
    assert verdict_from_logprobs(Completion("x", logprobs=None), "en", 0.1) is None
    assert verdict_from_logprobs(Completion("x", logprobs=()), "en", 0.1) is None
    with pytest.raises(ConfigError, match="kind 'pairwise'"):
        judge_logprob(model, comps, JudgeConfig(kind="reasoning"))
