"""`iclr26 demo`: selection, parallel runs in their own processes, resume, failures, and the
summary page (checked for structure, and rendered in a real headless Chromium)."""

import re
import sys
import time

import pytest
from typer.testing import CliRunner

import iclr26.cli as cli
import iclr26.core.tour as tour
from iclr26.catalog import PAPERS, _planned, all_systems, get_system
from iclr26.core.errors import UserError

FAST = ["dash", "repro_reward"]  # smoke presets of a few seconds, each with a figure and a claim check


def test_select_only_skip_and_errors():
    # all 19 systems are implemented: vincie stands in for a planned one here
    vincie = next(p for p in PAPERS if p.name == "vincie")
    systems = [_planned(vincie) if s.name == "vincie" else s for s in all_systems()]
    names = [s.name for s in tour.select(systems)]
    assert names == [s.name for s in systems if s.status == "implemented"]
    assert [s.name for s in tour.select(systems, only="dash,pic")] == ["dash", "pic"]
    assert "dash" not in [s.name for s in tour.select(systems, skip="dash")]
    with pytest.raises(UserError, match="no system named dashh"):
        tour.select(systems, only="dashh")
    with pytest.raises(UserError, match="vincie not implemented yet"):
        tour.select(systems, only="vincie")


@pytest.fixture(scope="module")
def toured(tmp_path_factory):
    root = tmp_path_factory.mktemp("tour")
    systems = [get_system(n) for n in FAST]
    outcomes = tour.run_tour(systems, root, preset="smoke", jobs=2, say=lambda m: None)
    return root, systems, outcomes


def test_runs_each_system_in_its_folder_and_resumes(toured):
    root, systems, outcomes = toured
    assert [o.status for o in outcomes] == ["complete", "complete"]
    assert all((root / n / "results.json").exists() and (root / n / "tour.log").exists() for n in FAST)
    # each process got its share of the cores: threads=1 with 2 jobs on a 2-core machine
    cfg = outcomes[1].record.config
    assert cfg["threads"] == max(1, (tour.os.cpu_count() or 1) // 2)
    start = time.perf_counter()
    again = tour.run_tour(systems, root, preset="smoke", jobs=2, say=lambda m: None)
    assert [o.status for o in again] == ["reused", "reused"] and time.perf_counter() - start < 2


def test_a_failure_is_reported_and_the_rest_go_on(tmp_path, monkeypatch):
    real = tour._command

    def broken(system, preset, run_dir, threads, llm):
        if system.name == "dash":
            return [sys.executable, "-c", "raise SystemExit('dash broke')"]
        return real(system, preset, run_dir, threads, llm)

    monkeypatch.setattr(tour, "_command", broken)
    lines = []
    outcomes = tour.run_tour(
        [get_system(n) for n in FAST], tmp_path, preset="smoke", jobs=1, say=lines.append
    )
    assert [o.status for o in outcomes] == ["failed", "complete"]
    assert "dash broke" in outcomes[0].error and any("dash: failed" in ln for ln in lines)
    page = tour.write_summary(tmp_path, outcomes, "smoke").read_text()
    assert page.count("class='system'") == 2 and ">failed<" in page


def test_summary_page_structure(toured):
    root, _, outcomes = toured
    page = tour.write_summary(root, outcomes, "smoke").read_text()
    sections = re.findall(r"<section id='(\w+)' class='system'>(.*?)</section>", page, re.S)
    assert [name for name, _ in sections] == FAST
    for name, body in sections:
        assert re.search(rf"<img src='{name}/[\w-]+\.png'", body), name
        verdicts = "held|did not hold|within noise|not tested|uninformative"
        assert re.search(rf"class='verdict (held|not|noise|untested)'>({verdicts})<", body), name
        assert "Paper's claim:" in body and "README" in body
    assert (root / "report.md").read_text().startswith("# iclr26 smoke summary")
    assert '"rows"' in (root / "summary.json").read_text()


@pytest.mark.debian("chromium")
def test_summary_page_renders_in_chromium(toured):
    from iclr26.agents.browser import headless_chromium

    root, _, outcomes = toured
    path = tour.write_summary(root, outcomes, "smoke")
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(path.as_uri())
        assert page.locator("section.system").count() == len(FAST)
        assert page.locator("section.system .verdict").count() == len(FAST)
        widths = page.eval_on_selector_all("section.system img", "imgs => imgs.map(i => i.naturalWidth)")
        assert len(widths) == len(FAST) and all(w > 100 for w in widths)  # the plots loaded
        shot = page.screenshot(full_page=True)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_demo_errors_are_one_line():
    res = CliRunner().invoke(cli.app, ["demo", "--only", "nope"])
    assert res.exit_code == 2 and "no system named nope" in res.output
    res = CliRunner().invoke(cli.app, ["demo", "--only", "dash", "--skip", "dash"])
    assert res.exit_code == 2 and "no system left" in res.output
    res = CliRunner().invoke(cli.app, ["demo", "--only", "dash", "--jobs", "0", "--out", "/tmp/iclr26-x"])
    assert res.exit_code == 2 and "--jobs must be a positive integer" in res.output
