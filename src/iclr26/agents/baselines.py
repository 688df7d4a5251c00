"""Oracle and null agents, and the check that makes a task suite valid.

A benchmark's task suite is valid only when its oracle agent (which plays each task's reference
solution) passes every task and its null agent (which does nothing and says DONE) passes none:
otherwise a task is broken (unsolvable, or passed by doing nothing) and its scores mean little.
`check_suite` compares the two runs; every agent benchmark prints both rows (`suite_rows`).
Neither agent is a language model, and both are labelled so in every table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iclr26.agents.episode import Episode
from iclr26.agents.loop import AgentReply, Observation
from iclr26.core.errors import UserError

ORACLE = "oracle (reference solution)"
NULL = "null (does nothing)"


class OracleAgent:
    """Replays each task's reference solution: a list of replies in the task's action format
    (e.g. one ```bash block with solution.sh, then DONE), one per step."""

    name = ORACLE

    def __init__(self, solutions: Mapping[str, Sequence[str]]) -> None:
        empty = [t for t, replies in solutions.items() if not replies]
        if empty:
            raise UserError(f"OracleAgent: tasks {empty} have an empty reference solution")
        self.solutions = {t: list(r) for t, r in solutions.items()}
        self._replies: list[str] = []

    def reset(self, task_id: str, instruction: str) -> None:
        """Queue the reference solution of `task_id`."""
        if task_id not in self.solutions:
            raise UserError(f"OracleAgent has no reference solution for task {task_id!r}")
        self._replies = list(self.solutions[task_id])

    def act(self, observation: Observation) -> AgentReply:
        """The next reply of the reference solution, then DONE."""
        return AgentReply(self._replies.pop(0) if self._replies else "DONE")


class NullAgent:
    """Does nothing: says DONE at the first step."""

    name = NULL

    def __init__(self, reply: str = "DONE") -> None:
        self.reply = reply

    def reset(self, task_id: str, instruction: str) -> None:
        """Nothing to forget."""

    def act(self, observation: Observation) -> AgentReply:
        """DONE (or the given do-nothing reply)."""
        return AgentReply(self.reply)


@dataclass(frozen=True)
class SuiteCheck:
    """Whether a task suite is valid: the oracle passed every task and the null agent none."""

    tasks: int
    oracle_passed: int
    null_passed: int
    oracle_failed_tasks: tuple[str, ...]
    null_passed_tasks: tuple[str, ...]

    @property
    def valid(self) -> bool:
        """Oracle passes all, null passes none."""
        return self.oracle_passed == self.tasks and self.null_passed == 0

    def describe(self) -> str:
        """One line: valid, or which tasks break it."""
        if self.valid:
            return f"valid: the oracle passes {self.tasks}/{self.tasks} tasks, the null agent 0/{self.tasks}"
        problems = []
        if self.oracle_failed_tasks:
            problems.append(f"the oracle fails {', '.join(self.oracle_failed_tasks)}")
        if self.null_passed_tasks:
            problems.append(f"the null agent passes {', '.join(self.null_passed_tasks)}")
        return "INVALID task suite: " + "; ".join(problems)

    def raise_if_invalid(self) -> None:
        """Raise `UserError` naming the broken tasks."""
        if not self.valid:
            raise UserError(self.describe())


def check_suite(oracle: Sequence[Episode], null: Sequence[Episode]) -> SuiteCheck:
    """Compare the oracle's and the null agent's episodes on the same tasks."""
    tasks = [e.task_id for e in oracle]
    if sorted(tasks) != sorted(e.task_id for e in null):
        raise UserError("check_suite: the oracle and null runs cover different tasks")
    return SuiteCheck(
        tasks=len(tasks),
        oracle_passed=sum(e.success for e in oracle),
        null_passed=sum(e.success for e in null),
        oracle_failed_tasks=tuple(e.task_id for e in oracle if not e.success),
        null_passed_tasks=tuple(e.task_id for e in null if e.success),
    )


def suite_rows(runs: Mapping[str, Sequence[Episode]]) -> list[list[object]]:
    """Table rows `[agent, passed, tasks, success rate, mean steps, tokens]`, one per agent."""
    rows: list[list[object]] = []
    for name, episodes in runs.items():
        n = len(episodes)
        passed = sum(e.success for e in episodes)
        steps = sum(len(e.steps) for e in episodes) / n if n else 0.0
        tokens = sum(e.prompt_tokens + e.completion_tokens for e in episodes)
        rows.append([name, passed, n, passed / n if n else 0.0, round(steps, 2), tokens])
    return rows


SUITE_COLUMNS = ["agent", "passed", "tasks", "success rate", "mean steps", "tokens"]
