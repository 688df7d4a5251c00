"""The built-here DevOps-Gym suite: Java (Maven, offline) and Go (standard library) tasks in
Terminal-Bench v1's layout, over DevOps-Gym's five categories.

Each task is written from a `TaskDraft` (`write_task`): `task.yaml`, `run-tests.sh`, `solution.sh`,
`tests/` (with `checks.py`, the verifiers' shared helpers), `workspace/` (the repository the agent
starts in), `services/` for monitored processes, and a `Dockerfile` that builds the same
environment for users with a Docker engine. `build_suite(root)` writes every task; the category
modules hold the tasks themselves:
- `build`: repairs of the paper's five build-error types, and implementation tasks;
- `code`: eight bugs, each an issue-resolving task and a strict test-generation task;
- `monitor`: services that develop an anomaly at a seeded time, and healthy controls;
- `end_to_end`: build fix, then diagnosis, then code fix, then a regression test, in one repository.
"""

from __future__ import annotations

import random
import shutil
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from iclr26.devops_gym.task import (
    CATEGORIES,
    RUN_TESTS,
    SERVICE_START,
    SOLUTION,
    TESTS_DIR,
    WORKSPACE,
    TaskSpec,
    write_spec,
)

SUITE_VERSION = 5
"""Bumped whenever a task changes, so a cached suite is rewritten."""
AUTHOR = "iclr26-devops-gym@example.org"
"""The `author_email` of the built-here tasks (Terminal-Bench asks for one)."""
CHECKS = Path(__file__).with_name("checks.py")
RUN_TESTS_SH = """#!/bin/bash
# Terminal-Bench entry point: the tests in $TEST_DIR judge the agent's work dir (the current one).
export APP_DIR="${APP_DIR:-$PWD}"
cd "$TEST_DIR" || exit 1
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
exec "$PY" -m pytest -rA -p no:cacheprovider test_outputs.py
"""
DOCKER_BASE = {
    "java": "maven:3.8-eclipse-temurin-17",
    "go": "golang:1.19",
    "python": "python:3.11-slim",
}


@dataclass
class TaskDraft:
    """One task before it is written: its spec, files and reference solution."""

    name: str
    category: str
    language: str  # java, go or python (monitoring services)
    difficulty: str
    instruction: str
    workspace: Mapping[str, str]
    tests: str  # the body of tests/test_outputs.py
    solution: str  # the body of solution.sh (runs in the work dir)
    tags: tuple[str, ...] = ()
    test_files: Mapping[str, str] = field(default_factory=dict)  # more files under tests/
    services: Mapping[str, str] = field(default_factory=dict)  # files under services/
    agent_timeout_s: float = 600.0
    test_timeout_s: float = 240.0

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"TaskDraft {self.name}: unknown category {self.category!r}")
        if self.services and "start.sh" not in self.services:
            raise ValueError(f"TaskDraft {self.name}: services/ needs a start.sh")


def dedent(text: str) -> str:
    """`textwrap.dedent` without the leading newline of a triple-quoted literal."""
    return textwrap.dedent(text).lstrip("\n")


def _write_tree(root: Path, files: Mapping[str, str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def _dockerfile(draft: TaskDraft) -> str:
    lines = [f"FROM {DOCKER_BASE[draft.language]}", "WORKDIR /app", f"COPY {WORKSPACE}/ /app/"]
    if draft.language == "java":  # the tasks build offline: warm the local repository at image build
        lines.append("RUN mvn -B -q dependency:go-offline || true")
    if draft.services:
        # the service's source (its mode written in) is deleted once it runs, as the local runner does:
        # a look at /opt/service would otherwise name the anomaly
        start = "bash /opt/service/start.sh && rm -rf /opt/service && exec sleep infinity"
        lines += ["COPY services/ /opt/service/", f'CMD ["bash", "-c", "{start}"]']
    return "\n".join(lines) + "\n"


def write_task(draft: TaskDraft, root: Path) -> Path:
    """Write `draft` as a Terminal-Bench task folder `root/<category>/<name>` and return it."""
    path = root / draft.category / draft.name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    spec = TaskSpec(
        instruction=draft.instruction.strip() + "\n",
        category=draft.category,
        difficulty=draft.difficulty,
        tags=(draft.language, *draft.tags),
        max_agent_timeout_sec=draft.agent_timeout_s,
        max_test_timeout_sec=draft.test_timeout_s,
        author_email=AUTHOR,
    )
    write_spec(path / "task.yaml", spec)
    (path / RUN_TESTS).write_text(RUN_TESTS_SH)
    (path / SOLUTION).write_text("#!/bin/bash\nset -euo pipefail\n" + draft.solution.strip() + "\n")
    tests = path / TESTS_DIR
    _write_tree(tests, {"test_outputs.py": draft.tests, **draft.test_files})
    shutil.copy(CHECKS, tests / "checks.py")
    _write_tree(path / WORKSPACE, draft.workspace)
    (path / WORKSPACE).mkdir(exist_ok=True)
    if draft.services:
        _write_tree(path / SERVICE_START.split("/")[0], draft.services)
    (path / "Dockerfile").write_text(_dockerfile(draft))
    return path


def all_drafts(seed: int = 0) -> list[TaskDraft]:
    """Every built-here task; `seed` sets the monitoring faults' onset times."""
    from iclr26.devops_gym.suite import build, code, end_to_end, monitor

    rng = random.Random(seed)
    return [*build.drafts(), *code.drafts(), *monitor.drafts(rng), *end_to_end.drafts()]


def build_suite(root: Path, seed: int = 0) -> Path:
    """Write the whole suite under `root` (rewritten when the suite version or seed changed)."""
    stamp = root / ".suite"
    want = f"{SUITE_VERSION} seed={seed}"
    if stamp.is_file() and stamp.read_text() == want:
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for draft in all_drafts(seed):
        write_task(draft, root)
    stamp.write_text(want)
    return root
