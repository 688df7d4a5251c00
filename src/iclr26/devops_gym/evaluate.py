"""Running agents over a suite: one sandbox per task, in parallel, resumable; and the metrics.

`run_agent` appends each finished trial to `trials.jsonl` in the run folder, so an interrupted run
resumes without redoing a task. `category_rows` makes DevOps-Gym's table: success per category and
Overall = the mean of build, monitoring, issue resolving and test generation, with end-to-end
reported apart, as the paper does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from iclr26.agents import Agent
from iclr26.core.interrupt import interrupt_workers, raise_if_interrupted
from iclr26.core.jsonfile import append_log, read_log
from iclr26.core.parallel import parallel_map
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


def _trial(args: tuple[Task, Agent, RunLimits, bool, str]) -> TrialResult:
    raise_if_interrupted()  # a worker told to stop starts no trial queued for it before
    task, agent, limits, oracle, runner = args
    if runner == "docker":
        from iclr26.devops_gym.docker import run_docker_trial

        return run_docker_trial(task, agent, limits, oracle=oracle)
    return run_trial(task, agent, limits, oracle=oracle)


def read_trials(path: Path) -> list[TrialResult]:
    """The trials recorded in a `trials.jsonl` (`core.jsonfile.read_log`: a torn last line from an
    interrupted run is dropped and that trial redone)."""
    return [TrialResult(**record) for record in read_log(path)]


def run_agent(
    tasks: Sequence[Task],
    agent: Agent,
    limits: RunLimits,
    trials_file: Path,
    *,
    oracle: bool = False,
    jobs: int = 1,
    backend: str = "process",
    runner: str = "local",
    on_result: Callable[[TrialResult], None] | None = None,
) -> list[TrialResult]:
    """`agent` on every task (a fresh sandbox, or with `runner="docker"` a compose project, each),
    `jobs` at a time; trials already in `trials_file` for this agent are kept, not rerun."""
    done = {t.task_id: t for t in read_trials(trials_file) if t.agent == agent.name}
    todo = [t for t in tasks if t.task_id not in done]

    def record(result: TrialResult) -> None:
        append_log(trials_file, dataclasses.asdict(result))
        done[result.task_id] = result
        if on_result is not None:
            on_result(result)

    work = [(t, agent, limits, oracle, runner) for t in todo]
    if backend == "ray" and work:
        for result in parallel_map(_trial, work, backend="ray"):
            record(result)
    elif jobs > 1 and len(work) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            try:
                for future in as_completed([pool.submit(_trial, w) for w in work]):
                    record(future.result())
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM: each worker stops its trial and cleans up
                interrupt_workers(pool)
                raise
    else:
        for w in work:
            record(_trial(w))
    return [done[t.task_id] for t in tasks]


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
