"""`experiment=structure`: GLoW's dual-scale structure without language, as a study (issue 60).

The scripted noisy-walkthrough policy (`scripted.noisy_walkthrough`: the walkthrough's next command with
probability p, else a random valid action; scripted, not an LLM) plays every game under four memory
structures at the same env-step budget (`scripted.PLAYERS`): frontier selection with multi-path
advantages (the method), frontier selection alone, uniform Go-Explore and no memory; beside them the
floors, uniform random valid actions and the no-op agent. The units are game × p × seed. The claim,
named before the run: `frontier_mar` beats uniform Go-Explore and no memory on the normalised max
score, paired over the units, random play its floor; the view repeats the same rule (`core.claim.judge`)
within each p.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim, judge
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit
from iclr26.glow import reference
from iclr26.glow.config import GlowConfig
from iclr26.glow.env import TextGame
from iclr26.glow.explore import random_agent
from iclr26.glow.scripted import PLAYERS, play

ARMS = (
    Arm("frontier_mar", "method"),
    Arm("frontier", "baseline"),
    Arm("go_explore", "baseline"),
    Arm("no_memory", "baseline"),
    Arm("random", "floor", floor="random action"),
    Arm("noop", "floor", floor="no-op"),
)
BASELINES = ("go_explore", "no_memory")
"""the claim's baselines, named before the run (the issue's comparison); `frontier` is the ablation"""
LABEL = "normalised max score per game × p × seed, same scripted policy and env-step budget"


def structure_study(cfg: GlowConfig, paths: Sequence[Path]) -> Study:
    """The study: the arms above, units game × p × seed, the claim on `normalised`."""
    units = [
        Unit(f"{path.stem}/p{p:g}/s{s}", s, {"game": str(path), "p": float(p)})
        for path in paths
        for p in cfg.walk_p
        for s in range(cfg.seeds)
    ]
    claim = Claim(
        "normalised", "frontier_mar", BASELINES, interval="bootstrap", floor_arm="random", label=LABEL
    )
    return Study("glow-structure", ARMS, units, functools.partial(_measure, cfg), claims=[claim],
                 metrics=("normalised", "solved", "steps_used"), config=cfg,
                 views=functools.partial(_views, cfg))  # fmt: skip


def _measure(cfg: GlowConfig, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One seeded run of the arm on the unit's game at the unit's p."""
    path, p = Path(unit.params["game"]), float(unit.params["p"])
    rng = np.random.default_rng(derive_seed(unit.seed, arm.name, path.name, f"{p:g}"))
    walk = arm.name in PLAYERS
    with TextGame(path, step_budget=cfg.step_budget, seed=unit.seed, walkthrough=walk) as game:
        game.require_scored()
        if arm.name == "random":
            result = random_agent(game, cfg.step_budget, rng, episode_steps=cfg.random_episode_steps)
        elif arm.name == "noop":
            result = reference.play("noop", reference.NOOP, game, cfg.step_budget)
        else:
            result = play(arm.name, game, p, cfg.step_budget, rng, segment_steps=cfg.explore_steps,
                          episode_steps=cfg.random_episode_steps, n_rollouts=cfg.glow.n_rollouts,
                          k=cfg.glow.k)  # fmt: skip
    return {
        "normalised": float(result.normalised_score),
        "solved": int(result.max_score >= result.game_max_score > 0),
        "steps_used": int(result.steps_used),
        "max_score": int(result.max_score),
        "game_max_score": int(result.game_max_score),
        "game": path.stem,
        "p": p,
        **{k: int(v) for k, v in result.details.items() if isinstance(v, int)},
    }


def per_p_table(result: StudyResult) -> Table:
    """Per p: each arm's mean normalised max score and solved share, and the claim judged within p
    (the one rule, `core.claim.judge`, on that p's units)."""
    claim = result.study.claims[0]
    ps = sorted({float(u.params["p"]) for u in result.study.units})
    arms = [a.name for a in result.study.arms]
    rows = []
    for p in ps:
        keys = {u.key for u in result.study.units if float(u.params["p"]) == p}
        vals = {a: {k: v for k, v in result.values(a, "normalised").items() if k in keys} for a in arms}
        solved = {a: {k: v for k, v in result.values(a, "solved").items() if k in keys} for a in arms}
        for b in claim.baselines:
            check = judge(claim, b, vals[claim.method], vals[b], vals["random"])
            interval = (
                "" if check.interval is None else f"[{check.interval[0]:+.3f}, {check.interval[1]:+.3f}]"
            )
            means = [round(float(np.mean(list(vals[a].values()))), 3) if vals[a] else None for a in arms]
            solved_share = round(float(np.mean(list(solved[claim.method].values()))), 3)
            rows.append([f"{p:g}", b, *means, solved_share, check.verdict, check.n, interval])
    cols = [
        "p",
        "claim baseline",
        *arms,
        "frontier_mar solved share",
        "verdict",
        "pairs",
        "difference interval",
    ]
    caption = (
        "mean normalised max score per arm over the games and seeds at each p; the verdict is core's one "
        "rule for frontier_mar against the named baseline within that p (paired bootstrap 95%, random "
        "play the floor)"
    )
    return Table("Memory structure with a noisy-walkthrough policy, per p", cols, rows, caption=caption)


def per_game_table(result: StudyResult) -> Table:
    """Each game's mean normalised max score per arm, over p and seeds."""
    arms = [a.name for a in result.study.arms]
    games = list(dict.fromkeys(Path(u.params["game"]).stem for u in result.study.units))
    rows = []
    for g in games:
        keys = {u.key for u in result.study.units if Path(u.params["game"]).stem == g}
        row: list[Any] = [g]
        for a in arms:
            v = [x for k, x in result.values(a, "normalised").items() if k in keys]
            row.append(round(float(np.mean(v)), 3) if v else None)
        rows.append(row)
    return Table("Memory structure per game (mean over p and seeds)", ["game", *arms], rows)


def _views(cfg: GlowConfig, result: StudyResult, ctx: RunContext) -> Report:
    if not any(c.metrics for c in result.cells.values()):
        return Report()
    return Report(tables=[per_p_table(result), per_game_table(result)])
