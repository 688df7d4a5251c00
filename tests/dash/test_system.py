"""The `dash` system end to end (smoke preset) and its config validation."""

from __future__ import annotations

import pytest

from iclr26.core import ConfigError
from iclr26.core.runner import run_system
from iclr26.dash import SYSTEM


def test_smoke_preset_runs_end_to_end(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path)
    assert record.status == "complete"
    sim, check, train = record.report.tables[:3]
    # the DAG model predicts both DASH schedules faster than FA3's order on causal masks
    for row in sim.rows:
        if row[0] == "causal":
            assert row[5] > 1.0 and row[6] > 1.0
    # every kernel case is close to fp32 PyTorch and repeatable
    for row in check.rows:
        assert max(row[3:7]) < 5e-3, row
        assert row[7] is True
    assert train.rows[1][3] is True
    cc = record.report.claim_check
    assert cc is not None and cc.verdict == "held"
    assert (run_dir / "dag_model_speedup.png").stat().st_size > 10_000


def test_config_errors_name_fields():
    with pytest.raises(ConfigError, match="dtype must be one of"):
        SYSTEM.config("demo", {"dtype": "float64"})
    with pytest.raises(ConfigError, match="bfloat16 needs device=cuda"):
        SYSTEM.config("demo", {"dtype": "bfloat16"})
    with pytest.raises(ConfigError, match=r"check\.head_dim must be one of"):
        SYSTEM.config("demo", {"check.head_dim": "48"})
    with pytest.raises(ConfigError, match=r"sim\.seq_lens must divide"):
        SYSTEM.config("demo", {"sim.seq_lens": "1000"})
    with pytest.raises(ConfigError, match=r"check\.repeats must be >= 2"):
        SYSTEM.config("demo", {"check.repeats": "1"})


def test_parts_are_nested_configs():
    """`--set check.len=64` reaches the kernel checks' config; each part checks its own fields."""
    cfg = SYSTEM.config("smoke", {"check.len": "64", "sim.r": "0.25,1.0", "gpu.seq_lens": "1024"})
    assert (cfg.check.len, cfg.sim.r, cfg.gpu.seq_lens) == (64, (0.25, 1.0), (1024,))
    assert SYSTEM.config("smoke").check.len == 20  # the preset itself is unchanged
    with pytest.raises(ConfigError, match=r"train\.dim must be twice a supported head_dim"):
        SYSTEM.config("demo", {"train.dim": "48"})
    with pytest.raises(ConfigError, match=r"sim\.r must be a finite number >= 0"):
        SYSTEM.config("demo", {"sim.r": "-1"})
    with pytest.raises(ConfigError, match=r"check\.len must be an int >= 1"):
        SYSTEM.config("demo", {"check.len": "0"})
    with pytest.raises(ConfigError, match="DashConfig has no field 'check_len'"):
        SYSTEM.config("demo", {"check_len": "64"})
