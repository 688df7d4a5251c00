import json

import matplotlib
import pytest

from iclr26.core import ClaimCheck, ConfigError, Report, Table, load_record, render_report
from iclr26.core.records import save_figure
from iclr26.core.runner import SystemNotImplemented, run_system
from iclr26.core.system import System
from tests.core.toy_system import TOY

matplotlib.use("Agg")


def test_run_writes_results_and_report(tmp_path):
    record, run_dir = run_system(TOY, "demo", {"n": "100"}, runs_root=tmp_path)
    assert run_dir.parent == tmp_path / "toy"
    data = json.loads((run_dir / "results.json").read_text())
    assert data["status"] == "complete" and data["config"]["n"] == 100 and data["seed"] == 0
    assert {"python", "torch", "numpy"} <= set(data["versions"])
    assert data["wall_time_s"] > 0
    report = (run_dir / "report.md").read_text()
    assert "## test MSE" in report and "| ridge |" in report
    assert "did not hold" not in report and "→ held" in report
    assert record.report.claim_check.held


def test_results_json_round_trip(tmp_path):
    record, run_dir = run_system(TOY, "smoke", runs_root=tmp_path)
    loaded = load_record(run_dir)
    assert loaded == record
    assert render_report(loaded) == (run_dir / "report.md").read_text()


def test_round_trip_keeps_non_finite_values(tmp_path):
    _, run_dir = run_system(TOY, "smoke", runs_root=tmp_path)
    rec = load_record(run_dir)
    rec.report.claim_check = ClaimCheck("m", "a", float("nan"), "b", float("inf"))
    from iclr26.core.records import save_record

    save_record(run_dir, rec)
    back = load_record(run_dir).report.claim_check
    assert back.method_value != back.method_value and back.baseline_value == float("inf")


def test_seeded_runs_repeat(tmp_path):
    r1, _ = run_system(TOY, "demo", runs_root=tmp_path)
    r2, _ = run_system(TOY, "demo", runs_root=tmp_path)
    r3, _ = run_system(TOY, "demo", {"seed": "1"}, runs_root=tmp_path)
    assert r1.report.tables == r2.report.tables
    assert r1.report.tables != r3.report.tables


def test_failed_run_keeps_a_record(tmp_path):
    out = tmp_path / "failing"
    with pytest.raises(RuntimeError, match="asked to fail"):
        run_system(TOY, "smoke", {"fail": "true"}, out=out)
    rec = load_record(out)
    assert rec.status == "failed" and "asked to fail" in rec.error
    assert (out / "traceback.txt").exists()


def test_bad_override_and_preset_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="n must be at least"):
        run_system(TOY, "demo", {"n": "3"}, runs_root=tmp_path)
    with pytest.raises(ConfigError, match="no preset 'huge'"):
        run_system(TOY, "huge", runs_root=tmp_path)


def test_planned_system_refuses_to_run(tmp_path):
    planned = System(name="x", number=1, title="t", claim="c")
    assert planned.status == "planned"
    with pytest.raises(SystemNotImplemented, match="'x' is planned"):
        run_system(planned, runs_root=tmp_path)


def test_implemented_system_needs_all_presets():
    with pytest.raises(ValueError, match="lacks presets"):
        System(name="y", number=1, title="t", claim="c", presets={}, run=lambda c, x: Report())


def test_table_rejects_ragged_rows():
    with pytest.raises(ValueError, match="row 0 has 1 cells but there are 2 columns"):
        Table("t", ["a", "b"], [[1]])


def test_report_renders_figures_and_claim(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    name = save_figure(fig, tmp_path, "curve")
    assert (tmp_path / "curve.png").stat().st_size > 1000
    _, run_dir = run_system(TOY, "smoke", runs_root=tmp_path)
    rec = load_record(run_dir)
    rec.report.figures = [name]
    md = render_report(rec)
    assert "![curve](curve.png)" in md and "lower is better" in md


def test_load_record_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="is this a run folder"):
        load_record(tmp_path)
    (tmp_path / "results.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_record(tmp_path)
    (tmp_path / "results.json").write_text('{"schema_version": 99}')
    with pytest.raises(ValueError, match="schema_version 99"):
        load_record(tmp_path)


def test_resume_refuses_a_different_config(tmp_path):
    out = tmp_path / "run"
    run_system(TOY, "smoke", out=out)
    run_system(TOY, "smoke", out=out)  # same settings: resumes
    with pytest.raises(ConfigError, match=r"different settings \(n\)"):
        run_system(TOY, "smoke", {"n": "30"}, out=out)


def test_claim_check_margin_gives_within_noise():
    assert ClaimCheck("acc", "a", 0.917, "b", 0.914, margin=0.01).verdict == "within noise"
    assert ClaimCheck("acc", "a", 0.95, "b", 0.914, margin=0.01).verdict == "held"
    assert ClaimCheck("acc", "a", 0.80, "b", 0.914, margin=0.01).verdict == "did not hold"
    assert ClaimCheck("mse", "a", 0.1, "b", 0.2, higher_is_better=False).verdict == "held"
