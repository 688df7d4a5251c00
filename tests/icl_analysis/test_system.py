"""The `icl_analysis` system end to end (smoke preset), resuming, and its config errors."""

from __future__ import annotations

import json

import pytest

from iclr26.core import ConfigError
from iclr26.core.runner import run_system
from iclr26.icl_analysis import SYSTEM


def test_smoke_runs_resumes_and_writes_plots(tmp_path):
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    titles = [t.title for t in record.report.tables]
    assert titles[0].startswith("Data") and any(t.startswith("Baselines") for t in titles)
    cells = next(t for t in record.report.tables if t.title.startswith("Language model"))
    assert len(cells.rows) == 4  # 2 tasks × 1 style × 1 shot count × (ID, δ = 0.85)
    assert all(0 <= r[4] <= 100 and r[7] == 0 for r in cells.rows)
    assert any(t.title.startswith("Trained GPT") for t in record.report.tables)
    for name in ("accuracy_vs_shots.png", "tasks_by_styles.png"):
        assert (run_dir / name).stat().st_size > 5_000
    saved = sorted(p.name for p in (run_dir / "checkpoints" / "cells").glob("*.json"))
    assert len(saved) == 4
    calls = record.llm_usage["calls"] if record.llm_usage else 0
    assert calls > 0
    again, _ = run_system(SYSTEM, "smoke", out=out)  # resumes: every cell and the GPT are reused
    assert (again.llm_usage or {}).get("calls", 0) == 0
    first = json.loads((run_dir / "results.json").read_text())
    assert first["report"]["tables"][2]["rows"] == [list(r) for r in cells.rows]
    # the same numbers (the data table's generation seconds aside)
    assert [t.rows for t in again.report.tables[1:]] == [t.rows for t in record.report.tables[1:]]


def test_config_errors_name_fields():
    with pytest.raises(ConfigError, match="tasks must be one of"):
        SYSTEM.config("smoke", {"tasks": "parity,sudoku"})
    with pytest.raises(ConfigError, match="styles must be one of"):
        SYSTEM.config("smoke", {"styles": "haiku"})
    with pytest.raises(ConfigError, match=r"shots must be an int in \[0, 40\], got 100"):
        SYSTEM.config("smoke", {"shots": "100"})
    with pytest.raises(ConfigError, match=r"no field 'model' any more: choose the run's model with --llm"):
        SYSTEM.config("smoke", {"model": "gpt-5"})
    with pytest.raises(ConfigError, match=r"apo\.|beam must be an int >= 1"):
        SYSTEM.config("smoke", {"apo.beam": "0"})


def test_ray_sweep_gives_the_serial_rows(tmp_path):
    """`parallel=ray` runs each cell in its own Ray task, with its own model and reply cache; greedy
    replies make its rows the serial sweep's rows."""
    ray = pytest.importorskip("ray")
    overrides = {"tasks": "parity", "baselines": "", "gpt_tasks": "", "n_train": "20", "n_test": "10"}
    serial, _ = run_system(SYSTEM, "smoke", overrides, out=tmp_path / "serial")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        spread, run_dir = run_system(SYSTEM, "smoke", {**overrides, "parallel": "ray"}, out=tmp_path / "ray")
    finally:
        ray.shutdown()

    def cells(record):
        table = next(t for t in record.report.tables if t.title.startswith("Language model"))
        return table.rows

    assert cells(spread) == cells(serial) and len(cells(serial)) == 2
    # the workers' tokens reach results.json: the same calls as the serial sweep made in-process
    assert spread.llm_usage["calls"] == serial.llm_usage["calls"] > 0
    assert spread.llm_usage["completion_tokens"] == serial.llm_usage["completion_tokens"]
    assert len(list((run_dir / "checkpoints" / "cells").glob("*.sqlite"))) == 2  # one cache per cell
