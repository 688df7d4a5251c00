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


def load_experiments():
    load_script()  # puts benchmarks/ on sys.path
    import readme_experiments

    return readme_experiments


def test_the_readme_experiments_table_is_the_generated_one():
    script = load_script()
    text = (ROOT / "README.md").read_text()
    assert script.section(text, script.EXP_START, script.EXP_END) == script.experiments_table()


def test_every_experiment_names_a_catalog_system_and_reads_its_saved_result():
    from iclr26.catalog import PAPERS

    exp = load_experiments()
    names = {p.name for p in PAPERS}
    for e in exp.EXPERIMENTS:
        assert e.system in names, e
        assert e.path.is_file(), e.path
        _, found = exp.lines(e)
        assert found and all(text and verdict for text, verdict in found), e


def test_a_result_without_claims_is_refused_and_table_claims_are_read():
    import pytest

    exp = load_experiments()
    with pytest.raises(ValueError):
        exp.claims()({"tables": []})
    cc = {"metric": "m", "method": "a", "method_value": 2.0, "baseline": "b", "baseline_value": 1.0,
          "verdict": "held", "n": 5, "rule": "± 2 SE of 5 paired differences",
          "floors": {"zero": 0.0}}  # fmt: skip
    columns = ["metric", "method", "baseline", "method mean", "baseline mean", "verdict", "pairs",
               "difference interval"]  # fmt: skip
    rows = [["m", "a", "b", 2.0, 1.0, "held", 5, "[0.5, 1.5]"],
            ["m", "a", "c", 2.0, 3.0, "did not hold", 5, "[-2, -0.5]"]]  # fmt: skip
    saved = {
        "claim_check": cc,
        "tables": [{"title": "Claim checks (paired over units)", "columns": columns, "rows": rows}],
    }
    lines = exp.claims()(saved)
    assert [v.split(" (")[0] for _, v in lines] == ["**held**", "**did not hold**"]
    assert lines[0][0] == "m: a 2 vs b 1" and lines[1][0] == "a 2 vs c 3; floors zero 0"


def test_the_checks_without_a_claim_can_fail():
    exp = load_experiments()
    kinds = {"rows": [["symptom", 4, 1, "0.25"]]}
    tasks = {"rows": [["t1", 4, 1, "0.25", "symptom", "yes"], ["all tasks", 4, 1, "0.25", "", "1/1"]]}
    [(text, verdict)] = exp.near_misses({"per_kind": kinds, "per_task": tasks})
    assert "1 of 4" in text and "1 false passes" in verdict
    summary = {"title": "Summary over games", "columns": ["agent", "score"],
               "rows": [["random", "0.35 ± 0.1"], ["go_explore", "0.10 ± 0.02"]]}  # fmt: skip
    [(_, verdict)] = exp.hard_suite(0.3)({"tables": [summary]})
    assert "not hard" in verdict
