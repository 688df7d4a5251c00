"""The `conavbench` system as a study on the smoke preset: the noise-free oracle passes every episode
and the null agent none (both protocols), the floors and roles are declared, the claim compares the
planners on the same legs, the tables and both figures are written, and a re-run on the same folder
resumes the split and the cells."""

from __future__ import annotations

import json

import pytest

from iclr26.conavbench import SYSTEM
from iclr26.conavbench import agents as A
from iclr26.conavbench.config import NavConfig
from iclr26.conavbench.splits import build_split
from iclr26.conavbench.system import OnReferenceLegs, study
from iclr26.core.config import ConfigError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system


def test_smoke_runs_the_study_with_valid_oracle_and_null_rows_and_resumes(tmp_path) -> None:
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    rows = {(r[0], r[1]): r for r in record.report.tables[0].rows}
    assert rows[("oracle", "high")][3].startswith("100.0") and rows[("oracle", "step")][3].startswith("100.0")
    assert rows[("null", "high")][3].startswith("0.0") and rows[("null", "step")][3].startswith("0.0")
    assert rows[("stay", "high")][3].startswith("0.0")  # the floor: it never moves
    claim = record.report.tables[1]
    assert {r[1] for r in claim.rows} == {"greedy", "collaborative"}
    legs = next(t for t in record.report.tables if t.title.startswith("Step-level SR on the same legs"))
    same = {r[1]: r[3] for r in legs.rows if r[0] == "all"}
    assert same["greedy"] == same["collaborative"]  # one executor on one trial set: the same outcomes
    check = record.report.claim_check
    assert check is not None and check.metric.startswith("step-level SR on the collaborative episodes'")
    assert check.baseline == "greedy" and check.n == 6  # paired over the 6 houses
    assert check.verdict == "within noise" and check.interval == [0.0, 0.0]
    standard = next(t for t in record.report.tables if t.title.startswith("conavbench: every arm"))
    roles = {r[0]: r[1] for r in standard.rows}
    assert roles["stay"] == "floor (stay-in-place)" and roles["collaborative"] == "method"
    assert roles["greedy"] == "baseline" and roles["oracle"] == "oracle" and roles["null"] == "null"
    assert not any("INVALID" in n for n in record.report.notes)
    assert len(record.report.figures) == 2 and all((run_dir / f).is_file() for f in record.report.figures)
    cells = (out / CELLS_FILE).read_text().splitlines()
    arms = {json.loads(c)["arm"] for c in cells}
    assert len(cells) == 5 * 6 and arms == set(SYSTEM.presets["smoke"].agents)
    episodes = (out / "data" / "episodes_train.json").read_bytes()
    again, _ = run_system(SYSTEM, "smoke", out=out)
    assert (out / "data" / "episodes_train.json").read_bytes() == episodes
    assert (out / CELLS_FILE).read_text().splitlines() == cells  # every cell resumed, none rerun
    assert again.report.tables[0].rows[0][:4] == record.report.tables[0].rows[0][:4]


def test_the_cells_give_the_tables_of_one_evaluation_over_the_episodes(tmp_path) -> None:
    """The views rebuild each agent's metrics from its per-episode cells: the same as `evaluate` over
    all the episodes at once (each record depends only on its episode)."""
    out = tmp_path / "run"
    record, _ = run_system(SYSTEM, "smoke", {"agents": "greedy", "protocols": "step"}, out=out)
    split = build_split(0, n_single=24, n_collab=24, n_scenes=6, jobs=1, out=out / "data")
    cfg = SYSTEM.presets["smoke"]
    ev = A.evaluate(split.all, split.scenes, A.GreedySinglePolicy(), protocol="step", config=cfg.evaluation)
    (row,) = record.report.tables[0].rows
    assert row[2] == int(ev.metrics["episodes"])
    assert row[3].startswith(f"{round(100 * ev.metrics['sr'], 1)} [")
    assert row[11].startswith(f"{round(100 * ev.metrics['step_sr'], 1)} [")


def test_on_reference_legs_runs_the_episode_s_own_sub_tasks(tmp_path) -> None:
    split = build_split(0, n_single=0, n_collab=6, n_scenes=3, jobs=1)
    ep = split.all[0]
    index = A.index_scenes(split.scenes)[ep.scene]
    greedy = A.GreedySinglePolicy()
    assert greedy.plan(ep, index, "step") != ep.subtasks  # its own plan: the robot alone
    assert OnReferenceLegs(greedy).plan(ep, index, "step") == ep.subtasks


def test_the_study_declares_its_arms_claims_and_units() -> None:
    split = build_split(0, n_single=6, n_collab=6, n_scenes=3, jobs=1)
    indices = A.index_scenes(split.scenes)
    s = study(NavConfig(), split.all, indices)
    roles = {a.name: a.role for a in s.arms}
    assert roles == {"oracle": "oracle", "null": "null", "stay": "floor", "random": "floor",
                     "greedy": "baseline", "collaborative": "method"}  # fmt: skip
    assert [u.key for u in s.units] == list(dict.fromkeys(e.scene for e in split.all))
    assert len(s.units) == 3 and s.pass_metric == "passed"
    same, success, makespan = s.claims
    assert (same.metric, same.method, same.baselines, same.floor_arm) == (
        "same_legs_sr",
        "collaborative",
        ("greedy",),
        "stay",
    )
    assert same.interval == "bootstrap" and success.metric == "collab_success"
    assert makespan.metric == "makespan" and not makespan.higher_is_better
    assert study(NavConfig(agents=("oracle", "greedy")), split.all, indices).claims == []


def test_bad_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match="agents"):
        NavConfig(agents=("teleporter",))
    with pytest.raises(ConfigError, match="eval_split"):
        NavConfig(eval_split="holdout")
    with pytest.raises(ConfigError, match="n_scenes"):
        NavConfig(n_scenes=1)


def test_the_makespan_rule_keeps_only_faster_collaborations() -> None:
    paper = build_split(0, n_single=0, n_collab=30, n_scenes=4, jobs=1)
    ours = build_split(0, n_single=0, n_collab=30, n_scenes=4, jobs=1, rule="makespan")
    assert any(e.meta["makespan"] >= e.meta["solo_makespan"] for e in paper.all)  # the paper's rule allows it
    assert ours.all and all(e.meta["makespan"] < e.meta["solo_makespan"] for e in ours.all)
    assert ours.stats["rejected"].get("makespan >= solo (makespan rule)", 0) > 0
