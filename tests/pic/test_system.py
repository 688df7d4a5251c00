"""The `pic` system end to end (smoke preset), its resume, and config validation."""

from __future__ import annotations

import json

import pytest

from iclr26.core import ConfigError
from iclr26.core.runner import run_system
from iclr26.pic import SYSTEM
from iclr26.pic.algorithms import ALGORITHMS


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


def test_nested_settings_reach_only_their_algorithm():
    cfg = SYSTEM.config("demo", {"pic.delta": "2.5", "epic.num_critics": "7"})
    assert cfg.algorithm_config("pic").delta == 2.5
    assert cfg.algorithm_config("edac").delta == 0.0  # EDAC keeps δ = 0: it samples no peers
    assert cfg.epic.delta == 1.0 and not hasattr(cfg.td3_bc, "delta")
    assert cfg.epic.num_critics == 7 and cfg.edac.num_critics == SYSTEM.config("demo").edac.num_critics
    with pytest.raises(ConfigError, match=r"EDACConfig\.delta must be 0"):
        SYSTEM.config("demo", {"edac.delta": "1"})


def test_presets_give_every_algorithm_the_old_shared_settings():
    # the flat hidden / num_critics / delta / batch_size of before, now one value per nested config
    widths = {p: {a: c.algorithm_config(a).hidden for a in ALGORITHMS} for p, c in SYSTEM.presets.items()}
    expected = {"smoke": 32, "demo": 64, "bench": 64, "paper": 256}
    assert widths == {p: dict.fromkeys(ALGORITHMS, (w, w)) for p, w in expected.items()}
    assert {p: (c.epic.num_critics, c.edac.num_critics) for p, c in SYSTEM.presets.items()} == {
        "smoke": (3, 3), "demo": (5, 5), "bench": (5, 5), "paper": (10, 10)}  # fmt: skip
    smoke = SYSTEM.presets["smoke"]
    assert {smoke.algorithm_config(a).batch_size for a in ALGORITHMS} == {32}
    assert smoke.pic.delta == smoke.epic.delta == 1.0 and smoke.edac.delta == 0.0


def test_nested_configs_replace_extra():
    over = {"pic.score_dtype": "float32", "iql.expectile": "0.9", "algorithms": "pic,iql"}
    cfg = SYSTEM.config("demo", over)
    assert cfg.pic.score_dtype == "float32" and cfg.iql.expectile == 0.9
    assert not hasattr(cfg.iql, "score_dtype")
    with pytest.raises(ConfigError, match="has no field 'scoring'"):
        SYSTEM.config("demo", {"pic.scoring": "fast"})
    with pytest.raises(ConfigError, match="has no field 'extra'"):
        SYSTEM.config("demo", {"extra": '{"score_dtype": "float32"}'})
