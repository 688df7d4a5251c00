"""The top README's table of the 19 systems is the one `benchmarks/readme_table.py` generates from
the saved bench results: a figure typed into it by hand, or a result saved without regenerating
it, fails here."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("readme_table", ROOT / "benchmarks" / "readme_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_table_is_the_generated_one():
    script = load_script()
    shown = script.current((ROOT / "README.md").read_text())
    assert shown == script.table(), "run: python benchmarks/readme_table.py"


def test_every_system_has_a_row_and_a_scope():
    script = load_script()
    rows = [line for line in script.table().splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == 19
    assert all(row.split(" | ")[3].strip() for row in rows)  # what runs here
