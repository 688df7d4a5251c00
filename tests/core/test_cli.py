import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import iclr26.catalog as catalog
import iclr26.cli as cli
from iclr26.catalog import PAPERS, all_systems
from tests.core.toy_system import TOY

runner = CliRunner()


def test_catalog_has_19_distinct_systems():
    systems = all_systems()
    assert len(systems) == 19
    assert [s.number for s in systems] == list(range(1, 20))
    assert len({s.name for s in systems}) == 19
    assert all(s.title and s.claim for s in systems)


def test_list_shows_all_19(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    res = runner.invoke(cli.app, ["list"])
    assert res.exit_code == 0, res.output
    for p in PAPERS:
        assert p.name in res.output


def test_run_planned_system_fails_naming_status(monkeypatch):
    """A catalog paper without a `system` module (all 19 are implemented: vincie is made planned here)."""
    paper = next(p for p in PAPERS if p.name == "vincie")
    real = catalog.get_system
    monkeypatch.setattr(
        cli, "get_system", lambda name: catalog._planned(paper) if name == "vincie" else real(name)
    )
    res = runner.invoke(cli.app, ["run", "vincie"])
    assert res.exit_code == 2
    assert "'vincie' is planned" in " ".join(res.output.split())


def test_run_unknown_system_suggests():
    res = runner.invoke(cli.app, ["run", "dashh"])
    assert res.exit_code == 2 and "did you mean dash" in res.output


@pytest.fixture
def with_toy(monkeypatch):
    real = catalog.get_system

    def get(name):
        return TOY if name == "toy" else real(name)

    monkeypatch.setattr(cli, "get_system", get)
    # the real systems' demos take minutes: list them as planned here
    monkeypatch.setattr(cli, "all_systems", lambda: [TOY, *(catalog._planned(p) for p in PAPERS)])


def test_run_set_and_report(with_toy, tmp_path):
    out = tmp_path / "r"
    res = runner.invoke(cli.app, ["run", "toy", "--preset", "smoke", "--set", "n=40", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "results.json").read_text())["config"]["n"] == 40
    (out / "report.md").unlink()
    res = runner.invoke(cli.app, ["report", str(out)])
    assert res.exit_code == 0 and (out / "report.md").exists()


def test_run_bad_set_names_field(with_toy, tmp_path):
    res = runner.invoke(cli.app, ["run", "toy", "--set", "n=many", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "field 'n'" in res.output


def test_report_on_non_run_dir_fails(tmp_path):
    res = runner.invoke(cli.app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "results.json" in res.output


@pytest.mark.parametrize(
    "content, said",
    [(b"[1, 2]", "a JSON list, not an object"), (b"\xff\xfe", "not UTF-8"), (b'{"schema_version": 1, '
     b'"report": []}', "not an iclr26 results file")],
)  # fmt: skip
def test_report_on_a_results_file_that_is_not_one_says_so_in_one_line(tmp_path, content, said):
    (tmp_path / "results.json").write_bytes(content)
    res = runner.invoke(cli.app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and res.output.startswith("error: ") and said in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "content, said",
    [(b"[1, 2]", "a JSON list, not an object"), (b"\xff\xfe", "not UTF-8"), (b"{", "not valid JSON"),
     (b'{"schema_version": 1}', "not an iclr26 results file")],
)  # fmt: skip
def test_resuming_into_a_folder_whose_results_file_is_bad_says_so_in_one_line(
    with_toy, tmp_path, content, said
):
    (tmp_path / "results.json").write_bytes(content)
    res = runner.invoke(cli.app, ["run", "toy", "--out", str(tmp_path)])
    assert res.exit_code == 2 and res.output.startswith("error: ") and said in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1 and "results.json" in res.output


def test_demo_runs_and_summarises(tmp_path):
    res = runner.invoke(cli.app, ["demo", "--only", "dash", "--preset", "smoke", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [r["system"] for r in summary["rows"]] == ["dash"]
    assert summary["rows"][0]["verdict"] == "within noise"  # 4 shapes at smoke (dash/README.md)
    assert (tmp_path / "index.html").exists() and "summary →" in res.output


def test_demo_with_nothing_implemented_exits_0(monkeypatch, tmp_path):
    from iclr26.catalog import _planned

    monkeypatch.setattr(cli, "all_systems", lambda: [_planned(p) for p in PAPERS])
    res = runner.invoke(cli.app, ["demo", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "No system is implemented yet" in res.output


def test_entry_point_runs_without_stdin():
    """The installed entry point, in a subprocess with no stdin, as `make demo` runs it."""
    proc = subprocess.run(
        [sys.executable, "-m", "iclr26", "list"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "laplacianformer" in proc.stdout and "implemented" in proc.stdout


def test_system_with_missing_dependency_is_unavailable(monkeypatch, tmp_path):
    real = catalog.importlib.util.find_spec

    def fake(name, *a, **k):  # einops, an optional dependency of laplacianformer, is not installed
        return None if name == "einops" else real(name, *a, **k)

    monkeypatch.setattr(catalog.importlib.util, "find_spec", fake)
    s = catalog.get_system("laplacianformer")
    assert s.status == "unavailable" and "einops" in s.unavailable
    res = runner.invoke(cli.app, ["run", "laplacianformer", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unavailable here" in " ".join(res.output.split())


def test_a_missing_module_of_our_own_is_a_bug_not_unavailable(monkeypatch):
    import importlib

    real = importlib.import_module

    def fake(name, *a, **k):
        if name == "iclr26.laplacianformer.system":
            raise ModuleNotFoundError(
                "No module named 'iclr26.laplacianformer.gone'", name="iclr26.laplacianformer.gone"
            )
        return real(name, *a, **k)

    monkeypatch.setattr(catalog.importlib, "import_module", fake)
    with pytest.raises(ModuleNotFoundError, match=r"iclr26\.laplacianformer\.gone"):
        catalog.get_system("laplacianformer")


def test_a_bug_importing_a_third_party_module_is_not_unavailable(monkeypatch):
    """Only a declared optional dependency makes a system unavailable; a misspelt import is a bug."""
    import importlib

    real = importlib.import_module

    def fake(name, *a, **k):
        if name == "iclr26.laplacianformer.system":
            raise ModuleNotFoundError("No module named 'einopz'", name="einopz")
        return real(name, *a, **k)

    monkeypatch.setattr(catalog.importlib, "import_module", fake)
    with pytest.raises(ModuleNotFoundError, match="einopz"):
        catalog.get_system("laplacianformer")


def test_listing_the_catalog_imports_no_system():
    code = (
        "import sys; from iclr26 import catalog; "
        "print([catalog.status_of(p.name)[0] for p in catalog.PAPERS].count('implemented')); "
        "print(sorted(m for m in sys.modules if m.endswith('.system') and not m.startswith('iclr26.core')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    count, loaded = proc.stdout.splitlines()
    assert int(count) >= 8 and loaded == "[]"


def test_help_config_lists_every_field_with_help():
    res = runner.invoke(cli.app, ["run", "dash", "--help-config", "--preset", "smoke"])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "field" in out and "smoke" in out and "help" in out
