"""One agent on one task (`run_task`, a study's cell), and the metrics: `category_row` makes
DevOps-Gym's table, success per category and Overall = the mean of build, monitoring, issue resolving
and test generation, with end-to-end reported apart, as the paper does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from iclr26.agents import Agent
from iclr26.devops_gym.runner import RunLimits, TrialResult, run_trial
from iclr26.devops_gym.task import Task

OVERALL_CATEGORIES = ("build", "monitor", "issue_resolving", "test_generation")
"""The four categories Overall averages (end-to-end is reported apart)."""
COLUMNS = [
    "agent",
    "build %",
    "monitoring %",
    "issue resolving %",
    "test generation %",
    "Overall %",
    "end-to-end %",
    "tasks",
]


def run_task(
    task: Task, agent: Agent, limits: RunLimits, *, oracle: bool = False, runner: str = "local"
) -> TrialResult:
    """`agent` on `task`: a fresh sandbox (or with `runner="docker"` a compose project), then the
    task's tests."""
    if runner == "docker":
        from iclr26.devops_gym.docker import run_docker_trial

        return run_docker_trial(task, agent, limits, oracle=oracle)
    return run_trial(task, agent, limits, oracle=oracle)


def _rate(trials: Sequence[TrialResult], category: str) -> float | None:
    mine = [t for t in trials if t.category == category]
    return 100.0 * sum(t.resolved for t in mine) / len(mine) if mine else None


def category_row(name: str, trials: Sequence[TrialResult]) -> list[Any]:
    """`[agent, build, monitoring, issue, test generation, Overall, end-to-end, tasks]` in %
    ('' where the agent ran no task of a category)."""
    rates = [_rate(trials, c) for c in OVERALL_CATEGORIES]
    present = [r for r in rates if r is not None]
    overall = sum(present) / len(present) if present else None
    e2e = _rate(trials, "end_to_end")
    cells = [*rates, overall, e2e]
    return [name, *("" if r is None else round(r, 1) for r in cells), len(trials)]


def task_rows(trials: Sequence[TrialResult]) -> list[list[Any]]:
    """Per-task rows: resolved, failure mode, steps, tokens, agent and test seconds."""
    return [
        [
            t.agent,
            t.task_id,
            t.difficulty,
            "yes" if t.resolved else "no",
            t.failure_mode,
            t.steps,
            t.prompt_tokens + t.completion_tokens,
            round(t.agent_s, 1),
            round(t.test_s, 1),
        ]
        for t in trials
    ]


TASK_COLUMNS = [
    "agent",
    "task",
    "difficulty",
    "resolved",
    "failure mode",
    "steps",
    "tokens",
    "agent s",
    "test s",
]
