"""`benchmarks/core/compare_tables.py` leaves out timing columns only: a column named for a unit of
time or a rate is not compared, one that merely contains the letters is."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "core" / "compare_tables.py"


@pytest.fixture(scope="module")
def compare_tables():
    sys.path.insert(0, str(SCRIPT.parent.parent))  # benchmarks/_meta.py, as the script does
    spec = importlib.util.spec_from_file_location("compare_tables", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TIMINGS = [
    "wall s",
    "seconds",
    "latency (ms)",
    "tokens/s",
    "time to first token",
    "throughput",
    "s/episode",
    "train min",
    "it/s",
    "steps per s",
]
MEASURES = [
    "timeout rate",
    "second half SR",
    "success",
    "makespan (steps)",
    "runtime errors",
    "SR",
    "passes",
    "sessions",
    "items",
]


@pytest.mark.parametrize("column", TIMINGS)
def test_a_timing_column_is_not_compared(compare_tables, column):
    assert compare_tables.TIMED.search(column)


@pytest.mark.parametrize("column", MEASURES)
def test_a_measured_column_is_compared(compare_tables, column):
    assert not compare_tables.TIMED.search(column)


def test_a_changed_measure_is_reported_and_a_changed_timing_is_not(compare_tables):
    def result(sr: float, wall: float) -> dict:
        table = {"title": "T", "columns": ["arm", "timeout rate", "wall s"], "rows": [["a", sr, wall]]}
        return {"report": {"tables": [table]}}

    assert compare_tables.compare(result(0.1, 5.0), result(0.1, 9.0))["tables"]["T"]["changed"] == {}
    changed = compare_tables.compare(result(0.1, 5.0), result(0.2, 5.0))["tables"]["T"]["changed"]
    assert changed == {"a": {"timeout rate": [0.1, 0.2]}}
