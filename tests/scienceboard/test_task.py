"""ScienceBoard's task schema: files in the authors' layout (written here) load, bad fields are named,
code in a lambda is refused at load time, and each task maps to our app or says why it cannot."""

from __future__ import annotations

import json

import pytest

from iclr26.core.errors import UserError
from iclr26.scienceboard.task import load_tasks, map_task, parse_task


def task(**changes):
    base = {
        "type": "TeXstudio",
        "sort": "VM",
        "steps": 10,
        "version": "0.1",
        "instruction": "Replace xxx.xx with the molecular weight and compile.",
        "initialize": [
            {"func": "touch", "path": "/home/user/doc/main.tex", "text": "\\documentclass{article} xxx.xx"},
            {"func": "launch", "command": "texstudio /home/user/doc/main.tex", "shell": True, "wait": 2.5},
        ],
        "evaluate": [
            {"type": "file", "path": "/home/user/doc/main.tex", "source": "xxx.xx", "target": "18.02"},
            {"type": "compile", "path": "/home/user/doc", "file": "main"},
        ],
    }
    base.update(changes)
    return base


def test_authors_layout_loads_by_path_and_maps(tmp_path):
    folder = tmp_path / "tasks" / "VM" / "TeXstudio"
    folder.mkdir(parents=True)
    (folder / "A-01.json").write_text(json.dumps(task()))
    gis = task(
        type="GrassGIS",
        initialize=[{"func": "map", "grassdb": "/g", "location": "world", "mapset": "PERMANENT"}],
        evaluate=[{"type": "info", "key": "lambda dump: dump['region']['n']", "value": 90,
                   "pred": "lambda key, value: abs(key - value) < 1e-6"}],
    )  # fmt: skip
    (folder.parent / "GrassGIS").mkdir()
    (folder.parent / "GrassGIS" / "A-01.json").write_text(json.dumps(gis))
    tasks = load_tasks(tmp_path / "tasks")
    assert [t.type for t in tasks] == ["GrassGIS", "TeXstudio"]
    assert all(map_task(t).supported for t in tasks)
    assert map_task(tasks[1]).app == "texstudio" and map_task(tasks[0]).app == "grass"


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"type": "Lean"}, "cannot be installed offline"),
        ({"type": "ChimeraX"}, "not packaged in Debian"),
        ({"type": "Celestia"}, "Stellarium"),
        ({"type": "KAlgebra", "evaluate": [{"type": "eqn", "key": [[0, 0]], "value": {}}]}, "check 'eqn'"),
        ({"type": "KAlgebra", "initialize": [{"func": "tab", "index": 1}], "evaluate": []}, "step 'tab'"),
        ({"initialize": [{"func": "chimerax_open", "name": "2olx"}]}, "drives ChimeraX"),
        (
            {"type": "GrassGIS", "initialize": [],
             "evaluate": [{"type": "info", "key": "lambda dump: dump['layers']", "value": "x"}]},
            "reads layers from the GRASS GUI",
        ),
    ],
)  # fmt: skip
def test_unsupported_tasks_say_why(changes, reason):
    m = map_task(parse_task(task(**changes), "t.json"))
    assert not m.supported and any(reason in r for r in m.reasons), m.reasons


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"sort": "Docker"}, "sort must be one of"),
        ({"type": "Excel"}, "unknown app type 'Excel'"),
        ({"steps": 0}, "steps must be a positive int"),
        ({"evaluate": [{"type": "stop", "value": "MAYBE"}]}, "stop value must be one of"),
        ({"evaluate": [{"type": "stop", "value": "ANS", "args": "10.31"}]}, "needs args, a list of strings"),
        ({"initialize": [{"wait": 1}]}, "each with a string 'func'"),
        (
            {"evaluate": [{"type": "info", "key": "lambda dump: __import__('os').system('rm -rf /')"}]},
            "attribute 'system'",
        ),
        (
            {"evaluate": [{"type": "info", "key": "lambda d: d", "pred": "lambda k, v: open(k)"}]},
            "name 'open'",
        ),
    ],
)
def test_bad_fields_and_code_are_refused_at_load_time(changes, message):
    with pytest.raises(UserError, match=message):
        parse_task(task(**changes), "t.json")
    raw = task()
    del raw["instruction"]
    with pytest.raises(UserError, match="the task has no field instruction"):
        parse_task(raw, "t.json")


def test_answer_tasks_and_bad_paths(tmp_path):
    t = parse_task(task(evaluate=[{"type": "stop", "value": "ANS", "args": ["10.31"]}]), "t.json")
    assert t.answer_expected and map_task(t).supported
    with pytest.raises(UserError, match="does not exist"):
        load_tasks(tmp_path / "nowhere")
    with pytest.raises(UserError, match="no task files"):
        load_tasks(tmp_path)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(UserError, match=r"bad\.json: not JSON"):
        load_tasks(tmp_path)


def _run_cli(*args: str):
    from typer.testing import CliRunner

    import iclr26.cli as cli

    return CliRunner().invoke(cli.app, list(args))


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b'\xff\xfe{"type": "TeXstudio"}', "bad.json: not UTF-8 text"),  # was a UnicodeDecodeError
        (  # a predicate nested 300 deep: was a RecursionError in the checker
            json.dumps(task(evaluate=[{"type": "info", "key": "lambda d: " + "-" * 300 + "d"}])).encode(),
            "bad.json: evaluate[0]: evaluate 'key': predicate",
        ),
        (
            json.dumps(
                task(evaluate=[{"type": "info", "key": "lambda d: " + "+".join(["d"] * 600)}])
            ).encode(),
            "nests expressions over 64 levels deep",
        ),
        (  # a task path that climbs out of the task's folder: refused before any app starts
            json.dumps(
                task(initialize=[{"func": "touch", "path": "/home/user/../../../../tmp/x", "text": ""}])
            ).encode(),
            "bad.json: initialize[0]: field 'path': '/home/user/../../../../tmp/x' is not a path inside",
        ),
        (
            json.dumps(
                task(initialize=[{"func": "map", "grassdb": "/g", "location": "w", "mapset": "../../.."}])
            ).encode(),
            "bad.json: initialize[0]: field 'mapset': '../../..' is not a path inside",
        ),
    ],
)
def test_a_bad_task_file_is_one_error_line_through_the_cli(tmp_path, content, said):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "bad.json").write_bytes(content)
    res = _run_cli("run", "scienceboard", "--preset", "smoke", "--set", f"tasks={tmp_path / 'tasks'}",
                   "--out", str(tmp_path / "run"))  # fmt: skip
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and lines[-1].startswith("error: ") and said in lines[-1], res.output
    assert sum(line.startswith("error:") for line in lines) == 1 and "Traceback" not in res.output
