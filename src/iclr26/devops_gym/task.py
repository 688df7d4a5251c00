"""Terminal-Bench v1 task folders: `task.yaml`, `run-tests.sh`, `solution.sh`, `tests/`, and how a
task's environment is built (a `Dockerfile` or `docker-compose.yaml`, or here a `workspace/`).

DevOps-Gym's public tasks (`tasks/<category>/<task>/`) use this layout. A folder is loaded by path;
a malformed `task.yaml` gets an error naming the field, and a task without tests is refused before
any agent starts. Our built-here tasks add two things the local runner reads:
- `workspace/`: the repository the agent starts in (the role of the Dockerfile's `COPY ... /app`);
- `services/start.sh` (optional): started in the agent's terminal before its first turn (a
  monitored service), then deleted from the work dir.
A task with neither a `workspace/` nor any environment file runs in an empty work dir; a task with
a Dockerfile or compose file and no `workspace/` needs the Docker runner (`Task.needs_docker`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from iclr26.core.errors import UserError

CATEGORIES: tuple[str, ...] = ("build", "monitor", "issue_resolving", "test_generation", "end_to_end")
"""DevOps-Gym's task categories (the folder names of its `tasks/`)."""
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
PARSERS: tuple[str, ...] = ("pytest",)
"""Test-output parsers we implement (Terminal-Bench's `parser_name`)."""
TASK_FILE = "task.yaml"
RUN_TESTS = "run-tests.sh"
SOLUTION = "solution.sh"
TESTS_DIR = "tests"
WORKSPACE = "workspace"
SERVICE_START = "services/start.sh"
DOCKER_FILES: tuple[str, ...] = ("Dockerfile", "docker-compose.yaml", "docker-compose.yml")


class TaskError(UserError):
    """A task folder that cannot be run as written (the message names the file and field)."""


@dataclass(frozen=True)
class TaskSpec:
    """The fields of a Terminal-Bench v1 `task.yaml` that a run uses."""

    instruction: str
    category: str
    difficulty: str = "medium"
    tags: tuple[str, ...] = ()
    parser_name: str = "pytest"
    max_agent_timeout_sec: float = 360.0
    max_test_timeout_sec: float = 60.0
    run_tests_in_same_shell: bool = False
    author_email: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # keys we do not use, kept for round trips


def _field(where: str, name: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise TaskError(f"{where}: field {name!r} must be {what}, got {value!r}")
    return value


def parse_spec(data: Any, where: str = TASK_FILE) -> TaskSpec:
    """Check a loaded `task.yaml` mapping field by field; the first bad field raises `TaskError`."""
    if not isinstance(data, dict):
        raise TaskError(f"{where}: expected a mapping of fields, got {type(data).__name__}")
    if "instruction" not in data:
        raise TaskError(f"{where}: field 'instruction' is missing")
    instruction = _field(where, "instruction", data["instruction"], str, "a non-empty string")
    if not instruction.strip():
        raise TaskError(f"{where}: field 'instruction' is empty")
    category = str(data.get("category", ""))
    if category not in CATEGORIES:
        raise TaskError(f"{where}: field 'category' must be one of {', '.join(CATEGORIES)}, got {category!r}")
    difficulty = str(data.get("difficulty", "medium"))
    if difficulty not in DIFFICULTIES:
        raise TaskError(
            f"{where}: field 'difficulty' must be one of {', '.join(DIFFICULTIES)}, got {difficulty!r}"
        )
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise TaskError(f"{where}: field 'tags' must be a list of strings, got {tags!r}")
    parser = str(data.get("parser_name", "pytest"))
    if parser not in PARSERS:
        raise TaskError(f"{where}: field 'parser_name' must be one of {', '.join(PARSERS)}, got {parser!r}")
    timeouts = {}
    for name, default in (("max_agent_timeout_sec", 360.0), ("max_test_timeout_sec", 60.0)):
        value = _field(where, name, data.get(name, default), (int, float), "a positive number of seconds")
        if value <= 0:
            raise TaskError(f"{where}: field {name!r} must be a positive number of seconds, got {value!r}")
        timeouts[name] = float(value)
    same_shell = _field(
        where, "run_tests_in_same_shell", data.get("run_tests_in_same_shell", False), bool, "true or false"
    )
    known = {"instruction", "category", "difficulty", "tags", "parser_name", "run_tests_in_same_shell"}
    known |= {"max_agent_timeout_sec", "max_test_timeout_sec", "author_email"}
    return TaskSpec(
        instruction=instruction,
        category=category,
        difficulty=difficulty,
        tags=tuple(tags),
        parser_name=parser,
        run_tests_in_same_shell=same_shell,
        author_email=str(data.get("author_email", "")),
        extra={k: v for k, v in data.items() if k not in known},
        **timeouts,
    )


@dataclass(frozen=True)
class Task:
    """A task folder on disk and its checked `task.yaml`."""

    path: Path
    spec: TaskSpec

    @property
    def task_id(self) -> str:
        """`<category>/<folder name>`, unique within a suite."""
        return f"{self.spec.category}/{self.path.name}"

    @property
    def workspace(self) -> Path | None:
        """The built-here repository the agent starts in, if the task has one."""
        ws = self.path / WORKSPACE
        return ws if ws.is_dir() else None

    @property
    def service(self) -> Path | None:
        """The script that starts the task's monitored service, if any."""
        start = self.path / SERVICE_START
        return start if start.is_file() else None

    @property
    def needs_docker(self) -> bool:
        """The environment is only described by Docker files (no `workspace/` for the local runner)."""
        return self.workspace is None and any((self.path / f).exists() for f in DOCKER_FILES)

    @property
    def has_solution(self) -> bool:
        return (self.path / SOLUTION).is_file()


def load_task(path: str | Path) -> Task:
    """Load one Terminal-Bench task folder; `TaskError` names what is missing or malformed."""
    root = Path(path)
    if not root.is_dir():
        raise TaskError(f"task folder {str(root)!r} does not exist")
    spec_file = root / TASK_FILE
    if not spec_file.is_file():
        raise TaskError(f"{root}: no {TASK_FILE}")
    try:
        data = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise TaskError(f"{spec_file}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except yaml.YAMLError as e:
        raise TaskError(f"{spec_file}: not valid YAML: {str(e).splitlines()[0]}") from None
    spec = parse_spec(data, str(spec_file))
    if not (root / RUN_TESTS).is_file():
        raise TaskError(f"{root}: the tests are missing: no {RUN_TESTS}")
    tests = root / TESTS_DIR
    if not tests.is_dir() or not any(tests.iterdir()):
        raise TaskError(f"{root}: the tests are missing: {TESTS_DIR}/ is absent or empty")
    return Task(root, spec)


def load_tasks(root: str | Path) -> list[Task]:
    """Every task under `root` (a task folder, a category folder, or a `tasks/` folder), by id."""
    base = Path(root)
    if not base.is_dir():
        raise TaskError(f"task folder {str(base)!r} does not exist")
    if (base / TASK_FILE).is_file():
        return [load_task(base)]
    found = sorted(p.parent for p in base.rglob(TASK_FILE))
    if not found:
        raise TaskError(f"{base}: no {TASK_FILE} below it: not a Terminal-Bench task folder")
    tasks = [load_task(p) for p in found]
    ids = [t.task_id for t in tasks]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise TaskError(f"{base}: task ids appear twice: {', '.join(twice)}")
    return sorted(tasks, key=lambda t: t.task_id)


def write_spec(path: Path, spec: TaskSpec) -> None:
    """Write `spec` as a Terminal-Bench `task.yaml` (what `parse_spec` reads back unchanged)."""
    data: dict[str, Any] = {
        "instruction": spec.instruction,
        "author_email": spec.author_email,
        "difficulty": spec.difficulty,
        "category": spec.category,
        "tags": list(spec.tags),
        "parser_name": spec.parser_name,
        "max_agent_timeout_sec": spec.max_agent_timeout_sec,
        "max_test_timeout_sec": spec.max_test_timeout_sec,
        "run_tests_in_same_shell": spec.run_tests_in_same_shell,
        **spec.extra,
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=100))
