"""The learned-executor experiment (`--set experiment=learned`): single-robot against collaborative
*trained* policies on one common trial set, the CPU analogue of the paper's "trained with CoNavBench,
collaborative policies reduce makespan and improve reliability".

Per seed, two executors (`executor.py`) are behaviour-cloned from the waypoint follower's noise-free
runs (clean demonstrations; they are then evaluated under the actuation noise) with the same number
of (observation, action) pairs and gradient steps: `single_trained` on the legs of the training
split's single-robot episodes (NavCraft-S: s -> t, t -> e), `collab_trained` on the legs of its
collaborative episodes (NavCraft-C: both robots' legs to t, x and e).

Evaluation, on the test split's collaborative episodes (the first `eval_per_house` of each test
house, fixed before any run; under the paper's acceptance rule, so no episode is kept for its
schedule's makespan):
- **step level**: every arm runs the same trials (`trial_set`): each episode's reference legs and
  its solo plan's legs, from their reference starts, with the same step budgets and the same noise
  draws (seeded by the unit's seed, episode, plan and leg); SR overall and by leg length;
- **mission level**: every arm runs each episode with both plans (the primary alone: `solo`; the
  episode's A1 / A2 schedule: `collab`) under the same noise; an arm's own mission is its plan's
  (the single-robot policy: solo; the collaborative one and the rest: collab), success by the run's
  success rule;
- **makespan**: each arm's own plan noise-free, on every evaluated episode, failures included (a
  failed run's makespan is the time it spent).

Units: the training seeds (a cell runs one seed's executor on every evaluated episode): a claim
about what training data gives is replicated by training runs, so the claims pair the two trained
executors over the seeds (core's rule, ± 2 SE), and the per-seed table shows each seed's difference.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.conavbench import agents as A
from iclr26.conavbench.episode import Episode, SubTask
from iclr26.conavbench.executor import (
    LearnedExecutor,
    Leg,
    init_weights,
    legs_of,
    train_executor,
)
from iclr26.conavbench.metrics import episode_success
from iclr26.conavbench.sim import RobotView, SceneIndex, simulate
from iclr26.core import Report, RunContext, Table
from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.claim import Claim
from iclr26.core.intervals import wilson_interval
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit

ARMS = (
    Arm("collab_trained", "method", params={"train": "collaborative", "plan": "collab"}),
    Arm("single_trained", "baseline", params={"train": "single", "plan": "solo"}),
    Arm("follower", "baseline", params={"plan": "collab"}),
    Arm("untrained", "floor", floor="untrained", params={"plan": "collab"}),
    Arm("stay", "floor", floor="stay-in-place", params={"plan": "collab"}),
    Arm("random", "floor", floor="random action", params={"plan": "collab"}),
    Arm("oracle", "oracle", params={"plan": "collab"}),
    Arm("null", "null", params={"plan": "collab"}),
)
"""The arms: the two trained executors (the method and its baseline, named before the run), the
follower they imitate (the hand-written teacher under the same noise; no claim), three floors
(the network untrained; stay-in-place; uniform random actions) and the suite's oracle (the follower,
noise-free: must pass every trial and mission) and null (stops at once, noise-free: must pass none)."""
NOISE_FREE = ("oracle", "null")
LENGTH_BINS = (0.0, 3.0, 6.0, 9.0, 12.0, math.inf)
"""Leg-length bins (metres, the geodesic length of the leg) for SR by leg length."""
PLANS = ("solo", "collab")


def length_bin(metres: float) -> str:
    """The bin label of a leg length ("<3 m", "3-6 m", ..., "12+ m")."""
    for lo, hi in itertools.pairwise(LENGTH_BINS):
        if metres < hi:
            return f"<{hi:g} m" if lo == 0 else (f"{lo:g}+ m" if math.isinf(hi) else f"{lo:g}-{hi:g} m")
    return f"{LENGTH_BINS[-2]:g}+ m"


def plan_of(index: SceneIndex, episode: Episode, plan: str) -> tuple[SubTask, ...]:
    """The solo plan (the primary alone) or the episode's collaborative schedule (its A1 / A2 type)."""
    if plan == "solo":
        return A.solo_plan(index, episode)
    return A.collaborative_plan(index, episode, episode.collab_type or "A1")


def trial_set(episodes: Sequence[Episode], indices: Mapping[str, SceneIndex]) -> list[tuple[str, Leg]]:
    """The common step-level trials, the same for every arm: each episode's reference legs ("ref")
    and its solo plan's legs ("solo"), as (which plan, leg), in episode order."""
    out: list[tuple[str, Leg]] = []
    for ep in episodes:
        out += [("ref", leg) for leg in legs_of(ep)]
        out += [("solo", leg) for leg in legs_of(ep, A.solo_plan(indices[ep.scene], ep))]
    return out


def training_legs(episodes: Sequence[Episode], kind: str) -> list[Leg]:
    """The reference legs of the training split's episodes of `kind` (single or collaborative)."""
    return [leg for ep in episodes if ep.kind == kind for leg in legs_of(ep)]


class Executing(A.NavPolicy):
    """An executor (a `NavPolicy` that follows each sub-task's node) running a chosen plan."""

    def __init__(self, executor: A.NavPolicy, plan: str) -> None:
        self.executor, self.which, self.name = executor, plan, executor.name

    def plan(self, episode: Episode, index: SceneIndex, protocol: str) -> tuple[SubTask, ...]:
        """The executor's own per-episode set-up, then the chosen plan."""
        self.executor.plan(episode, index, protocol)
        return plan_of(index, episode, self.which)

    def begin(self, index, plan, starts) -> None:
        """The executor's reset."""
        self.executor.begin(index, plan, starts)

    def act(self, view: RobotView) -> str:
        """The executor's action."""
        return self.executor.act(view)


def _leg_budget(index: SceneIndex, leg: Leg, ev: A.EvalConfig) -> int:
    return max(
        ev.budget_min, math.ceil(ev.budget_factor * A.expert_steps(index, leg.start, leg.goal, ev.sim))
    )


def run_trials(
    trials: Sequence[tuple[str, Leg]],
    episodes: Mapping[str, Episode],
    indices: Mapping[str, SceneIndex],
    policy: A.NavPolicy,
    ev: A.EvalConfig,
    seed: int,
) -> list[list[Any]]:
    """Each trial alone from its reference start: [episode, plan, j, start, goal, length (m), success]."""
    out = []
    for which, leg in trials:
        index = indices[leg.scene]
        policy.plan(episodes[leg.episode], index, "step")
        run = simulate(index, [leg.subtask()], {"primary": index.pos[leg.start]}, policy,
                       budgets=[_leg_budget(index, leg, ev)], standalone=True, config=ev.sim,
                       seed=derive_seed(seed, leg.episode, which, leg.j))  # fmt: skip
        length = index.tree(leg.goal)[1].get(leg.start, math.inf)
        out.append(
            [leg.episode, which, leg.j, leg.start, leg.goal, round(length, 3), bool(run.subtasks[0].success)]
        )
    return out


def executor_for(
    arm: Arm, weights: Mapping[str, Mapping[str, np.ndarray]], seed: int, cfg: Any
) -> A.NavPolicy:
    """The arm's executor for `seed` (`weights`: by "<train>/<seed>", plus "untrained/<seed>")."""
    if arm.name in ("follower", "oracle"):
        return A.OraclePolicy()
    if arm.name in ("stay", "null"):
        return A.NullPolicy()
    if arm.name == "random":
        return A.RandomPolicy(seed=seed)
    key = f"{arm.params.get('train', 'untrained')}/{seed}"
    return LearnedExecutor(weights[key], cfg.executor, arm.name)


def measure(
    cfg: Any,
    eps: Sequence[Episode],
    indices: Mapping[str, SceneIndex],
    weights: Mapping[str, Mapping[str, np.ndarray]],
    arm: Arm,
    unit: Unit,
    ctx: RunContext,
) -> dict[str, Any]:
    """One arm on one seed's executors over the evaluated episodes: the common step trials, both
    plans' missions under noise, its own plan noise-free (makespan). `passed`: every trial and mission
    succeeded (or, for null, any did)."""
    seed = unit.params["seed"]
    policy = executor_for(arm, weights, seed, cfg)
    ev = dataclasses.replace(cfg.evaluation, seed=seed)
    clean = dataclasses.replace(ev, sim=dataclasses.replace(ev.sim, forward_noise=0.0, turn_noise=0.0))
    if arm.name in NOISE_FREE:
        ev = clean
    rule = ev.success_rule
    trials = run_trials(trial_set(eps, indices), {e.id: e for e in eps}, indices, policy, ev, seed)
    out: dict[str, Any] = {"trials": trials, "step_sr": float(np.mean([t[-1] for t in trials]))}
    outcomes = [t[-1] for t in trials]
    own = arm.params["plan"]
    for which in PLANS:
        run = A.evaluate(eps, indices, Executing(policy, which), protocol="high", config=ev)
        wins = [episode_success(r.subtask_successes, r.final, rule) for r in run.records]
        out[f"{which}_plan_success"] = float(np.mean(wins))
        outcomes += wins
        if which == own:
            out["mission_success"] = out[f"{which}_plan_success"]
    run = A.evaluate(eps, indices, Executing(policy, own), protocol="high", config=clean)
    out["makespan"] = float(np.mean([r.makespan for r in run.records]))
    out["clean_delivered"] = float(
        np.mean([episode_success(r.subtask_successes, r.final, rule) for r in run.records])
    )
    out["passed"] = int(any(outcomes)) if arm.name == "null" else int(all(outcomes))
    return out


def train_all(
    cfg: Any, train: Sequence[Episode], indices: Mapping[str, SceneIndex], ctx: RunContext
) -> tuple[dict[str, dict[str, np.ndarray]], list[list[Any]]]:
    """Both executors per seed (and the untrained network), each saved as a checkpoint that a rerun
    loads; the weights by "<train>/<seed>" and one statistics row per trained executor."""
    sim = dataclasses.replace(cfg.evaluation.sim, forward_noise=0.0, turn_noise=0.0)  # clean demonstrations
    legs = {kind: training_legs(train, kind) for kind in ("single", "collaborative")}
    for kind, got in legs.items():
        if not got:
            raise ValueError(f"the train split has no {kind} episodes; generate more (n_single, n_collab)")
    weights: dict[str, dict[str, np.ndarray]] = {}
    rows: list[list[Any]] = []
    for s in range(cfg.seeds):
        seed = derive_seed(cfg.seed, "executor", s)
        weights[f"untrained/{seed}"] = init_weights(cfg.executor, derive_seed(seed, "init"))
        for kind in ("single", "collaborative"):
            path = Path(ctx.checkpoint_dir) / f"executor_{kind}_{s}.pt"
            if path.is_file():
                state = load_checkpoint(path)
            else:
                w, stats = train_executor(legs[kind], indices, cfg.executor, sim, derive_seed(seed, kind))
                state = {"weights": {k: torch.as_tensor(v) for k, v in w.items()}, "stats": stats}
                save_checkpoint(path, state)
            weights[f"{kind}/{seed}"] = {k: v.numpy().astype(np.float64) for k, v in state["weights"].items()}
            st = state["stats"]
            rows.append([s, kind, len(legs[kind]), int(st["pairs"]), round(100 * st["train_accuracy"], 1),
                         round(100 * st["stop_share"], 2)])  # fmt: skip
            ctx.log(
                f"executor {kind}, seed {s}: {int(st['pairs'])} pairs, accuracy {st['train_accuracy']:.3f}"
            )
    return weights, rows


def study(
    cfg: Any, split: Any, indices: Mapping[str, SceneIndex], weights: Mapping[str, Any], train_rows: list
) -> Study:
    """The learned-executor study: arms `ARMS`, units the training seeds (what a claim about training
    data replicates; each cell runs every evaluated episode), three claims (collab_trained against
    single_trained, paired over the seeds): step-level SR on the common trials, mission success (each
    its own plan) and the noise-free makespan (lower is better)."""
    by_scene: dict[str, list[Episode]] = {}
    for e in split.episodes["test"]:
        if e.kind == "collaborative" and len(by_scene.get(e.scene, [])) < (
            cfg.eval_per_house or len(split.all)
        ):
            by_scene.setdefault(e.scene, []).append(e)
    episodes = [e for eps in by_scene.values() for e in eps]
    if not episodes:
        raise ValueError("the test split has no collaborative episodes; generate more (n_collab, n_scenes)")
    seeds = [derive_seed(cfg.seed, "executor", s) for s in range(cfg.seeds)]
    units = [Unit(f"seed{i}", seed, {"seed": seed}) for i, seed in enumerate(seeds)]
    claims = [
        Claim("step_sr", "collab_trained", ("single_trained",), floor_arm="stay",
              label="step-level SR on the common trials (each episode's reference and solo legs), "
                    "per training seed"),
        Claim("mission_success", "collab_trained", ("single_trained",), floor_arm="stay",
              label="mission success, each policy's own plan (collaborative vs solo), per training seed"),
        Claim("makespan", "collab_trained", ("single_trained",), higher_is_better=False,
              label="makespan (s, noise-free, own plan, every evaluated episode), per training seed"),
    ]  # fmt: skip
    metrics = ("step_sr", "mission_success", "solo_plan_success", "collab_plan_success", "makespan",
               "clean_delivered")  # fmt: skip
    views = functools.partial(_views, cfg, episodes, train_rows)
    cell = functools.partial(measure, cfg, episodes, indices, weights)
    return Study("conavbench-learned", list(ARMS), units, cell, claims=claims, metrics=metrics,
                 pass_metric="passed", config=cfg, seed=cfg.seed, views=views, unit_major=True)  # fmt: skip


def _pct(k: int, n: int) -> str:
    lo, hi = wilson_interval(k, n)
    return f"{100 * k / n:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]" if n else "—"


def _views(
    cfg: Any, episodes: Sequence[Episode], train_rows: list, result: StudyResult, ctx: RunContext
) -> Report:
    """SR by leg length per arm (pooled trials), the mission level per plan, and the training rows."""
    bins = [length_bin(lo + 1e-9) for lo in LENGTH_BINS[:-1]]
    rows, mission = [], []
    for arm in ARMS:
        cells = [c for c in result.records(arm.name) if c.metrics]
        trials = [t for c in cells for t in c.metrics["trials"]]
        if not trials:
            continue
        row: list[Any] = [arm.name, arm.label, _pct(sum(t[-1] for t in trials), len(trials))]
        for b in bins:
            sub = [t[-1] for t in trials if length_bin(t[5]) == b]
            row.append(_pct(sum(sub), len(sub)))
        rows.append(row)
        mission.append([arm.name, arm.params["plan"]]
                       + [round(100 * float(np.mean([c.metrics[m] for c in cells])), 1)
                          for m in ("solo_plan_success", "collab_plan_success", "mission_success",
                                    "clean_delivered")]
                       + [round(float(np.mean([c.metrics["makespan"] for c in cells])), 1)])  # fmt: skip
    first = result.records(ARMS[0].name)
    counts = (
        {b: sum(length_bin(t[5]) == b for t in first[0].metrics["trials"]) for b in bins} if first else {}
    )
    per_seed = []
    for u in result.study.units:
        c, s = result.cells.get(("collab_trained", u.key)), result.cells.get(("single_trained", u.key))
        if c is None or s is None:
            continue
        row = [u.key]
        for m, scale in (("step_sr", 100), ("mission_success", 100), ("makespan", 1)):
            a, b = scale * c.metrics[m], scale * s.metrics[m]
            row += [round(a, 1), round(b, 1), round(a - b, 1)]
        per_seed.append(row)
    tables = [
        Table("Step-level SR on the common trials, by leg length (pooled over the seeds)",
              ["arm", "role", "all legs [95% CI]", *bins], rows,
              caption="every arm runs the same trials (each evaluated episode's reference legs and its solo "
                      "plan's legs) with the same budgets and noise draws; Wilson intervals over trials; "
                      f"trials per bin in one seed: {counts}"),
        Table("Per training seed: collab_trained against single_trained",
              ["seed", "step SR collab", "step SR single", "difference", "mission SR collab",
               "mission SR single", "difference", "makespan collab (s)", "makespan single (s)", "difference"],
              per_seed, caption="the units the claims pair; SR in %"),
        Table("Mission level on the same episodes (mean over the seeds)",
              ["arm", "own plan", "SR, solo plan", "SR, collaborative plan", "SR, own plan",
               "delivered noise-free, own plan", "makespan (s), noise-free, own plan"], mission,
              caption=f"{len(episodes)} test collaborative episodes, the first {cfg.eval_per_house} of each "
                      "test house (paper rule), "
                      "chosen before any run; makespan over every episode, failed runs included"),
        Table("The executors' training (behaviour cloning of the follower)",
              ["seed", "trained on", "legs", "pairs", "train accuracy %", "stop labels %"], train_rows),
    ]  # fmt: skip
    return Report(tables=tables)
