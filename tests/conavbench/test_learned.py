"""The learned executor and its study: the observation, behaviour cloning that learns, seeded
training, and the gate of the comparison: every arm runs one common trial set."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest

from iclr26.conavbench import agents as A
from iclr26.conavbench import learned
from iclr26.conavbench.config import NavConfig
from iclr26.conavbench.executor import (
    ExecutorConfig,
    LearnedExecutor,
    collect,
    fit,
    init_weights,
    legs_of,
    observe,
    train_executor,
)
from iclr26.conavbench.sim import RobotView, SimConfig
from iclr26.conavbench.splits import build_split
from iclr26.core.config import ConfigError
from iclr26.core.study import Unit

SMALL = ExecutorConfig(samples=2000, steps=400)
LONGER = ExecutorConfig(samples=2000, steps=1500)


@functools.cache
def _split():
    split = build_split(0, n_single=24, n_collab=24, n_scenes=6, jobs=1)
    return split, A.index_scenes(split.scenes)


def test_observation_sees_the_floor_and_points_along_the_route() -> None:
    split, indices = _split()
    ep = next(e for e in split.all if e.kind == "collaborative")
    index = indices[ep.scene]
    leg = legs_of(ep)[0]
    x, y = index.pos[leg.start]
    route = index.waypoints(x, y, leg.goal)
    px, py = next((p[0], p[1]) for p in route if math.hypot(p[0] - x, p[1] - y) >= SMALL.lookahead)
    heading = round(math.degrees(math.atan2(py - y, px - x)) / 30) % 12
    view = RobotView("primary", x, y, heading, 0, leg.subtask(), False, 0.0)
    obs = observe(index, view, leg.goal, SMALL)
    g = SMALL.grid
    assert obs.shape == (SMALL.n_features,)
    assert obs[(g * g) // 2] == 1.0  # the robot stands on walkable floor
    assert 0 < obs[: g * g].sum() <= g * g
    sin, cos = obs[g * g], obs[g * g + 1]
    assert cos > math.cos(math.radians(16)) and abs(sin) < math.sin(math.radians(16))  # faces its look-ahead
    turned = observe(index, RobotView("primary", x, y, (heading + 6) % 12, 0, leg.subtask(), False, 0.0),
                     leg.goal, SMALL)  # fmt: skip
    assert turned[g * g + 1] < -0.9  # turned round, the route is behind it


def test_legs_are_the_move_to_sub_tasks_from_their_reference_starts() -> None:
    split, indices = _split()
    ep = next(e for e in split.all if e.kind == "collaborative")
    ref = legs_of(ep)
    assert [leg.j for leg in ref] == [j for j, s in enumerate(ep.subtasks) if s.action == "move_to"]
    assert len(ref) == 4 and len(legs_of(ep, A.solo_plan(indices[ep.scene], ep))) == 2
    assert {leg.goal for leg in ref} >= {indices[ep.scene].scene.object(ep.end).node}


def test_behaviour_cloning_learns_to_reach_goals_and_repeats_for_a_seed() -> None:
    split, indices = _split()
    train = learned.training_legs(split.episodes["train"], "single")
    exact = SimConfig()
    x, y = collect(train, indices, SMALL, exact, SMALL.samples, 0)
    assert len(y) == SMALL.samples and set(np.unique(y)) >= {0, 1, 2, 3}  # forward, left, right, stop
    weights, acc = fit(x, y, LONGER, 0)
    majority = np.bincount(y).max() / len(y)
    assert acc > majority + 0.1  # it learns more than the commonest action
    again, _ = train_executor(train, indices, SMALL, exact, 0)
    same, _ = train_executor(train, indices, SMALL, exact, 0)
    assert all(np.array_equal(again[k], same[k]) for k in again)
    ev = A.EvalConfig(sim=exact)
    trials = learned.trial_set(split.episodes["train"][:12], indices)
    eps = {e.id: e for e in split.all}
    won = [t[-1] for t in learned.run_trials(trials, eps, indices, LearnedExecutor(weights, LONGER), ev, 0)]
    untrained = LearnedExecutor(init_weights(SMALL, 0), SMALL)
    floor = [t[-1] for t in learned.run_trials(trials, eps, indices, untrained, ev, 0)]
    assert np.mean(won) >= np.mean(floor) + 0.2  # behaviour cloning beats the same network untrained


def test_every_arm_runs_the_same_trials_and_missions() -> None:
    """The gate of the comparison: one trial set (episode, plan, leg, start, goal) for every arm."""
    split, indices = _split()
    cfg = NavConfig(experiment="learned", seeds=1, eval_per_house=6, executor=SMALL)
    train = split.episodes["train"]
    leg_sets = {k: learned.training_legs(train, k) for k in ("single", "collaborative")}
    assert leg_sets["single"] and leg_sets["collaborative"]
    weights = {
        f"{k}/7": init_weights(SMALL, i) for i, k in enumerate(("single", "collaborative", "untrained"))
    }
    test = [e for e in split.episodes["test"] if e.kind == "collaborative"][:3]
    unit = Unit("seed0", 7, {"seed": 7})
    cells = {arm.name: learned.measure(cfg, test, indices, weights, arm, unit, None) for arm in learned.ARMS}
    keys = {name: [tuple(t[:6]) for t in c["trials"]] for name, c in cells.items()}
    first = keys["collab_trained"]
    assert first and all(k == first for k in keys.values())
    assert len(first) == 6 * len(test)  # 4 reference legs and 2 solo legs per episode
    assert cells["oracle"]["passed"] == 1 and cells["null"]["passed"] == 0
    assert cells["stay"]["step_sr"] == 0.0 and cells["oracle"]["step_sr"] == 1.0


def test_the_study_pairs_the_trained_executors_over_training_seeds() -> None:
    split, indices = _split()
    cfg = NavConfig(experiment="learned", seeds=3, eval_per_house=0, executor=SMALL)
    s = learned.study(cfg, split, indices, {}, [])
    assert [u.key for u in s.units] == ["seed0", "seed1", "seed2"]
    assert [c.metric for c in s.claims] == ["step_sr", "mission_success", "makespan"]
    assert all(c.method == "collab_trained" and c.baselines == ("single_trained",) for c in s.claims)
    assert {a.name for a in s.arms if a.role == "floor"} == {"untrained", "stay", "random"}


@pytest.mark.parametrize(
    ("field", "value"),
    [("experiment", "rl"), ("seeds", 0), ("eval_per_house", -1)],
)
def test_bad_learned_config_names_the_field(field, value) -> None:
    with pytest.raises(ConfigError, match=field):
        NavConfig(**{field: value})


def test_bad_executor_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match=r"executor\.samples"):
        ExecutorConfig(samples=5)
    with pytest.raises(ConfigError, match=r"executor\.cell"):
        ExecutorConfig(cell=0.0)


def test_length_bins() -> None:
    got = [learned.length_bin(m) for m in (1.0, 3.0, 8.9, 11.0, 40.0)]
    assert got == ["<3 m", "3-6 m", "6-9 m", "9-12 m", "12+ m"]


def test_the_learned_run_reports_three_claims_with_floors_and_resumes(tmp_path) -> None:
    from iclr26.conavbench import SYSTEM
    from iclr26.core.ledger import CELLS_FILE
    from iclr26.core.runner import run_system

    sets = {
        "experiment": "learned",
        "seeds": "3",
        "executor.samples": "500",
        "executor.steps": "50",
        "eval_per_house": "2",
    }
    out = tmp_path / "run"
    record, _ = run_system(SYSTEM, "smoke", sets, out=out)
    assert record.status == "complete"
    claims = next(t for t in record.report.tables if t.title.startswith("Claim checks"))
    assert [r[0].split(" ")[0] for r in claims.rows] == ["step-level", "mission", "makespan"]
    check = record.report.claim_check
    assert check.method == "collab_trained" and check.baseline == "single_trained" and check.n == 3
    assert set(check.floors) == {"untrained", "stay", "random"}
    legs = next(t for t in record.report.tables if t.title.startswith("Step-level SR on the common trials"))
    assert [r[0] for r in legs.rows][:2] == ["collab_trained", "single_trained"]
    per_seed = next(t for t in record.report.tables if t.title.startswith("Per training seed"))
    assert [r[0] for r in per_seed.rows] == ["seed0", "seed1", "seed2"]
    assert not any("INVALID" in n for n in record.report.notes)
    cells = (out / CELLS_FILE).read_text()
    trials: dict = {}  # the gate over the whole run: per seed, one trial set for every arm
    for line in cells.splitlines():
        c = json.loads(line)
        trials.setdefault(c["unit"], {})[c["arm"]] = [tuple(t[:6]) for t in c["metrics"]["trials"]]
    assert len(trials) == 3
    for by_arm in trials.values():
        assert len(by_arm) == len(learned.ARMS) and len({tuple(v) for v in by_arm.values()}) == 1
    checkpoints = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert len(checkpoints) == 6  # both executors for each of the 3 seeds
    run_system(SYSTEM, "smoke", sets, out=out)
    assert (out / CELLS_FILE).read_text() == cells  # resumed: nothing retrained or rerun
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == checkpoints
