"""The refinement pipeline's bookkeeping (proposers, corrector, HSR, QAIR, selector) with a scripted
stand-in for the model (not an LLM): which prompts each stage sends, QAIR's weights and threshold, and
the selector's parsing and fallback."""

from __future__ import annotations

import json
from typing import Any

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.llm.base import Completion
from iclr26.core.llm.usage import Usage, UsageMeter
from iclr26.sci_refine import prompts
from iclr26.sci_refine.refine import (
    Attempt,
    Evaluation,
    RefineConfig,
    Refiner,
    hsr_prompt,
    majority_index,
    parse_choice,
    parse_evaluation,
    quality_score,
)


class ScriptedJudge:
    """A scripted stand-in for the evaluator/selector model (not an LLM): replies by prompt kind."""

    supports_images = supports_logprobs = False

    def __init__(self, scores: list[dict[str, Any]], choice: str = "Choice: Response 2", schema: bool = True):
        self.name, self.usage, self.scores, self.choice = "scripted", UsageMeter(), list(scores), choice
        self.supports_json_schema = schema
        self.calls: list[dict[str, Any]] = []

    def chat(self, messages, *, n=1, temperature=0.0, max_tokens=256, seed=None, json_schema=None,
             prefix=None, **_: Any) -> list[Completion]:  # fmt: skip
        user = messages[-1]["content"]
        self.calls.append({"user": user, "schema": json_schema, "prefix": prefix})
        self.usage.record(10, 5)
        if "Score the solution" in user:
            text = json.dumps(self.scores.pop(0))
            return [Completion(text if json_schema else text.removeprefix(prompts.EVALUATOR_PREFIX))]
        return [Completion(self.choice)]


class RecordingSolver:
    """Answers every reasoning call with a numbered solution and records the prompts it got."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, user_text: str, seed: int) -> Attempt:
        self.prompts.append(user_text)
        return Attempt(f"solution {len(self.prompts)}\nAnswer: {len(self.prompts)}", usage=Usage(1, 7, 3))


def test_quality_score_weights_and_threshold() -> None:
    assert quality_score(5, 0, 5) == pytest.approx(2.0)  # the answer carries 0.6 of the weight
    assert quality_score(0, 5, 0) == pytest.approx(3.0)
    assert Evaluation(0, 5, 0, "").passed  # q = 3 passes (q >= 3)
    assert Evaluation(5, 3, 5, "").passed  # 1 + 1.8 + 1 = 3.8 passes
    assert not Evaluation(2, 3, 2, "").passed  # 0.4 + 1.8 + 0.4 = 2.6 fails


def test_parse_evaluation_clips_and_flags_broken_replies() -> None:
    ok = parse_evaluation('noise {"logic": 9, "answer": 4, "explanation": -1, "suggestion": " fix "} tail')
    assert (ok.logic, ok.answer, ok.explanation, ok.suggestion, ok.parsed) == (5, 4, 0, "fix", True)
    for bad in ("no json", '{"logic": "high", "answer": 4, "explanation": 1}', "{broken"):
        assert not parse_evaluation(bad).parsed and not parse_evaluation(bad).passed


def test_hsr_makes_each_candidate_the_anchor_once() -> None:
    cands = ["alpha", "beta", "gamma", "delta", "epsilon"]
    for i, anchor in enumerate(cands):
        text = hsr_prompt("Q?", cands, i)
        anchor_part, refs_part = text.split("Other solutions")
        assert anchor in anchor_part and anchor not in refs_part
        assert all(c in refs_part for j, c in enumerate(cands) if j != i)


def test_pipeline_stages_counts_and_qair_retry() -> None:
    passing = {"logic": 4, "answer": 4, "explanation": 4, "suggestion": "ok"}
    failing = {"logic": 1, "answer": 1, "explanation": 1, "suggestion": "redo the sum"}
    judge = ScriptedJudge([passing, failing, passing, failing, passing, passing, passing])
    solver = RecordingSolver()
    res = Refiner(judge, solver, RefineConfig(proposers=5, qair_rounds=2)).run("What is 1+1?", seed=3)
    stages = [stage for stage, _ in res.attempts]
    # 5 proposals, 5 corrections, 5 HSR repairs, then the two QAIR failures re-corrected once
    assert stages == ["proposer"] * 5 + ["corrector"] * 5 + ["hsr"] * 5 + ["qair"] * 2
    hsr_prompts = solver.prompts[10:15]
    for i, text in enumerate(hsr_prompts):  # anchor i is the i-th corrected solution
        assert f"Solution to improve (the anchor):\n{res.stages['corrected'][i]}" in text
    assert "redo the sum" in solver.prompts[15] and "redo the sum" in solver.prompts[16]
    assert [len(r) for r in res.evaluations] == [5, 2]  # round 2 re-scores only the two retried
    assert res.chosen == 1 and res.final == res.stages["qair"][1] and not res.selector_fallback
    # 17 reasoning calls, 7 evaluations and 1 selector call
    assert res.usage.calls == 17 + 8 and res.usage.prompt_tokens == 17 * 7 + 8 * 10
    assert res.steps == 17 + 7 + 1


def test_selector_parsing_and_majority_fallback() -> None:
    assert parse_choice("I think Response 3... no, Response 1 is right", 5) == 0
    assert parse_choice("Response 9", 5) is None and parse_choice("none", 5) is None
    assert majority_index(["Answer: 4", "Answer: 5", "Answer: 5"]) == 1
    assert majority_index(["", ""]) == 0
    judge = ScriptedJudge([], choice="I cannot decide")
    res = Refiner(judge, RecordingSolver(), RefineConfig(proposers=3, qair=False)).run("Q?")
    assert res.selector_fallback and res.chosen == 0  # every final answer differs: the first wins


def test_evaluator_without_schema_is_prefilled() -> None:
    judge = ScriptedJudge([{"logic": 5, "answer": 5, "explanation": 5, "suggestion": ""}], schema=False)
    v = Refiner(judge, RecordingSolver()).evaluate("Q?", "Answer: 2", seed=0)
    assert v.parsed and v.passed and judge.calls[0]["prefix"] == prompts.EVALUATOR_PREFIX


def test_bad_config_is_named() -> None:
    with pytest.raises(ConfigError, match="proposers"):
        RefineConfig(proposers=0)
    with pytest.raises(ConfigError, match="hsr"):
        RefineConfig(proposers=1)


class SlowSeededSolver:
    """A scripted solver (not a model): its answer is a function of the task and seed; it sleeps, and
    counts the calls in flight at once."""

    def __init__(self) -> None:
        import threading

        self.lock, self.now, self.most = threading.Lock(), 0, 0

    def __call__(self, user_text: str, seed: int) -> Attempt:
        import time

        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.02)
        with self.lock:
            self.now -= 1
        return Attempt(
            f"{hash(user_text) % 97} {seed}\nAnswer: {seed % 3}", usage=Usage(1, len(user_text), 3)
        )


def test_parallel_calls_give_the_serial_candidates() -> None:
    """Proposers, correctors and HSR anchors sent 4 at a time: the same candidates, attempts, seeds and
    usage as one after another, and the calls did overlap."""
    results = {}
    for k in (1, 4):
        judge = ScriptedJudge([])
        solver = SlowSeededSolver()
        cfg = RefineConfig(proposers=4, qair=False, parallel_calls=k)
        results[k] = (Refiner(judge, solver, cfg).run("What is 2+2?", seed=5), solver.most)
    (serial, most1), (parallel, most4) = results[1], results[4]
    assert most1 == 1 and most4 >= 2
    assert parallel.stages == serial.stages and parallel.final == serial.final
    assert [(s, a.text, a.usage) for s, a in parallel.attempts] == [
        (s, a.text, a.usage) for s, a in serial.attempts
    ]
    with pytest.raises(ConfigError, match="parallel_calls"):
        RefineConfig(parallel_calls=0)


def test_selector_prefill_reads_the_number_it_writes() -> None:
    """With select_prefill the reply continues 'Choice: Response', so ' 3' picks the third candidate;
    without it the same ' 3' is unreadable and the majority answer is taken."""
    pool = ["a\nAnswer: 1", "b\nAnswer: 2", "c\nAnswer: 2"]
    for prefill, chosen, fallback in ((True, 2, False), (False, 1, True)):
        judge = ScriptedJudge([], choice=" 3")
        cfg = RefineConfig(proposers=3, corrector=False, hsr=False, qair=False, select_prefill=prefill)
        res = Refiner(judge, RecordingSolver(), cfg).refine("Q?", pool, seed=1)
        assert (res.chosen, res.selector_fallback) == (chosen, fallback)
        assert judge.calls[-1]["prefix"] == (prompts.SELECTOR_PREFIX if prefill else None)
