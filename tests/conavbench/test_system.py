"""The `conavbench` system end to end on the smoke preset: the noise-free oracle passes every
episode and the null agent none (both protocols), the claim table and both figures are written, and
a re-run on the same folder resumes the split."""

from __future__ import annotations

import pytest

from iclr26.conavbench import SYSTEM
from iclr26.conavbench.config import NavConfig
from iclr26.core.config import ConfigError
from iclr26.core.runner import run_system


def test_smoke_runs_with_valid_oracle_and_null_rows(tmp_path) -> None:
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    rows = {(r[0], r[1]): r for r in record.report.tables[0].rows}
    assert rows[("oracle", "high")][3].startswith("100.0") and rows[("oracle", "step")][3].startswith("100.0")
    assert rows[("null", "high")][3].startswith("0.0") and rows[("null", "step")][3].startswith("0.0")
    claim = record.report.tables[1]
    assert {r[1] for r in claim.rows} == {"greedy", "collaborative"}
    assert record.report.claim_check is not None
    assert len(record.report.figures) == 2 and all((run_dir / f).is_file() for f in record.report.figures)
    episodes = (out / "data" / "episodes_train.json").read_bytes()
    again, _ = run_system(SYSTEM, "smoke", out=out)
    assert (out / "data" / "episodes_train.json").read_bytes() == episodes
    assert again.report.tables[0].rows[0][:4] == record.report.tables[0].rows[0][:4]


def test_bad_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match="agents"):
        NavConfig(agents=("teleporter",))
    with pytest.raises(ConfigError, match="eval_split"):
        NavConfig(eval_split="holdout")
    with pytest.raises(ConfigError, match="n_scenes"):
        NavConfig(n_scenes=1)


def test_the_makespan_rule_keeps_only_faster_collaborations() -> None:
    from iclr26.conavbench.splits import build_split

    paper = build_split(0, n_single=0, n_collab=30, n_scenes=4, jobs=1)
    ours = build_split(0, n_single=0, n_collab=30, n_scenes=4, jobs=1, rule="makespan")
    assert any(e.meta["makespan"] >= e.meta["solo_makespan"] for e in paper.all)  # the paper's rule allows it
    assert ours.all and all(e.meta["makespan"] < e.meta["solo_makespan"] for e in ours.all)
    assert ours.stats["rejected"].get("makespan >= solo (makespan rule)", 0) > 0
