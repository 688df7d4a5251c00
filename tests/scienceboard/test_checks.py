"""ScienceBoard's checks against real apps' state: each check type passes on the right final state
and fails on a wrong one (pdflatex for TeXstudio's documents, `grass --exec` on a location built
here), and the stop rules (DONE, FAIL, ANS)."""

from __future__ import annotations

import time

import pytest

from iclr26.core.errors import UserError
from iclr26.scienceboard.checks import LocalProbe, evaluate
from iclr26.scienceboard.task import parse_task

DOC = (
    "\\documentclass{article}\n\\begin{document}\nThe molar mass of water is xxx.xx g/mol.\n\\end{document}\n"
)


def _task(evaluate_, initialize=None, kind="TeXstudio"):
    return parse_task(
        {
            "type": kind, "sort": "VM", "steps": 5, "version": "0.1", "instruction": "edit",
            "initialize": initialize if initialize is not None else
            [{"func": "touch", "path": "/home/user/doc/main.tex", "text": DOC}],
            "evaluate": evaluate_,
        },
        "t.json",
    )  # fmt: skip


@pytest.fixture
def doc(tmp_path):
    folder = tmp_path / "home" / "user" / "doc"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.debian("texlive-latex-base")
def test_texstudio_checks_on_real_pdflatex(tmp_path, doc):
    probe = LocalProbe(tmp_path)
    task = _task([
        {"type": "file", "path": "/home/user/doc/main.tex", "source": "xxx.xx", "target": "18.02"},
        {"type": "include", "path": "/home/user/doc/main.tex", "pattern": r"\b18\.02\b"},
        {"type": "compile", "path": "/home/user/doc", "file": "main"},
    ])  # fmt: skip
    (doc / "main.tex").write_text(DOC.replace("xxx.xx", "18.02"))  # the oracle's final state
    ok, results = evaluate(task, probe, "DONE")
    assert ok, results
    (doc / "main.tex").write_text(DOC.replace("xxx.xx", "18.2"))  # a wrong value: file and include fail
    ok, results = evaluate(task, probe, "DONE")
    assert not ok and [r.passed for r in results] == [False, False, True]
    (doc / "main.tex").write_text(
        DOC.replace("xxx.xx", "18.02").replace("\\end{document}", "\\begin{itemize}")
    )
    ok, results = evaluate(task, probe, "DONE")  # does not compile
    assert not ok and not results[2].passed and "pdflatex failed" in results[2].detail
    assert not (doc / "main.aux").exists()  # compiled on a copy: the user's folder is untouched


@pytest.mark.debian("grass-core")
def test_grass_db_and_info_checks_on_a_real_location(tmp_path):
    from iclr26.scienceboard.probes import GrassLocation, ProbeError

    loc = GrassLocation.create(tmp_path / "grassdata" / "world")
    points = tmp_path / "points.txt"
    points.write_text("1|10|20|Alpha|3.5\n2|11|21|Beta|4.0\n")
    cols = "cat int, x double precision, y double precision, name varchar(20), depth double precision"
    loc.run("v.in.ascii", input=points, output="sites", columns=cols, x=2, y=3, cat=1)
    task = _task(
        [
            {"type": "db", "cmd": "v.db.select", "kwargs": {"map": "sites", "format": "json"},
             "key": "lambda out: sorted(r['name'] for r in out['records'])", "value": ["Alpha", "Beta"]},
            {"type": "info", "key": "lambda dump: dump['region']['n']", "value": 21.0,
             "pred": "lambda key, value: abs(key - value) < 1e-6"},
        ],
        initialize=[], kind="GrassGIS",
    )  # fmt: skip
    probe = LocalProbe(tmp_path, grass=loc)
    ok, results = evaluate(task, probe, "DONE")
    assert not ok and [r.passed for r in results] == [True, False]  # the region is still the default
    loc.run("g.region", vector="sites")  # what the agent was asked to do
    ok, results = evaluate(task, probe, "DONE")
    assert ok, results
    loc.run("v.db.update", map="sites", column="name", value="Gamma", where="cat=2")  # a wrong edit
    assert not evaluate(task, probe, "DONE")[0]
    with pytest.raises(ProbeError, match=r"v\.db\.select"):
        loc.run("v.db.select", map="no_such_map")


def test_stop_rules(tmp_path):
    probe = LocalProbe(tmp_path, kalgebra_vars={"p": "1+-i", "x": "2.0000001"})
    ans = _task([{"type": "stop", "value": "ANS", "args": ["10.31"]}], initialize=[], kind="KAlgebra")
    assert evaluate(ans, probe, "ANS", "  10.31 ")[0]
    assert not evaluate(ans, probe, "ANS", "10.3")[0] and not evaluate(ans, probe, "DONE")[0]
    infeasible = _task([{"type": "stop", "value": "FAIL"}], initialize=[], kind="KAlgebra")
    assert evaluate(infeasible, probe, "FAIL")[0] and not evaluate(infeasible, probe, "DONE")[0]
    var = _task([{"type": "var", "key": "p", "value": "1+-i"}, {"type": "val", "key": "x", "value": 2}],
                initialize=[], kind="KAlgebra")  # fmt: skip
    assert evaluate(var, probe, "DONE")[0]
    assert not evaluate(var, probe, "FAIL")[0]  # right state, but the agent gave up: not a pass
    assert evaluate(var, probe, "TIMEOUT")[0]  # out of steps with the right state: the state decides
    undef = _task([{"type": "var", "key": "q", "value": "#UNDEF"}], initialize=[], kind="KAlgebra")
    assert evaluate(undef, probe, "DONE")[0]
    with pytest.raises(ValueError, match="stop must be one of"):
        evaluate(var, probe, "QUIT")


def test_task_paths_cannot_leave_the_task_folder(tmp_path):
    (tmp_path / "secret.txt").write_text("x")
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(UserError, match=r"evaluate\[0\]: field 'path': '/\.\./secret\.txt' is not a path"):
        _task([{"type": "include", "path": "/../secret.txt", "pattern": "x"}], initialize=[])
    with pytest.raises(ValueError, match="leaves its folder"):  # and where the path is used
        LocalProbe(root).read_text("/../secret.txt")


@pytest.mark.parametrize(
    ("check", "detail"),
    [  # `re` took 5 s on each of the first two (more `a`s: minutes)
        ({"pattern": "(a|aa)+$"}, "ran over 0.25 s"),
        ({"value": "lambda: str(__import__('re').search('(a|aa)+$', 'a' * 36 + 'b'))"}, "ran over 0.25 s"),
        ({"pattern": "(a"}, "is not a regular expression"),
        ({"pattern": "a" * 3000}, "at most 2000 characters"),
    ],
)
def test_a_task_pattern_that_runs_away_fails_its_check_within_a_second(tmp_path, doc, check, detail):
    (doc / "main.tex").write_text("a" * 36 + "b")  # what the agent left in the document
    kind = "include" if "pattern" in check else "file"
    task = _task([{"type": kind, "path": "/home/user/doc/main.tex", **check}])
    start = time.perf_counter()
    ok, results = evaluate(task, LocalProbe(tmp_path), "DONE")
    assert time.perf_counter() - start < 1.5  # 0.25 s per pattern, with room for a loaded machine
    assert not ok and detail in results[0].detail and "PatternError" in results[0].detail
