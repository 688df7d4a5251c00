"""Eigen-1's multi-agent refinement (arXiv 2509.21193, Sec. 3.2-3.3): proposers, a corrector on each
solution, hierarchical solution refinement (HSR), quality-aware iterative reasoning (QAIR) and a
selector.

The reasoning calls go through a `Solver`: any callable `(user_text, seed) -> Attempt`, so the same
pipeline runs with no retrieval (`plain_solver`), with the Monitor stack watching every call
(`implicit_solver`) or with the model calling a search tool itself (`explicit_solver`). The evaluator
and the selector are plain calls of the main model.

- proposers: `proposers` independent solutions (paper: 5), each with its own seed;
- corrector: each solution checked and fixed once;
- HSR: every candidate in turn is the anchor, repaired with the other candidates as references;
  the prompt allows only fixes aimed at the anchor's weak points (`prompts.HSR_USER`);
- QAIR: the evaluator scores logic, answer and explanation on 0-5;
  q = 0.2·logic + 0.6·answer + 0.2·explanation (`quality_score`); q ≥ 3 passes, a failure goes back to
  the corrector with the evaluator's suggestion, at most T rounds (`qair_rounds`; the authors' code
  runs one);
- selector: picks one of the final candidates ("Choice: Response k"); an unreadable choice falls back
  to the majority final answer (ties: the lowest index), counted.
"""

from __future__ import annotations

import contextvars
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.jsontext import json_objects
from iclr26.core.llm.base import ChatModel, LLMError, Message
from iclr26.core.llm.usage import Usage, metered
from iclr26.core.validation import check_int
from iclr26.sci_refine import prompts
from iclr26.sci_refine.explicit_rag import ExplicitRAG
from iclr26.sci_refine.grading import extract_final_answer, normalize_text
from iclr26.sci_refine.monitor import ImplicitRAG, Injection

QAIR_WEIGHTS = (0.2, 0.6, 0.2)
"""the paper's weights of logic, answer and explanation in q"""
QAIR_PASS = 3.0
"""the paper's pass threshold on q"""
EVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "logic": {"type": "integer", "minimum": 0, "maximum": 5},
        "answer": {"type": "integer", "minimum": 0, "maximum": 5},
        "explanation": {"type": "integer", "minimum": 0, "maximum": 5},
        "suggestion": {"type": "string"},
    },
    "required": ["logic", "answer", "explanation", "suggestion"],
}
"""the evaluator's JSON reply (sent as a schema when the model supports one)"""


@dataclass(frozen=True)
class Attempt:
    """One reasoning call's output and what it cost."""

    text: str
    """the reasoning, ending (ideally) in 'Answer: ...'"""
    steps: int = 1
    """agent steps (assistant turns) it took"""
    retrieval_calls: int = 0
    """searches run during it (tool calls or Monitor-triggered)"""
    injections: int = 0
    """passages injected into its stream by the Monitor stack"""
    usage: Usage = field(default_factory=Usage)
    """tokens and calls over every role of the call"""
    injected: tuple[Injection, ...] = ()
    """the Monitor stack's injections, with their offsets in `text` (implicit solver only)"""


class Solver(Protocol):
    """A reasoning call: the user text of one task, a seed -> an `Attempt`."""

    def __call__(self, user_text: str, seed: int) -> Attempt: ...


def plain_solver(model: ChatModel, max_tokens: int = 512, temperature: float = 0.7) -> Solver:
    """No retrieval: one chat call per task (the build-up's baseline row)."""

    def solve(user_text: str, seed: int) -> Attempt:
        messages: list[Message] = [
            {"role": "system", "content": prompts.SOLVER_SYSTEM},
            {"role": "user", "content": user_text},
        ]
        with metered() as spent:  # this call's usage, whatever other threads send the model meanwhile
            (c,) = model.chat(messages, n=1, temperature=temperature, max_tokens=max_tokens, seed=seed)
        return Attempt(c.text, usage=spent.total)

    return solve


def implicit_solver(rag: ImplicitRAG, max_tokens: int = 512, temperature: float = 0.7) -> Solver:
    """The Monitor stack watches each call's stream and injects retrieved facts (at most once)."""

    def solve(user_text: str, seed: int) -> Attempt:
        messages: list[Message] = [
            {"role": "system", "content": prompts.SOLVER_SYSTEM},
            {"role": "user", "content": user_text},
        ]
        res = rag.step(messages, max_tokens=max_tokens, temperature=temperature, seed=seed)
        injected = tuple(res.injections)
        return Attempt(res.text, 1, res.retrieval_calls, len(injected), res.usage, injected)

    return solve


def explicit_solver(rag: ExplicitRAG) -> Solver:
    """The model calls the `search` tool itself, in fenced blocks (the explicit-RAG baseline)."""

    def solve(user_text: str, seed: int) -> Attempt:
        res = rag.run(user_text, seed=seed)
        injected = sum(len(m.injections) for m in res.monitored)
        return Attempt("\n".join(res.turns), res.steps, res.searches, injected, res.usage)

    return solve


@dataclass(frozen=True)
class RefineConfig:
    """Which stages run and their sizes (the defaults are the paper's)."""

    proposers: int = 5
    """independent solutions to start from (paper: 5)"""
    corrector: bool = True
    """check and fix each proposal once"""
    hsr: bool = True
    """hierarchical solution refinement: each candidate repaired as the anchor"""
    qair: bool = True
    """quality-aware iterative reasoning: score, and send failures back with a critique"""
    qair_rounds: int = 1
    """T: evaluate-and-retry rounds (the authors' code: 1)"""
    eval_max_tokens: int = 160
    """completion tokens of an evaluator call"""
    select_max_tokens: int = 256
    """completion tokens of the selector call"""
    select_prefill: bool = False
    """prefill the selector's reply with 'Choice: Response' (`prompts.SELECTOR_PREFIX`), so the number
    is its first token; off: the selector checks each response first, as in the paper"""
    parallel_calls: int = 1
    """reasoning calls of one stage sent at once (the proposers, the correctors, the HSR anchors); each
    keeps its seed, so the candidates are those of 1 (one after another)"""

    def __post_init__(self) -> None:
        check_int("proposers", self.proposers, 1, 20)
        check_int("qair_rounds", self.qair_rounds, 1, 10)
        check_int("eval_max_tokens", self.eval_max_tokens, 1)
        check_int("select_max_tokens", self.select_max_tokens, 1)
        check_int("parallel_calls", self.parallel_calls, 1, 64)
        if self.hsr and self.proposers < 2:
            raise ConfigError("hsr needs at least 2 proposers (the anchor and a reference)")


def quality_score(logic: float, answer: float, explanation: float) -> float:
    """q = 0.2·logic + 0.6·answer + 0.2·explanation (QAIR, Sec. 3.3)."""
    w_l, w_a, w_e = QAIR_WEIGHTS
    return w_l * logic + w_a * answer + w_e * explanation


@dataclass(frozen=True)
class Evaluation:
    """The QAIR evaluator's verdict on one solution."""

    logic: float
    """0-5"""
    answer: float
    """0-5"""
    explanation: float
    """0-5"""
    suggestion: str
    """how to improve it"""
    parsed: bool = True
    """False: the reply did not parse (scored 0, so it fails and is retried)"""

    @property
    def q(self) -> float:
        """The weighted quality score."""
        return quality_score(self.logic, self.answer, self.explanation)

    @property
    def passed(self) -> bool:
        """q ≥ 3 (the paper's threshold)."""
        return self.q >= QAIR_PASS


_SCORE_KEYS = ("logic", "answer", "explanation")


def parse_evaluation(text: str) -> Evaluation:
    """The evaluator's JSON (the first {...} in `text`); scores clipped to 0-5; unparseable -> 0s."""
    objects = json_objects(text)
    data = objects[0] if objects else None
    if data is None:
        return Evaluation(0, 0, 0, "", parsed=False)
    scores = []
    for key in _SCORE_KEYS:
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return Evaluation(0, 0, 0, str(data.get("suggestion", "")), parsed=False)
        scores.append(min(max(float(value), 0.0), 5.0))
    return Evaluation(*scores, suggestion=str(data.get("suggestion", "")).strip())


def parse_choice(text: str, n: int) -> int | None:
    """The selector's 0-based choice from its last 'Response k' (1 <= k <= n), else None."""
    found = [int(k) for k in re.findall(r"[Rr]esponse\s*#?\s*(\d+)", text)]
    found = [k for k in found if 1 <= k <= n]
    return found[-1] - 1 if found else None


def majority_index(candidates: Sequence[str]) -> int:
    """The first candidate whose normalised final answer is the most common one."""
    answers = [normalize_text(extract_final_answer(c)) for c in candidates]
    counts = Counter(a for a in answers if a)
    if not counts:
        return 0
    top = max(counts.values())
    return next(i for i, a in enumerate(answers) if a and counts[a] == top)


@dataclass
class RefineResult:
    """Everything one question's pipeline did: the candidates after each stage and the cost."""

    final: str = ""
    """the selected solution"""
    chosen: int = 0
    """its index among the final candidates"""
    stages: dict[str, list[str]] = field(default_factory=dict)
    """candidates after each stage: proposals, corrected, hsr, qair"""
    evaluations: list[list[Evaluation]] = field(default_factory=list)
    """QAIR's verdicts per round, for the candidates evaluated in that round"""
    selector_reply: str = ""
    """the selector's text (empty: one candidate, no selector call)"""
    selector_fallback: bool = False
    """True when the selector's choice was unreadable and the majority answer was taken"""
    attempts: list[tuple[str, Attempt]] = field(default_factory=list)
    """every reasoning call, with its stage"""
    direct_usage: Usage = field(default_factory=Usage)
    """tokens and calls of the evaluator and selector calls (the main model's meter around them)"""

    @property
    def usage(self) -> Usage:
        """Tokens and calls of the whole pipeline: every reasoning call (all roles) plus `direct_usage`."""
        return sum((a.usage for _, a in self.attempts), self.direct_usage)

    @property
    def steps(self) -> int:
        """Agent steps over all reasoning calls, plus one per evaluator and selector call."""
        selector = 0 if self.selector_reply == "" else 1
        return sum(a.steps for _, a in self.attempts) + sum(map(len, self.evaluations)) + selector

    @property
    def retrieval_calls(self) -> int:
        """Searches over all reasoning calls."""
        return sum(a.retrieval_calls for _, a in self.attempts)


class Refiner:
    """The pipeline for one question: propose, correct, HSR, QAIR, select."""

    def __init__(self, model: ChatModel, solve: Solver, config: RefineConfig | None = None) -> None:
        self.model = model
        self.solve = solve
        self.config = config or RefineConfig()

    def run(self, query: str, seed: int = 0) -> RefineResult:
        """Answer `query`; calls are seeded from `seed` (one seed per call)."""
        res = RefineResult()
        seeds = iter(range(seed * 1000, seed * 1000 + 1000))
        call = self._caller(res, seeds)
        task = prompts.PROPOSER_USER.format(query=query)
        candidates = self._stage("proposer", [task] * self.config.proposers, res, seeds)
        res.stages["proposals"] = candidates
        return self._after_proposals(query, candidates, res, seeds, call)

    def refine(self, query: str, candidates: Sequence[str], seed: int = 0) -> RefineResult:
        """The stages after the proposers (corrector, HSR, QAIR, selector) on a given pool of candidates
        (e.g. a scripted proposers' pool of known quality); seeded from `seed` like `run`."""
        if not candidates:
            raise UserError("refine needs at least one candidate")
        if self.config.hsr and len(candidates) < 2:
            raise UserError("hsr needs at least 2 candidates (the anchor and a reference)")
        res = RefineResult()
        seeds = iter(range(seed * 1000, seed * 1000 + 1000))
        res.stages["proposals"] = list(candidates)
        return self._after_proposals(query, list(candidates), res, seeds, self._caller(res, seeds))

    def _caller(self, res: RefineResult, seeds: Iterator[int]) -> Callable[[str, str], str]:
        """One reasoning call of a stage, recorded in `res` with the next seed."""

        def call(stage: str, user_text: str) -> str:
            attempt = self.solve(user_text, next(seeds))
            res.attempts.append((stage, attempt))
            return attempt.text

        return call

    def _stage(self, stage: str, tasks: Sequence[str], res: RefineResult, seeds: Iterator[int]) -> list[str]:
        """One stage's independent reasoning calls, `parallel_calls` at a time; seeds are drawn in task
        order and attempts recorded in task order, so the result does not depend on the parallelism."""
        assigned = [next(seeds) for _ in tasks]
        workers = min(self.config.parallel_calls, len(tasks))
        if workers <= 1:
            attempts = [self.solve(t, s) for t, s in zip(tasks, assigned, strict=True)]
        else:  # each call runs in a copy of this context, so the cell's usage meters see it
            with ThreadPoolExecutor(workers) as pool:
                futures = [
                    pool.submit(contextvars.copy_context().run, self.solve, t, s)
                    for t, s in zip(tasks, assigned, strict=True)
                ]
                attempts = [f.result() for f in futures]
        res.attempts.extend((stage, a) for a in attempts)
        return [a.text for a in attempts]

    def _after_proposals(
        self,
        query: str,
        candidates: list[str],
        res: RefineResult,
        seeds: Iterator[int],
        call: Callable[[str, str], str],
    ) -> RefineResult:
        cfg = self.config
        if cfg.corrector:
            candidates = self._stage("corrector", [self._correct(query, c) for c in candidates], res, seeds)
            res.stages["corrected"] = candidates
        if cfg.hsr:
            tasks = [hsr_prompt(query, candidates, i) for i in range(len(candidates))]
            candidates = self._stage("hsr", tasks, res, seeds)
            res.stages["hsr"] = candidates
        if cfg.qair:
            candidates = self._qair(query, candidates, call, res, seeds)
            res.stages["qair"] = candidates
        before = self.model.usage.total
        res.chosen, res.selector_reply, res.selector_fallback = self._select(query, candidates, next(seeds))
        res.direct_usage += self.model.usage.total - before
        res.final = candidates[res.chosen]
        return res

    def _correct(self, query: str, solution: str, suggestion: str = "") -> str:
        feedback = prompts.CRITIQUE_FEEDBACK.format(suggestion=suggestion) if suggestion else ""
        return prompts.CORRECTOR_USER.format(query=query, solution=solution, feedback=feedback)

    def _qair(
        self,
        query: str,
        candidates: list[str],
        call: Callable[[str, str], str],
        res: RefineResult,
        seeds: Any,
    ) -> list[str]:
        """Score every candidate; failures get a critique and a retry, up to `qair_rounds` rounds."""
        final = list(candidates)
        pending = list(range(len(candidates)))
        for _ in range(self.config.qair_rounds):
            before = self.model.usage.total
            verdicts = [self.evaluate(query, final[i], next(seeds)) for i in pending]
            res.direct_usage += self.model.usage.total - before
            res.evaluations.append(verdicts)
            failed = [(i, v) for i, v in zip(pending, verdicts, strict=True) if not v.passed]
            for i, v in failed:  # failed solutions go back to the corrector with the critique
                final[i] = call("qair", self._correct(query, final[i], v.suggestion))
            pending = [i for i, _ in failed]
            if not pending:
                break
        return final

    def evaluate(self, query: str, solution: str, seed: int) -> Evaluation:
        """One evaluator call (JSON-schema constrained when the model supports it)."""
        messages: list[Message] = [
            {"role": "system", "content": prompts.EVALUATOR_SYSTEM},
            {"role": "user", "content": prompts.EVALUATOR_USER.format(query=query, solution=solution)},
        ]
        kwargs: dict[str, Any] = {"n": 1, "temperature": 0.0, "max_tokens": self.config.eval_max_tokens}
        schema = bool(getattr(self.model, "supports_json_schema", False))
        if schema:
            kwargs["json_schema"] = EVAL_SCHEMA
        else:
            kwargs["prefix"] = prompts.EVALUATOR_PREFIX
        try:
            (c,) = self.model.chat(messages, seed=seed, **kwargs)
        except LLMError:
            return Evaluation(0, 0, 0, "", parsed=False)
        return parse_evaluation(c.text if schema else prompts.EVALUATOR_PREFIX + c.text)

    def _select(self, query: str, candidates: list[str], seed: int) -> tuple[int, str, bool]:
        if len(candidates) == 1:
            return 0, "", False
        responses = "\n\n".join(
            prompts.RESPONSE_BLOCK.format(n=k + 1, solution=c) for k, c in enumerate(candidates)
        )
        messages: list[Message] = [
            {"role": "system", "content": prompts.SOLVER_SYSTEM},
            {"role": "user", "content": prompts.SELECTOR_USER.format(query=query, responses=responses)},
        ]
        prefix = prompts.SELECTOR_PREFIX if self.config.select_prefill else None
        try:
            (c,) = self.model.chat(
                messages,
                n=1,
                temperature=0.0,
                max_tokens=self.config.select_max_tokens,
                seed=seed,
                prefix=prefix,
            )
            reply = (prefix or "") + c.text
        except LLMError as e:
            reply = f"[selector call failed: {e}]"
        choice = parse_choice(reply, len(candidates))
        if choice is None:
            return majority_index(candidates), reply, True
        return choice, reply, False


def hsr_prompt(query: str, candidates: Sequence[str], anchor: int) -> str:
    """The HSR task with `candidates[anchor]` as the anchor and every other candidate as a reference."""
    refs = [c for j, c in enumerate(candidates) if j != anchor]
    references = "\n\n".join(prompts.REFERENCE_BLOCK.format(n=k + 1, solution=c) for k, c in enumerate(refs))
    return prompts.HSR_USER.format(query=query, anchor=candidates[anchor], references=references)
