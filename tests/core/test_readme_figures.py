"""Every figure in a system README's tables is in that system's saved results
(`benchmarks/audits/readme_figures.py`): typed tables cannot drift from what was measured."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "audits" / "readme_figures.py"


@pytest.fixture(scope="module")
def audit():
    spec = importlib.util.spec_from_file_location("readme_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_figures"] = module
    spec.loader.exec_module(module)
    return module


def test_every_system_with_saved_results_is_audited(audit):
    from iclr26.catalog import PAPERS

    assert set(audit.systems()) == {p.name for p in PAPERS}


SYSTEMS = sorted(
    p.parent.name
    for p in (ROOT / "benchmarks").glob("*/results")
    if (ROOT / "src" / "iclr26" / p.parent.name / "README.md").is_file()
)


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_readme_table_figure_is_a_saved_figure(audit, system):
    assert audit.untraced(system) == []


def test_a_mistyped_figure_is_caught(audit, tmp_path, monkeypatch):
    (tmp_path / "benchmarks" / "demo" / "results").mkdir(parents=True)
    (tmp_path / "src" / "iclr26" / "demo").mkdir(parents=True)
    saved = {"tables": [{"rows": [["laplacian", 14.149, 0.9170370370370371, "0.894 ± 0.035"]]}]}
    (tmp_path / "benchmarks" / "demo" / "results" / "bench.json").write_text(__import__("json").dumps(saved))
    readme = tmp_path / "src" / "iclr26" / "demo" / "README.md"
    header = (
        "| paper | code |\n|---|---|\n| 26.1 → 47.0 | `x.py` |\n\n| arm | acc | s | sd |\n|---|---|---|---|\n"
    )
    monkeypatch.setattr(audit, "ROOT", tmp_path)
    readme.write_text(header + "| laplacian | 91.7% | 14.1 | 0.894 ± 0.035 |\n")
    assert audit.untraced("demo") == []  # a percentage, a rounding, a figure inside a string
    readme.write_text(header + "| laplacian | 0.917 | 14.2 | 0.894 ± 0.035 |\n")
    assert [f for f, _ in audit.untraced("demo")] == ["14.2"]  # 14.149 is 14.1, not 14.2
