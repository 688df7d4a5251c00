"""Shared fixtures: the built-here suite written once per session, and a scripted agent."""

from __future__ import annotations

import pytest

from iclr26.agents import AgentReply, Observation
from iclr26.devops_gym.suite import build_suite
from iclr26.devops_gym.task import Task, load_task

DEBIAN = ("bubblewrap", "tmux", "golang-go", "python3-pytest")
"""The Debian packages every suite test needs (Java tests add maven and the JDK)."""


class ScriptAgent:
    """Replies with the given shell commands, one per turn, then DONE (a scripted solution, not a model)."""

    name = "script"

    def __init__(self, *commands: str) -> None:
        self.commands = list(commands)
        self._queue: list[str] = []

    def reset(self, task_id: str, instruction: str) -> None:
        self._queue = list(self.commands)

    def act(self, observation: Observation) -> AgentReply:
        return AgentReply(f"```bash\n{self._queue.pop(0)}\n```" if self._queue else "DONE")


@pytest.fixture(scope="session")
def suite(tmp_path_factory):
    """The whole built-here suite, written once."""
    return build_suite(tmp_path_factory.mktemp("devops") / "tasks")


@pytest.fixture
def task(suite, request) -> Task:
    """The task named by the test's `task_id` parameter."""
    return load_task(suite / request.param)
