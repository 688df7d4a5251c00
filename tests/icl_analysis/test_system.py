"""The `icl_analysis` system as a study: the smoke preset end to end and resumed from cells.jsonl,
the arms, units, floors and claims, the floors and the claim on constructed data, Ray cells whose
tokens come back in each cell's record and in results.json, and its config errors."""

from __future__ import annotations

import json

import pytest

from iclr26.core import ConfigError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.core.study import Unit
from iclr26.icl_analysis import SYSTEM
from iclr26.icl_analysis.system import MAJORITY, Bench, _majority, arms, measure, study
from iclr26.icl_analysis.tasks import Item, Splits


def _cells(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / CELLS_FILE).read_text().splitlines()]


def test_smoke_runs_resumes_from_its_cells_and_writes_plots(tmp_path):
    out = tmp_path / "run"
    record, run_dir = run_system(SYSTEM, "smoke", out=out)
    assert record.status == "complete"
    titles = [t.title for t in record.report.tables]
    assert titles[0].startswith("Data") and any(t.startswith("Baselines") for t in titles)
    cells = next(t for t in record.report.tables if t.title.startswith("Language model"))
    assert len(cells.rows) == 4  # 2 tasks × 1 style × 1 shot count × (ID, δ = 0.85)
    assert all(0 <= r[4] <= 100 and r[7] == 0 for r in cells.rows)
    assert any(t.title.startswith("Trained GPT") for t in record.report.tables)
    summary = next(t for t in record.report.tables if t.title.startswith("Accuracy % (punish) by style"))
    assert [r[0] for r in summary.rows] == ["modus_ponens", "trained GPT", "floor: majority label",
                                            "floor: the shots' majority label"]  # fmt: skip
    for name in ("accuracy_vs_shots.png", "tasks_by_styles.png"):
        assert (run_dir / name).stat().st_size > 5_000
    assert not (run_dir / "checkpoints" / "cells").exists()  # the one ledger is cells.jsonl
    ledger = _cells(run_dir)
    # modus_ponens@2, knn@2, knn@all, gpt@2, the majority label and the shots' majority, on 4 units
    assert len(ledger) == 6 * 4
    llm = [c for c in ledger if c["arm"] == "modus_ponens@2"]
    assert len(llm) == 4 and all(c["tokens"]["calls"] == 2 for c in llm)  # 2 items each, per cell
    assert record.llm_usage["calls"] == 8
    claim = record.report.claim_check
    assert claim.method == "modus_ponens@2" and claim.baseline in (MAJORITY, "shot_majority@2")
    assert claim.n == 4
    again, _ = run_system(SYSTEM, "smoke", out=out)  # resumes: every cell is reused, no call made
    assert (again.llm_usage or {}).get("calls", 0) == 0
    first = json.loads((run_dir / "results.json").read_text())
    assert first["report"]["tables"][2]["rows"] == [list(r) for r in cells.rows]
    # the same numbers (the data table's generation seconds aside)
    assert [t.rows for t in again.report.tables[1:]] == [t.rows for t in record.report.tables[1:]]


def test_the_study_declares_arms_units_floors_and_claims():
    cfg = SYSTEM.config("demo", {"styles": "modus_ponens,description"})
    made = {a.name: a for a in arms(cfg)}
    assert {n for n, a in made.items() if a.role == "method"} == {"modus_ponens@5", "description@5", "gpt@5"}
    assert {n for n, a in made.items() if a.role == "floor"} == {MAJORITY, "shot_majority@5"}
    assert {"knn@5", "knn@all", "decision_tree@5", "mlp@all"} <= set(made)
    s = study(cfg, {})
    assert [u.key for u in s.units] == ["parity/ID", "parity/OOD δ=0.85", "pattern_matching/ID",
                                        "pattern_matching/OOD δ=0.85"]  # fmt: skip
    floors, fitted = s.claims
    assert (floors.method, floors.floor_arm, fitted.floor_arm) == ("modus_ponens@5", None, MAJORITY)
    assert floors.baselines == (MAJORITY, "shot_majority@5")
    assert fitted.baselines == ("decision_tree@5", "knn@5", "mlp@5")
    no_sweep = study(SYSTEM.config("demo", {"sweep": "false"}), {})
    assert [c.method for c in no_sweep.claims] == ["gpt@5", "gpt@5"]


def _item(label: int) -> Item:
    return Item(entry="0101", label=label, clean_label=label, delta=0.0, index=0)


def test_the_floors_read_only_labels():
    assert _majority([0, 1, 1]) == 1 and _majority([1, 0]) == 0 and _majority([2, 2, 3]) == 2
    train = [_item(y) for y in (0, 0, 1, 1, 1, 1, 1)]  # first 2 exemplars: 0; the split: 1
    test = [_item(y) for y in (0, 0, 0, 1)]
    cfg = SYSTEM.config("smoke", {"tasks": "parity", "items": "4", "shots": "2"})
    bench = Bench(cfg, {"parity": Splits("parity", train, test, {0.85: test})})
    by = {a.name: a for a in arms(cfg)}
    unit = Unit("parity/ID", 0, {"task": "parity", "delta": 0.0})
    assert measure(bench, by[MAJORITY], unit, None) == {"accuracy": 25.0, "label": 1}
    assert measure(bench, by["shot_majority@2"], unit, None) == {"accuracy": 75.0, "label": 0}


def test_config_errors_name_fields():
    with pytest.raises(ConfigError, match="tasks must be one of"):
        SYSTEM.config("smoke", {"tasks": "parity,sudoku"})
    with pytest.raises(ConfigError, match="styles must be one of"):
        SYSTEM.config("smoke", {"styles": "haiku"})
    with pytest.raises(ConfigError, match=r"shots must be an int in \[0, 40\], got 100"):
        SYSTEM.config("smoke", {"shots": "100"})
    with pytest.raises(ConfigError, match=r"no field 'model' any more: choose the run's model with --llm"):
        SYSTEM.config("smoke", {"model": "gpt-5"})
    with pytest.raises(
        ConfigError, match=r"no field 'parallel' any more: .*--parallel process\|threads\|ray"
    ):
        SYSTEM.config("smoke", {"parallel": "ray"})
    with pytest.raises(ConfigError, match=r"no field 'cpus_per_cell' any more: .*--parallel ray --jobs N"):
        SYSTEM.config("smoke", {"cpus_per_cell": "2"})
    with pytest.raises(ConfigError, match=r"apo\.|beam must be an int >= 1"):
        SYSTEM.config("smoke", {"apo.beam": "0"})


def test_ray_cells_give_the_serial_rows_and_bring_their_tokens_back(tmp_path):
    """`--parallel ray` runs each cell in a Ray task that opens the run's model itself; greedy
    replies make its rows the serial run's, each cell's record holds its own tokens, and their sum
    reaches results.json's llm_usage."""
    ray = pytest.importorskip("ray")
    overrides = {"tasks": "parity", "baselines": "", "gpt_tasks": "", "n_train": "20", "n_test": "10"}
    serial, serial_dir = run_system(SYSTEM, "smoke", overrides, out=tmp_path / "serial")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        spread, run_dir = run_system(SYSTEM, "smoke", overrides, out=tmp_path / "ray", parallel="ray")
    finally:
        ray.shutdown()

    def cells(record):
        table = next(t for t in record.report.tables if t.title.startswith("Language model"))
        return table.rows

    assert cells(spread) == cells(serial) and len(cells(serial)) == 2
    # the workers' tokens reach results.json: the same calls as the serial sweep made in-process
    assert spread.llm_usage["calls"] == serial.llm_usage["calls"] > 0
    assert spread.llm_usage["completion_tokens"] == serial.llm_usage["completion_tokens"]
    tokens = {c["unit"]: c["tokens"] for c in _cells(run_dir) if c["arm"] == "modus_ponens@2"}
    serial_tokens = {c["unit"]: c["tokens"] for c in _cells(serial_dir) if c["arm"] == "modus_ponens@2"}
    assert len(tokens) == 2 and all(t["calls"] == 2 for t in tokens.values())
    assert {u: t["completion_tokens"] for u, t in tokens.items()} == {
        u: t["completion_tokens"] for u, t in serial_tokens.items()
    }
    assert sum(t["calls"] for t in tokens.values()) == spread.llm_usage["calls"]
