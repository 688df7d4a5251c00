"""ScienceBoard's task files: the schema, and the mapping of the authors' tasks onto our apps.

A task file (the authors' `tasks/<sort>/<App>/*.json`, read by path, never copied) holds:
`type` (the app), `sort` (VM or Raw), `steps`, `instruction`, `version`, `initialize` (a list of
`{func, ...}` set-up steps) and `evaluate` (a list of `{type, ...}` checks), and optionally
`snapshot`, `ans`, `penalty` and `query`. `parse_task` validates one and names the field at fault;
`map_task` says whether our environment can run it (the app, each set-up step, each check) or why
not. Every lambda in a check is compiled by `predicates.compile_predicate`, so a file with code in
it is refused here, before any app starts.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.jsonfile import read_json
from iclr26.core.validation import check_fields
from iclr26.scienceboard.predicates import PredicateError, compile_predicate

SORTS = ("VM", "Raw")
STOPS = ("DONE", "FAIL", "ANS")
REQUIRED = ("type", "sort", "steps", "instruction", "version", "initialize", "evaluate")

APPS: dict[str, str | None] = {
    "KAlgebra": "kalgebra",
    "GrassGIS": "grass",
    "TeXstudio": "texstudio",
    "ChimeraX": None,
    "Celestia": None,
    "Lean": None,
    "PyMOL": "pymol",
    "Stellarium": "stellarium",
}
"""The app a task names -> the Debian app that runs it here (None: unsupported). PyMOL and Stellarium
are not among the authors' apps: our built-here biochemistry and astronomy tasks use them in the
places of ChimeraX and Celestia."""

UNSUPPORTED_APPS = {
    "ChimeraX": "ChimeraX is not packaged in Debian; its command language and session states do not carry "
    "over to PyMOL, the stand-in our built-here biochemistry tasks use",
    "Celestia": "Celestia is not packaged in Debian 12; our built-here astronomy tasks use Stellarium's "
    "RemoteControl API instead, whose state differs",
    "Lean": "Lean 4 and Mathlib cannot be installed offline",
}

GENERIC_INIT = ("launch", "execute", "touch", "opt", "append", "map")
"""Set-up steps any app's task may use: our environment launches the app itself (the authors' command
lines name their VM's paths), runs commands in the sandbox and writes files; GRASS's `map` (open a
location and mapset) is how our environment starts GRASS anyway."""

CHECKS: dict[str, tuple[str, ...]] = {
    "kalgebra": ("var", "val", "stop"),
    "grass": ("db", "info", "stop"),
    "texstudio": ("file", "include", "compile", "stop"),
    "pymol": ("select", "stop"),
    "stellarium": ("info", "stop"),
}
"""The checks our probes answer, per app. KAlgebra's `eqn` reads plotted curves through the authors'
modified build; the stock one does not expose them."""

GRASS_DUMP_KEYS = ("region",)
"""The parts of GRASS's state our probe reads (`g.region`); the authors' GUI dump also has layers,
windows, the status bar and toolbars, which the stock GUI does not expose."""


@dataclass(frozen=True)
class TaskFile:
    """One ScienceBoard task as written in its JSON file."""

    path: str
    type: str
    sort: str
    steps: int
    instruction: str
    version: str
    initialize: tuple[dict[str, Any], ...]
    evaluate: tuple[dict[str, Any], ...]
    snapshot: str = ""
    ans: str = ""
    penalty: str = ""
    query: tuple[dict[str, Any], ...] = ()

    @property
    def answer_expected(self) -> bool:
        """Whether the agent must end with ANS (the task has a stop-ANS check)."""
        return any(c.get("type") == "stop" and c.get("value") == "ANS" for c in self.evaluate)


@dataclass
class Mapping:
    """Whether our environment runs a task, on which app, and why not when it does not."""

    task: TaskFile
    app: str | None
    reasons: list[str] = field(default_factory=list)

    @property
    def supported(self) -> bool:
        return self.app is not None and not self.reasons


def _lambdas(check: dict[str, Any], where: str) -> None:
    """Compile every lambda a check carries (key, pred, find, a file value), refusing code."""
    for name in ("key", "pred", "find", "value"):
        text = check.get(name)
        if isinstance(text, str) and text.lstrip().startswith("lambda"):
            try:
                compile_predicate(text)
            except PredicateError as e:
                raise UserError(f"{where}: evaluate {name!r}: {e}") from None


def _task_path(path: Any, where: str) -> None:
    """A task path names a place in the app's machine (/home/user/...), which the harness maps under
    the task's folder: a `..` step would lead out of it, so it is refused when the file is read."""
    if path is None:
        return
    if not isinstance(path, str) or ".." in PurePosixPath(path).parts:
        raise UserError(f"{where}: {path!r} is not a path inside the task's machine (no '..' steps)")


def parse_task(raw: Any, where: str) -> TaskFile:
    """A task from its JSON object; a missing or mistyped field is named, and lambdas are checked."""
    check_fields(where, raw, REQUIRED, "task")
    assert isinstance(raw, dict)
    if raw["sort"] not in SORTS:
        raise UserError(f"{where}: sort must be one of {SORTS}, got {raw['sort']!r}")
    if raw["type"] not in APPS:
        raise UserError(f"{where}: unknown app type {raw['type']!r} (ScienceBoard's are {', '.join(APPS)})")
    if isinstance(raw["steps"], bool) or not isinstance(raw["steps"], int) or raw["steps"] < 1:
        raise UserError(f"{where}: steps must be a positive int, got {raw['steps']!r}")
    if not isinstance(raw["instruction"], str) or not raw["instruction"].strip():
        raise UserError(f"{where}: instruction must be a non-empty string")
    for name, key in (("initialize", "func"), ("evaluate", "type")):
        items = raw[name]
        if not isinstance(items, list) or not all(
            isinstance(i, dict) and isinstance(i.get(key), str) for i in items
        ):
            raise UserError(f"{where}: {name} must be a list of objects, each with a string {key!r}")
    for i, check in enumerate(raw["evaluate"]):
        if check["type"] == "stop":
            if check.get("value") not in STOPS:
                raise UserError(
                    f"{where}: evaluate[{i}] stop value must be one of {STOPS}, got {check.get('value')!r}"
                )
            if check["value"] == "ANS" and not (
                isinstance(check.get("args"), list) and all(isinstance(a, str) for a in check["args"])
            ):
                raise UserError(f"{where}: evaluate[{i}] stop ANS needs args, a list of strings")
        _lambdas(check, f"{where}: evaluate[{i}]")
    for name in ("initialize", "evaluate"):
        for i, item in enumerate(raw[name]):
            for key in ("path", "grassdb", "location", "mapset"):  # the map step's location too
                _task_path(item.get(key), f"{where}: {name}[{i}]: field {key!r}")
    return TaskFile(
        where, raw["type"], raw["sort"], raw["steps"], raw["instruction"], str(raw["version"]),
        tuple(raw["initialize"]), tuple(raw["evaluate"]), str(raw.get("snapshot", "")),
        str(raw.get("ans", "")), str(raw.get("penalty", "")), tuple(raw.get("query", ())),
    )  # fmt: skip


def _dump_keys(getter: str) -> set[str]:
    """The top-level keys a getter lambda reads from its argument (`dump['region'][...]` -> region)."""
    tree = ast.parse(getter.strip(), mode="eval").body
    assert isinstance(tree, ast.Lambda)
    arg = tree.args.args[0].arg if tree.args.args else ""
    keys = set()
    for node in ast.walk(tree.body):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == arg
            and isinstance(node.slice, ast.Constant)
        ):
            keys.add(str(node.slice.value))
    return keys


def map_task(task: TaskFile) -> Mapping:
    """Which of our apps runs `task`, or the reasons it cannot run here."""
    app = APPS[task.type]
    if app is None:
        return Mapping(task, None, [UNSUPPORTED_APPS[task.type]])
    reasons = []
    for step in task.initialize:
        if step["func"].startswith("chimerax_"):
            reasons.append(f"set-up step {step['func']!r} drives ChimeraX, which is not packaged in Debian")
        elif step["func"] not in GENERIC_INIT:
            reasons.append(f"set-up step {step['func']!r} needs the authors' modified {task.type} build")
    for check in task.evaluate:
        kind = check["type"]
        if kind not in CHECKS[app]:
            reasons.append(f"check {kind!r} needs the authors' modified {task.type} build")
        elif app == "grass" and kind == "info":
            read = _dump_keys(check.get("key", "lambda dump: dump"))
            extra = sorted(read - set(GRASS_DUMP_KEYS))
            if extra or not read:
                reasons.append(
                    f"check 'info' reads {', '.join(extra) or 'the whole dump'} from the GRASS GUI"
                )
        elif app == "texstudio" and kind == "compile" and task.sort != "VM":
            reasons.append("the authors compile only in their VM")
    return Mapping(task, app, reasons)


def load_tasks(root: str | Path) -> list[TaskFile]:
    """Every task file under `root` (a file, an app folder or the authors' `tasks/`), in path order."""
    root = Path(root).expanduser()
    if not root.exists():
        raise UserError(f"task path {root} does not exist")
    files = [root] if root.is_file() else sorted(root.rglob("*.json"))
    if not files:
        raise UserError(f"no task files (*.json) under {root}")
    out = []
    for f in files:
        out.append(parse_task(read_json(f), str(f)))
    return out
