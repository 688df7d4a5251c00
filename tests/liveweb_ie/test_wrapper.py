"""Wrappers: the oracle scores F1 = 1 before drift and measurably less after a layout drift; an
invalid XPath extracts nothing and is logged; result nodes are read by their attribute kind."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iclr26.liveweb_ie.baselines import _step_back
from iclr26.liveweb_ie.metric import page_score
from iclr26.liveweb_ie.sites import groundtruth, layout_of, make_sites, oracle_xpaths, render
from iclr26.liveweb_ie.wrapper import Wrapper, run_xpath
from tests.waiting import wait_until


def _oracle_f1(site, group, build_version, version, k=6):
    kinds = {f.name: f.kind for f in group.fields}
    w = Wrapper(oracle_xpaths(group, layout_of(build_version)), kinds)
    scores = []
    for path in site.pages(group, version)[:k]:
        c = site.page(path, version)
        urls = [a for a, kd in kinds.items() if kd != "text"]
        scores.append(page_score(w.extract(render(site, c, version)), groundtruth(c), urls).f1)
    return sum(scores) / len(scores)


def test_oracle_is_perfect_before_drift_and_loses_after_layout_drift():
    for site in make_sites(0).values():
        for group in site.groups:
            assert _oracle_f1(site, group, 0, 0) == 1.0
            assert _oracle_f1(site, group, 0, 1) == 1.0  # content drift only: same template
            assert _oracle_f1(site, group, 0, 2) < 0.9  # layout v2
            assert _oracle_f1(site, group, 2, 2) == 1.0  # rebuilt on the new layout


def test_invalid_xpath_is_an_empty_extraction_and_logged():
    w = Wrapper({"a": "//div[", "b": "//p", "c": ""}, {"a": "text", "b": "text", "c": "text"})
    out = w.extract("<html><body><p>x</p></body></html>")
    assert out == {"a": [], "b": ["x"], "c": []}
    assert any("invalid XPath" in e for e in w.errors) and "empty XPath" in w.errors


def test_result_nodes_are_read_by_kind():
    page = '<div class="c"><a href="/x"><img src="i.jpg"> Title  <b>bold</b></a></div>'
    assert run_xpath(page, "//div", "image") == (["i.jpg"], None)
    assert run_xpath(page, "//div", "link") == (["/x"], None)
    assert run_xpath(page, "//a", "text") == (["Title bold"], None)
    assert run_xpath(page, "//a/@href", "text") == (["/x"], None)
    assert run_xpath(page, "count(//a)", "text") == (["1.0"], None)
    assert run_xpath("", "//p", "text") == ([], None)


_PAGE = "<html><body>" + "".join(f"<div class='c{i}'><span>t{i}</span></div>" for i in range(400))


@pytest.mark.parametrize(
    "xpath",
    [  # in the harness's process, lxml ran the first for 10 s here; each nesting multiplies by 800
        "//*[count(//*[count(//*)>0])>0]",
        "//*[count(" * 6 + "//*" + ")>0]" * 6,
    ],
)
def test_a_runaway_xpath_from_the_model_is_an_error_within_a_second(xpath):
    assert run_xpath(_PAGE, "//div[@class='c7']/span", "text") == (["t7"], None)  # the child is up
    start = time.perf_counter()
    values, error = run_xpath(_PAGE, xpath, "text")
    assert time.perf_counter() - start < 1.5
    assert values == [] and error and "stopped: no answer within 1 s" in error
    w = Wrapper({"a": xpath, "b": "//div[@class='c7']/span"}, {"a": "text", "b": "text"})
    assert w.extract(_PAGE) == {"a": [], "b": ["t7"]}  # the next XPath runs in a fresh child
    assert len(w.errors) == 1 and "stopped" in w.errors[0]


def test_the_step_back_of_a_runaway_xpath_is_bounded_too():
    assert _step_back(_PAGE, "//div[@class='c3']/p") is not None  # the child is up
    start = time.perf_counter()
    assert _step_back(_PAGE, "//body/*[count(//*[count(//*)>0])>0]/p") is None
    assert time.perf_counter() - start < 1.5
    assert _step_back(_PAGE, "//div[@class='c3']/p")[1] == '<div class="c3"><span>t3</span></div>'


def test_the_xpath_child_dies_with_a_killed_harness(tmp_path):
    code = (
        "from iclr26.liveweb_ie.xpath_worker import XPathRunner\n"
        "r = XPathRunner(deadline_s=600)\n"
        f"r.run({_PAGE!r}, '//*[count(//*[count(//*[count(//*)>0])>0])>0]', 'text')\n"
    )
    harness = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": "src"})

    def evaluating() -> str | None:  # the child, once it has spent a second of CPU on the XPath
        out = subprocess.run(["pgrep", "-P", str(harness.pid)], capture_output=True, text=True).stdout
        for pid in out.split():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[11]) + int(fields[12]) >= os.sysconf("SC_CLK_TCK"):
                    return pid
        return None

    try:
        pid = wait_until(evaluating, 30, "the XPath child evaluating")
    finally:
        harness.kill()
        harness.wait()
    wait_until(lambda: not os.path.exists(f"/proc/{pid}"), 10, "the XPath child gone after SIGKILL")
