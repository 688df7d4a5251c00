"""The `dash` system end to end (smoke preset) and its config validation."""

from __future__ import annotations

import pytest

from iclr26.core import ConfigError
from iclr26.core.ledger import CELLS_FILE, read_cells
from iclr26.core.runner import run_system
from iclr26.dash import SYSTEM


def test_smoke_preset_runs_end_to_end(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path)
    assert record.status == "complete"
    sim, check, train, standard, claims = record.report.tables
    # the DAG model predicts both DASH schedules faster than FA3's order on causal masks
    for row in sim.rows:
        if row[0] == "causal":
            assert row[5] > 1.0 and row[6] > 1.0
    # every kernel case is close to fp32 PyTorch and repeatable
    for row in check.rows:
        assert max(row[3:7]) < 5e-3, row
        assert row[7] is True
    assert train.rows[1][3] is True
    # the study: units = shapes; the atomic floor at or below the deterministic schedules on its own
    # grid (one item per KV block; causal shift pairs blocks into equal items, which the model rewards)
    cells = read_cells(run_dir / CELLS_FILE)
    units = ["causal/r0.25/L1024", "causal/r0.25/L2048", "full/r0.25/L1024", "full/r0.25/L2048"]
    assert sorted(cells) == sorted(
        (a, u) for a in ("shift", "descending", "ascending", "atomic") for u in units
    )
    for u in units:
        atomic = cells[("atomic", u)].metrics["makespan"]
        assert all(atomic <= cells[(s, u)].metrics["makespan"] for s in ("descending", "ascending"))
    assert [r[:2] for r in standard.rows] == [
        ["shift", "method"],
        ["descending", "method"],
        ["ascending", "baseline"],
        ["atomic", "floor (atomic backward)"],
    ]
    assert [(r[1], r[2]) for r in claims.rows] == [("shift", "ascending"), ("descending", "ascending")]
    cc = record.report.claim_check
    assert (cc.method, cc.baseline, cc.higher_is_better, cc.n) == ("shift", "ascending", False, 4)
    # faster on every shape, but 4 shapes whose gains differ 10× (causal vs full): the interval holds 0
    assert cc.method_value < cc.baseline_value and cc.verdict == "within noise"
    assert all(
        cells[("shift", u)].metrics["makespan"] < cells[("ascending", u)].metrics["makespan"] for u in units
    )
    assert (run_dir / "dag_model_speedup.png").stat().st_size > 10_000


def test_atomic_model_is_list_scheduling_without_waits():
    from iclr26.dash.system import atomic_makespan

    assert atomic_makespan([3, 1], heads=2, n_sm=2, c=1.0, r=0.0) == 4.0  # SM0: 3 then 1; SM1: 1 then 3
    assert atomic_makespan([2, 2], heads=1, n_sm=4, c=1.0, r=0.5) == 3.0  # one item's time: 2·(c + r)
    assert atomic_makespan([1] * 6, heads=1, n_sm=3, c=1.0, r=1.0) == 4.0


def test_a_slower_schedule_did_not_hold():
    """Lower is better: a claim's method slower than ascending on every shape did not hold."""
    from iclr26.core.claim import judge
    from iclr26.dash.system import study

    shift = study(SYSTEM.config("smoke")).claims[0]
    asc = {"a": 10.0, "b": 20.0, "c": 30.0}
    assert judge(shift, "ascending", {"a": 8.0, "b": 15.0, "c": 24.0}, asc).verdict == "held"
    assert judge(shift, "ascending", {"a": 12.0, "b": 23.0, "c": 35.0}, asc).verdict == "did not hold"


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


def test_on_a_gpu_the_cells_are_timings_and_the_views_add_the_model(tmp_path):
    """The GPU study (no GPU needed: constructed cells): units (mask, seq), SDPA a second floor, the
    claim on measured ms; the views rebuild the DAG-model table and tabulate TFLOP/s from the cells."""
    from rich.console import Console

    from iclr26.core.ledger import CellRecord
    from iclr26.core.study import StudyResult
    from iclr26.core.system import RunContext
    from iclr26.dash.system import _views, study

    cfg = SYSTEM.config("paper", {"gpu.seq_lens": "1024,2048", "sim.seq_lens": "1024", "sim.r": "0.25"})
    st = study(cfg)
    assert [u.key for u in st.units] == ["causal/L1024", "causal/L2048", "full/L1024", "full/L2048"]
    assert {a.name: a.role for a in st.arms}["sdpa"] == "floor"
    assert st.claims[0].metric == "ms" and not st.claims[0].higher_is_better
    speed = {"ascending": 100.0, "descending": 150.0, "shift": 160.0, "atomic": 250.0, "sdpa": 300.0}
    cells = {
        (a.name, u.key): CellRecord(a.name, u.key, {"ms": 1e3 / speed[a.name], "tflops": speed[a.name]})
        for a in st.arms
        for u in st.units
    }
    ctx = RunContext(tmp_path, console=Console(quiet=True))
    report = _views(cfg, [], StudyResult(st, cells, [], []), ctx)
    sim, bench = report.tables
    assert sim.title.startswith("DAG model") and len(sim.rows) == 2  # causal and full at 1024
    assert bench.rows[0] == ["causal", 1024, 100.0, 150.0, 160.0, 250.0, 300.0]
    assert len(bench.rows) == 4
