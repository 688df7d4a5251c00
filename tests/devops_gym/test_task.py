"""Terminal-Bench task folders (loader, errors naming the field) and the pytest-output parser on
real pytest runs."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from iclr26.devops_gym.parser import ParseError, TestStatus, parse_pytest, resolved
from iclr26.devops_gym.task import TaskError, TaskSpec, load_task, load_tasks, parse_spec, write_spec


def _task(root, name="t1", category="build", spec=None, tests=True, run_tests=True, **files):
    path = root / name
    (path / "tests").mkdir(parents=True)
    data = (
        spec
        if spec is not None
        else {"instruction": "Fix the build.", "category": category, "difficulty": "easy"}
    )
    (path / "task.yaml").write_text(yaml.safe_dump(data))
    if run_tests:
        (path / "run-tests.sh").write_text("#!/bin/bash\n")
    if tests:
        (path / "tests" / "test_outputs.py").write_text("def test_x():\n    pass\n")
    for rel, text in files.items():
        (path / rel.replace("__", "/")).parent.mkdir(parents=True, exist_ok=True)
        (path / rel.replace("__", "/")).write_text(text)
    return path


def test_a_terminal_bench_folder_loads_with_its_fields(tmp_path):
    path = _task(tmp_path, spec={
        "instruction": "Make `mvn -o test` pass.", "category": "build", "difficulty": "hard",
        "tags": ["java"], "parser_name": "pytest", "max_agent_timeout_sec": 120,
        "max_test_timeout_sec": 30, "run_tests_in_same_shell": True, "author_email": "a@b.c",
        "estimated_duration_sec": 60,
    }, **{"workspace__pom.xml": "<project/>"})  # fmt: skip
    task = load_task(path)
    assert task.task_id == "build/t1"
    assert task.spec.max_agent_timeout_sec == 120.0 and task.spec.run_tests_in_same_shell
    assert task.spec.extra == {"estimated_duration_sec": 60}  # unknown keys are kept
    assert task.workspace == path / "workspace" and not task.needs_docker


def test_spec_round_trips_through_write_spec(tmp_path):
    spec = TaskSpec("Do it.", "monitor", "medium", ("go",), max_agent_timeout_sec=60.0)
    write_spec(tmp_path / "task.yaml", spec)
    assert parse_spec(yaml.safe_load((tmp_path / "task.yaml").read_text())) == spec


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"category": "deploy"}, "category"),
        ({"difficulty": "extreme"}, "difficulty"),
        ({"max_agent_timeout_sec": -1}, "max_agent_timeout_sec"),
        ({"max_test_timeout_sec": "soon"}, "max_test_timeout_sec"),
        ({"tags": "java"}, "tags"),
        ({"parser_name": "junit"}, "parser_name"),
        ({"run_tests_in_same_shell": "yes"}, "run_tests_in_same_shell"),
        ({"instruction": "  "}, "instruction"),
    ],
)
def test_a_malformed_task_yaml_names_the_field(tmp_path, change, field):
    spec = {"instruction": "x", "category": "build", **change}
    with pytest.raises(TaskError, match=field):
        load_task(_task(tmp_path, spec=spec))


def test_missing_instruction_and_bad_yaml_are_named(tmp_path):
    with pytest.raises(TaskError, match="'instruction' is missing"):
        load_task(_task(tmp_path, "a", spec={"category": "build"}))
    path = _task(tmp_path, "b")
    (path / "task.yaml").write_text("instruction: [unclosed\n")
    with pytest.raises(TaskError, match="not valid YAML"):
        load_task(path)


def test_a_task_without_tests_is_refused_before_any_agent(tmp_path):
    with pytest.raises(TaskError, match=r"tests are missing: no run-tests\.sh"):
        load_task(_task(tmp_path, "a", run_tests=False))
    with pytest.raises(TaskError, match="tests are missing: tests/"):
        load_task(_task(tmp_path, "b", tests=False))


def test_docker_only_tasks_are_recognised_and_ids_are_unique(tmp_path):
    _task(tmp_path / "tasks", "svc", category="monitor", **{"docker-compose.yaml": "services: {}\n"})
    _task(tmp_path / "tasks", "local", **{"workspace__main.go": "package main\n"})
    tasks = load_tasks(tmp_path / "tasks")
    assert [(t.task_id, t.needs_docker) for t in tasks] == [("build/local", False), ("monitor/svc", True)]
    _task(tmp_path / "tasks" / "again", "local")
    with pytest.raises(TaskError, match="appear twice: build/local"):
        load_tasks(tmp_path / "tasks")


def test_the_parser_reads_a_real_pytest_run(tmp_path):
    (tmp_path / "test_outputs.py").write_text(
        "import pytest\n"
        "def test_ok():\n    pass\n"
        "def test_bad():\n    assert 1 == 2\n"
        "@pytest.mark.skip(reason='no')\ndef test_skipped():\n    pass\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('x')\n"
        "def test_errors(broken):\n    pass\n"
        "@pytest.mark.parametrize('n', ['a.b', 'c'])\ndef test_param(n):\n    assert n != 'c'\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_outputs.py"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    statuses = parse_pytest(out)
    assert statuses == {
        "test_ok": TestStatus.PASSED,
        "test_bad": TestStatus.FAILED,
        "test_outputs.py:6": TestStatus.SKIPPED,  # pytest names a skip by its location
        "test_errors": TestStatus.ERROR,
        "test_param[a.b]": TestStatus.PASSED,
        "test_param[c]": TestStatus.FAILED,
    }
    assert not resolved(statuses)
    assert resolved({"test_ok": TestStatus.PASSED}) and not resolved({})
    assert not resolved({"test_ok": TestStatus.PASSED, "test_skipped": TestStatus.SKIPPED})


def test_output_without_a_summary_is_a_parse_error():
    with pytest.raises(ParseError):
        parse_pytest("bash: pytest: command not found\n")


def test_a_task_yaml_that_is_not_utf8_is_one_error_line_through_the_cli(tmp_path):
    from typer.testing import CliRunner

    import iclr26.cli as cli

    path = _task(tmp_path / "tasks", "t1")
    (path / "task.yaml").write_bytes(b"instruction: \xff\xfe fix it\ncategory: build\n")
    res = CliRunner().invoke(
        cli.app,
        [
            "run",
            "devops_gym",
            "--preset",
            "smoke",
            "--set",
            f"tasks={tmp_path / 'tasks'}",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and lines[-1].startswith("error: "), res.output  # was a UnicodeDecodeError
    assert f"{path / 'task.yaml'}: not UTF-8 text" in lines[-1] and "Traceback" not in res.output
