"""Refinement on candidate pools of known quality (`experiment=pools`): does anchor repair beat averaging?

Scripted proposers (`pools.scripted_pool`, no model) give each question a pool whose share of gold
candidates is set by p. On the same pools the arms are:

- `selector` (baseline): the selector alone picks a candidate (the run's model, `ctx.chat_model()`);
- `hsr` (method): HSR repairs every candidate as the anchor with the others as references, then the
  selector picks (the paper's anchor repair);
- `qair` (method): HSR, then QAIR's evaluator scores each candidate and sends failures back with its
  critique, then the selector (the paper's whole refinement);
- floors: `majority` (the majority final answer: averaging), `random_pick` (a uniformly random
  candidate: its expected accuracy is the pool's share of gold), the constant answer A and the
  question copied back; `gold` is the oracle and `no_answer` the null.

The corrector is off in every arm: the pool is the corrected stage. Units are questions × p.
Claims, named before the run: HSR + selector beats majority vote; QAIR beats majority vote and the
selector alone (accuracy, paired bootstrap). The views add the same comparisons within the pools
that hold exactly one gold candidate, where averaging must fail and only recognising or repairing
the good candidate helps.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim, judge
from iclr26.core.llm.base import ChatModel
from iclr26.core.llm.usage import metered
from iclr26.core.records import markdown_table
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit
from iclr26.sci_refine.config import SciRefineConfig
from iclr26.sci_refine.grading import grade
from iclr26.sci_refine.pools import perturbable, scripted_pool
from iclr26.sci_refine.question import Question
from iclr26.sci_refine.refine import Refiner, majority_index, plain_solver

MODEL_ARMS = ("qair", "hsr", "selector")
"""the arms that call the run's model"""
POOL_ARMS = (
    Arm("hsr", "method"),
    Arm("qair", "method"),
    Arm("selector", "baseline"),
    Arm("majority", "floor", floor="majority answer"),
    Arm("random_pick", "floor", floor="random candidate"),
)
METRICS = ("correct", "tokens", "n_good", "final_good")


def pool_questions(questions: Sequence[Question], n: int) -> list[Question]:
    """The first `n` questions whose answer a scripted proposer can perturb (numeric, multiple choice)."""
    return [q for q in questions if perturbable(q)][:n]


class Models:
    """One model per arm, opened on first use. `hsr` and `qair` share one LLM cache file: QAIR's HSR
    stage sends the HSR arm's requests (same prompts and seeds), so it is answered from the cache and
    QAIR's tokens count only what it adds (evaluator, critiqued retries, selector); the selector arm has
    its own file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: dict[tuple[int, str], ChatModel] = {}

    def get(self, arm: str, ctx: RunContext) -> ChatModel:
        """The run's model for `arm`."""
        with self._lock:
            key = (id(ctx), arm)
            if key not in self._models:
                shared = "refine" if arm in ("hsr", "qair") else arm
                self._models[key] = ctx.chat_model(cache_name=f"llm-cache-pools-{shared}.sqlite")
            return self._models[key]


def _refiner(arm: str, model: ChatModel, cfg: SciRefineConfig) -> Refiner:
    refine = dataclasses.replace(
        cfg.refine, proposers=cfg.pools.size, corrector=False, hsr=arm in ("hsr", "qair"), qair=arm == "qair"
    )
    return Refiner(model, plain_solver(model, cfg.max_tokens, cfg.temperature), refine)


def measure(
    cfg: SciRefineConfig,
    questions: dict[str, Question],
    models: Models,
    arm: Arm,
    unit: Unit,
    ctx: RunContext,
) -> dict[str, Any]:
    """One pool through one arm, graded by the rule grader."""
    from iclr26.sci_refine.system import fixed_answer  # system imports this module lazily

    q, p = questions[unit.params["question"]], float(unit.params["p"])
    pool = scripted_pool(q, p, cfg.pools.size, cfg.seed)
    record: dict[str, Any] = {"p": p, "n_good": pool.n_good, "pool_has_gold": int(pool.n_good > 0)}
    finals: Sequence[str] = ()
    with metered() as meter:
        if arm.name == "majority":
            answer = pool.candidates[majority_index(pool.candidates)]
        elif arm.name == "random_pick":
            answer = random.Random(derive_seed(unit.seed, "pick")).choice(pool.candidates)
        elif arm.name in MODEL_ARMS:
            res = _refiner(arm.name, models.get(arm.name, ctx), cfg).refine(
                q.query, pool.candidates, unit.seed
            )
            answer, finals = (
                res.final,
                list(res.stages.get("qair") or res.stages.get("hsr") or pool.candidates),
            )
            record |= {"chosen": res.chosen, "selector_fallback": bool(res.selector_fallback)}
        else:
            answer = fixed_answer(arm, q)
    g = grade(q, answer, None)
    record |= {
        "correct": int(bool(g.correct)),
        "extracted": g.extracted,
        "tokens": int(meter.total.total_tokens),
        "calls": int(meter.total.calls),
    }
    if finals:  # gold candidates among those the selector chose from (after HSR / QAIR: repaired or broken)
        record["final_good"] = sum(int(bool(grade(q, c, None).correct)) for c in finals)
    return record


def pools_study(cfg: SciRefineConfig, questions: Sequence[Question]) -> Study:
    """The study over questions × p (see the module docstring)."""
    from iclr26.sci_refine.system import REFERENCE_ARMS

    chosen = pool_questions(questions, cfg.pools.n_questions)
    units = [
        Unit(
            f"{q.id}/p={p:g}",
            derive_seed(cfg.seed, "pools", q.id, f"{p:g}") % 1_000_000,
            {"question": q.id, "p": p},
        )
        for q in chosen
        for p in cfg.pools.p
    ]
    claims = [
        Claim("correct", "hsr", ("majority",), interval="bootstrap", floor=0.0,
              label="accuracy (HSR + selector vs majority vote, same pools)"),
        Claim("correct", "qair", ("majority", "selector"), interval="bootstrap", floor=0.0,
              label="accuracy (QAIR vs majority vote and selector alone, same pools)"),
    ]  # fmt: skip
    return Study("sci_refine_pools", [*POOL_ARMS, *REFERENCE_ARMS], units,
                 functools.partial(measure, cfg, {q.id: q for q in chosen}, Models()), claims=claims,
                 metrics=METRICS, pass_metric="correct", config=cfg, seed=cfg.seed,
                 views=functools.partial(_views, cfg), unit_major=True)  # fmt: skip


def _mean(values: Sequence[float]) -> float | str:
    return round(100.0 * float(np.mean(values)), 1) if values else ""


def _by(result: StudyResult, arms: Sequence[str], key: str, levels: Sequence[Any]) -> Table:
    """Accuracy % of every arm within each level of `key` (p, or the gold candidates in the pool)."""
    rows = []
    for level in levels:
        units = [u.key for u in result.study.units if _unit_value(result, u.key, key) == level]
        row: list[Any] = [level, len(units)]
        for arm in arms:
            vals = result.values(arm, "correct")
            row.append(_mean([vals[k] for k in units if k in vals]))
        rows.append(row)
    title = "Accuracy % by p" if key == "p" else "Accuracy % by gold candidates in the pool"
    return Table(title, [key, "pools", *arms], rows)


def _unit_value(result: StudyResult, unit: str, key: str) -> Any:
    cell = result.cells.get(("majority", unit))
    return None if cell is None else cell.metrics.get(key)


def _one_good_checks(result: StudyResult) -> Table:
    """The claims' comparisons within the pools holding exactly one gold candidate (named before the
    run), by the one rule."""
    one = [u.key for u in result.study.units if _unit_value(result, u.key, "n_good") == 1]
    rows = []
    for claim in result.study.claims:
        for base in claim.baselines:
            m = {k: v for k, v in result.values(claim.method, "correct").items() if k in one}
            b = {k: v for k, v in result.values(base, "correct").items() if k in one}
            c = judge(claim, base, m, b)
            rows.append([claim.method, base, c.n, round(100 * c.method_value, 1) if c.n else "",
                         round(100 * c.baseline_value, 1) if c.n else "", c.verdict])  # fmt: skip
    cols = ["method", "baseline", "pools with one gold", "method %", "baseline %", "verdict"]
    return Table("Where the pool holds one gold candidate", cols, rows,
                 caption="the claims' comparisons on this stratum, by core's one rule")  # fmt: skip


def _views(cfg: SciRefineConfig, result: StudyResult, ctx: RunContext) -> Report:
    arms = [a.name for a in POOL_ARMS] + ["constant_A", "copy_question"]
    by_p = _by(result, arms, "p", list(cfg.pools.p))
    by_good = _by(result, arms, "n_good", list(range(cfg.pools.size + 1)))
    one = _one_good_checks(result)
    repaired = []
    for arm in MODEL_ARMS:
        cells = result.records(arm)
        if cells:
            before = float(np.mean([c.metrics["n_good"] for c in cells]))
            after = float(np.mean([c.metrics.get("final_good", 0) for c in cells]))
            tokens = float(np.mean([c.metrics["tokens"] for c in cells]))
            repaired.append([arm, len(cells), round(before, 2), round(after, 2), round(tokens)])
    stages = Table("Gold candidates before and after each arm's stages", ["arm", "pools", "gold in pool",
                   "gold among the selector's choices", "tokens / pool"], repaired,
                   caption="HSR and QAIR rewrite the candidates: more gold after: repaired")  # fmt: skip
    for t in (by_p, by_good, one, stages):
        ctx.log(f"{t.title}\n{markdown_table(t.columns, t.rows)}")
    notes = [
        f"scripted proposers: each returns the gold solution with probability p, else one of two wrong "
        f"answers; pools of {cfg.pools.size}; the corrector is off; rule grader"
    ]
    return Report(tables=[by_p, by_good, one, stages], notes=notes)
