"""The `pic` system end to end (smoke preset), its resume, and config validation."""

from __future__ import annotations

import json

import pytest

from iclr26.core import ConfigError
from iclr26.core.runner import run_system
from iclr26.pic import SYSTEM


def test_smoke_preset_runs_and_resumes(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path)
    assert record.status == "complete"
    table, speed = record.report.tables
    assert [r[1] for r in table.rows] == ["bc", "td3_bc", "iql", "pic", "epic", "edac"]
    assert "normalized (ours)" in table.columns
    assert all(r[1] > 0 for r in speed.rows)  # steps/s measured for every algorithm
    assert (run_dir / "learning_curves.png").stat().st_size > 10_000
    # the peer table was built once, beside the dataset
    assert len(list((run_dir / "data").rglob("*.peers_k5.npy"))) == 1
    # a second run in the same folder reuses every finished training run
    done = sorted((run_dir / "runs").glob("*.json"))
    assert len(done) == 6
    before = [json.loads(p.read_text()) for p in done]
    record2, _ = run_system(SYSTEM, "smoke", out=run_dir)
    assert record2.report.tables[0].rows == table.rows
    assert [json.loads(p.read_text()) for p in done] == before


def test_config_errors_name_fields():
    with pytest.raises(ConfigError, match="algorithms: unknown"):
        SYSTEM.config("demo", {"algorithms": "pic,cql"})
    with pytest.raises(ConfigError, match="datasets: unknown"):
        SYSTEM.config("demo", {"datasets": "medium,expert-replay"})
    with pytest.raises(ConfigError, match="peer_method must be one of"):
        SYSTEM.config("demo", {"peer_method": "kdtree"})
    with pytest.raises(ConfigError, match="generation must be one of"):
        SYSTEM.config("demo", {"generation": "atari"})
    with pytest.raises(ConfigError, match="k must be >= 1"):
        SYSTEM.config("demo", {"k": "0"})


def test_shared_settings_reach_only_the_fields_an_algorithm_has():
    from iclr26.pic.system import _algo_overrides

    cfg = SYSTEM.config("demo", {"delta": "2.5"})
    assert _algo_overrides("pic", cfg)["delta"] == 2.5
    assert "delta" not in _algo_overrides("edac", cfg)  # EDAC keeps δ = 0: it samples no peers
    assert "delta" not in _algo_overrides("td3_bc", cfg)
    assert _algo_overrides("epic", cfg)["num_critics"] == cfg.num_critics


def test_extra_reaches_the_algorithms_that_have_the_field():
    from iclr26.pic.system import _algo_overrides

    cfg = SYSTEM.config(
        "demo", {"extra": '{"score_dtype": "float32", "expectile": 0.9}', "algorithms": "pic,iql"}
    )
    assert _algo_overrides("pic", cfg)["score_dtype"] == "float32"
    assert "score_dtype" not in _algo_overrides("iql", cfg)
    assert _algo_overrides("iql", cfg)["expectile"] == 0.9
    with pytest.raises(ConfigError, match="not config fields"):
        SYSTEM.config("demo", {"extra": '{"scoring": "fast"}'})
