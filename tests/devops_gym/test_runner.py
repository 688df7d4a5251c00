"""The local runner: per-command and per-agent timeouts, test timeouts, parse errors, the sandbox's
limits, and tests copied in only after the agent stops (in their own session)."""

from __future__ import annotations

import pytest

from iclr26.devops_gym.runner import RunLimits, TaskEnvironment, run_trial, truncate
from iclr26.devops_gym.suite import TaskDraft, write_task
from iclr26.devops_gym.task import load_task
from tests.devops_gym.conftest import ScriptAgent

pytestmark = pytest.mark.debian("bubblewrap", "tmux", "python3-pytest")

CHECK_MARKER = """from checks import APP_DIR

def test_marker():
    assert (APP_DIR / "marker").read_text().strip() == "ok"
"""


def _task(tmp_path, tests=CHECK_MARKER, **kw):
    draft = TaskDraft(
        name=kw.pop("name", "toy"),
        category="build",
        language="go",
        difficulty="easy",
        instruction="Write ok to ./marker.",
        workspace={"README": "toy\n"},
        tests=tests,
        solution="echo ok > marker",
        **kw,
    )
    return load_task(write_task(draft, tmp_path))


def test_a_scripted_fix_resolves_and_doing_nothing_does_not(tmp_path):
    task = _task(tmp_path)
    assert run_trial(task, ScriptAgent("echo ok > marker")).resolved
    result = run_trial(task, ScriptAgent("echo no > marker"))
    assert not result.resolved and result.failure_mode == "none" and result.tests == {"test_marker": "FAILED"}


def test_a_hanging_command_is_interrupted_at_its_timeout(tmp_path):
    task = _task(tmp_path)
    limits = RunLimits(command_timeout_s=1.0)
    result = run_trial(task, ScriptAgent("sleep 30", "echo ok > marker"), limits)
    assert result.command_timeouts == 1 and result.resolved  # C-c, and the shell still works
    observation = result.episode["steps"][1]["observation"]
    assert "timed out after 1 s and was interrupted" in observation


def test_an_agent_that_loops_is_stopped_at_the_agent_timeout(tmp_path):
    task = _task(tmp_path, agent_timeout_s=2.0)
    result = run_trial(task, ScriptAgent(*["sleep 0.5"] * 50), RunLimits(max_steps=100))
    assert result.failure_mode == "agent_timeout" and not result.resolved
    assert result.agent_s < 6.0


def test_a_test_run_past_its_limit_is_a_test_timeout(tmp_path):
    task = _task(tmp_path, tests="import time\n\ndef test_slow():\n    time.sleep(30)\n", test_timeout_s=2.0)
    result = run_trial(task, ScriptAgent("true"))
    assert result.failure_mode == "test_timeout" and not result.resolved and result.test_s < 10


def test_output_without_a_pytest_summary_is_a_parse_error(tmp_path):
    task = _task(tmp_path)
    (task.path / "run-tests.sh").write_text("#!/bin/bash\necho 'no tests here'\n")
    result = run_trial(task, ScriptAgent("echo ok > marker"))
    assert result.failure_mode == "parse_error" and not result.resolved


def test_tests_are_absent_while_the_agent_works_and_run_in_their_own_session(tmp_path):
    task = _task(
        tmp_path,
        tests=CHECK_MARKER
        + "\n\ndef test_not_the_agent_shell():\n    import os\n    assert 'AGENT_MARK' not in os.environ\n",
    )
    env = TaskEnvironment(task)
    try:
        env.reset()
        from iclr26.agents import Action

        seen = env.step(
            Action(
                "code", "ls -a; ls /run/tests 2>&1; ls $TEST_DIR 2>&1; echo ok > marker; export AGENT_MARK=1"
            )
        )
        assert "test_outputs.py" not in seen.observation and "checks.py" not in seen.observation
        assert env.evaluate(None), env.test_run.output
    finally:
        env.close()


def test_the_sandbox_has_no_network_and_its_limits(tmp_path):
    task = _task(tmp_path)
    env = TaskEnvironment(task, RunLimits(open_files=200))
    try:
        env.reset()
        from iclr26.agents import Action

        net = env.step(
            Action(
                "code",
                "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)\""
                " 2>&1 | tail -1",
            )
        )
        assert "Network is unreachable" in net.observation or "[exit 1]" in net.observation
        fds = env.step(Action("code", "ulimit -n; touch /usr/x 2>&1; id -un"))
        assert "200" in fds.observation and "Read-only file system" in fds.observation
        assert "nobody" in fds.observation or "root" not in fds.observation
    finally:
        env.close()


def test_truncate_keeps_both_ends():
    text = "a" * 500 + "b" * 500
    cut = truncate(text, 200)
    assert cut.startswith("a" * 100) and cut.endswith("b" * 100) and "800 characters cut" in cut
    assert truncate("short", 200) == "short"


def test_bad_limits_are_named():
    with pytest.raises(ValueError, match="max_steps"):
        RunLimits(max_steps=0)
    with pytest.raises(ValueError, match="command_timeout_s"):
        RunLimits(command_timeout_s=-1)
