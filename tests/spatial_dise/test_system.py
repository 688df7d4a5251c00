"""The `spatial_dise` system end to end on the smoke preset: the oracle row scores 100% and the
null row 0%, every heuristic and the trained scorer get a row, the figures are written, and a
re-run on the same folder resumes the splits and the scorer instead of remaking them."""

from __future__ import annotations

import pytest

from iclr26.core.config import ConfigError
from iclr26.core.runner import run_system
from iclr26.spatial_dise import SYSTEM
from iclr26.spatial_dise.config import SpatialConfig


def _rows(record):
    table = record.report.tables[0]
    return {row[0]: row for row in table.rows}


def test_smoke_runs_and_resumes(tmp_path) -> None:
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    rows = _rows(record)
    assert rows["oracle (verifier)"][1] == 100.0
    assert rows["null (no letter)"][1] == 0.0
    for name in ("random", "pixel_similarity", "odd_one_out", "option scorer (trained here)"):
        assert name in rows
    assert (run_dir / "examples.png").is_file()
    assert any(f.startswith("accuracy_by_quadrant") for f in record.report.figures)
    csv = out / "data" / "bench.csv"
    stamp = csv.stat().st_mtime_ns
    again, _ = run_system(SYSTEM, "smoke", out=out)
    assert _rows(again)["option scorer (trained here)"] == rows["option scorer (trained here)"]
    assert (out / "data" / "parts" / "bench").is_dir() and csv.stat().st_mtime_ns >= stamp


def test_bad_config_names_the_field() -> None:
    with pytest.raises(ConfigError, match="train_tasks: unknown task 'origami'"):
        SpatialConfig(train_tasks=("origami",))
    with pytest.raises(ConfigError, match="baselines"):
        SpatialConfig(baselines=("coin",))
    with pytest.raises(ConfigError, match="bench_items"):
        SpatialConfig(bench_items=0)
