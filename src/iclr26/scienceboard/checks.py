"""ScienceBoard's checks (the task file's `evaluate` list) against the apps' final state.

A task passes when every check passes. `stop` checks compare how the agent ended (DONE, FAIL, or
ANS with its answer words) with what the task expects; the other checks read the app through a
probe:
- `file` (TeXstudio): the document equals the text the task wrote at set-up with `source` replaced
  by `target`; `include`: a regular expression is found in it (`core.taskregex`: bounded in time);
  `compile`: it compiles (pdflatex);
- `db` (GRASS): a module's output (JSON when it is) through the `key` getter, compared by `pred`
  (default: equality) with `value`; `info`: the same on the app's state dump (GRASS: the region;
  Stellarium: its RemoteControl status and the selected object);
- `var` / `val` (KAlgebra): a variable's text equals `value`, or its number is within 1e-6;
- `select` (PyMOL, ours): the number of atoms in a selection, compared by `pred` with `value`.

Two choices differ from the authors' harness, and are deliberate: a task with no `stop` check still
fails when the agent says FAIL (theirs passes on FAIL if the state happens to be right), and ANS
answers are compared word by word after splitting on any whitespace (theirs splits on single
spaces). Getters and predicates run in `predicates.compile_predicate`, never `eval`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from iclr26.agents.beneath import read_beneath
from iclr26.core import taskregex
from iclr26.core.taskregex import PatternError
from iclr26.scienceboard.predicates import PredicateError, compile_predicate
from iclr26.scienceboard.probes import ProbeError
from iclr26.scienceboard.task import TaskFile

STOP_KINDS = ("DONE", "FAIL", "ANS", "TIMEOUT")


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict and why."""

    kind: str
    passed: bool
    detail: str


class Probe(Protocol):
    """What the checks read; each app's environment implements the parts its checks need."""

    def read_text(self, path: str) -> str: ...
    def compiles(self, folder: str, main: str) -> tuple[bool, str]: ...
    def grass_run(self, cmd: str, kwargs: Mapping[str, Any]) -> Any: ...
    def dump(self) -> Mapping[str, Any]: ...
    def variables(self) -> Mapping[str, str]: ...
    def count(self, selection: str) -> int: ...


def _getter(text: str | None) -> Callable[[Any], Any]:
    return (lambda x: x) if not text else compile_predicate(text, arity=1)


def _pred(text: str | None) -> Callable[[Any, Any], Any]:
    return operator.eq if not text else compile_predicate(text, arity=2)


def _touched(task: TaskFile, path: str) -> str | None:
    """The text the task's set-up wrote to `path` (its `touch` step), if any."""
    for step in task.initialize:
        if step.get("func") == "touch" and step.get("path") == path:
            return str(step.get("text", ""))
    return None


def check_state(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> CheckResult:
    """One non-stop check against the app's state (any error reading it fails the check, named)."""
    kind = str(check["type"])
    try:
        ok, detail = _STATE_CHECKS[kind](task, check, probe)
    except KeyError as e:
        return CheckResult(kind, False, f"missing {e} in the state or the check")
    except (PredicateError, PatternError, ProbeError, OSError, ValueError, TypeError, IndexError) as e:
        return CheckResult(kind, False, f"{type(e).__name__}: {e}")
    return CheckResult(kind, bool(ok), detail)


def _file(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    current = probe.read_text(check["path"])
    if "source" in check and "target" in check:
        original = _touched(task, check["path"])
        if original is None:
            return False, f"the task never wrote {check['path']}, so there is no original to compare"
        want = original.replace(check["source"], check["target"])
        return (
            current == want,
            "document as expected" if current == want else "document differs from the expected edit",
        )
    value = check.get("value", "")
    if isinstance(value, str) and value.lstrip().startswith("lambda"):
        value = compile_predicate(value, arity=0)()
    return str(
        value
    ) in current, f"{value!r} {'found' if str(value) in current else 'not found'} in {check['path']}"


def _include(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    text = probe.read_text(check["path"])
    hit = taskregex.search(check["pattern"], text) is not None
    return hit, f"/{check['pattern']}/ {'found' if hit else 'not found'}"


def _compile(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    ok, log = probe.compiles(check["path"], check["file"])
    return ok, "compiles" if ok else log


def _db(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    out = probe.grass_run(check["cmd"], check.get("kwargs", {}))
    got = _getter(check.get("key"))(out)
    return bool(_pred(check.get("pred"))(got, check.get("value"))), f"got {str(got)[:120]}"


def _info(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    got = _getter(check.get("key"))(probe.dump())
    return bool(_pred(check.get("pred"))(got, check.get("value"))), f"got {str(got)[:120]}"


def _var(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    names = probe.variables()
    if check["value"] == "#UNDEF":
        return check[
            "key"
        ] not in names, f"{check['key']} {'defined' if check['key'] in names else 'undefined'}"
    got = names.get(check["key"])
    return got == check["value"], f"{check['key']} = {got!r}"


def _val(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    got = probe.variables().get(check["key"])
    if got is None:
        return False, f"{check['key']} is not defined"
    return abs(float(got) - float(check["value"])) <= 1e-6, f"{check['key']} = {got}"


def _select(task: TaskFile, check: Mapping[str, Any], probe: Probe) -> tuple[bool, str]:
    got = probe.count(check["selection"])
    return bool(_pred(check.get("pred"))(got, check.get("value"))), f"{got} atoms in {check['selection']!r}"


_STATE_CHECKS: dict[str, Callable[[TaskFile, Mapping[str, Any], Probe], tuple[bool, str]]] = {
    "file": _file,
    "include": _include,
    "compile": _compile,
    "db": _db,
    "info": _info,
    "var": _var,
    "val": _val,
    "select": _select,
}


def check_stop(check: Mapping[str, Any], stop: str, answer: Sequence[str]) -> CheckResult:
    """A stop check: the agent ended as the task expects (and, for ANS, with the expected words)."""
    want = check.get("value")
    if stop != want:
        return CheckResult("stop", False, f"expected {want}, the agent ended with {stop}")
    if want == "ANS" and list(answer) != list(check.get("args", [])):
        return CheckResult(
            "stop", False, f"answer {' '.join(answer)!r} != {' '.join(check.get('args', []))!r}"
        )
    return CheckResult("stop", True, f"ended with {stop}")


def evaluate(task: TaskFile, probe: Probe, stop: str, answer: str = "") -> tuple[bool, list[CheckResult]]:
    """Whether the task passed, and each check's verdict. `stop` is how the agent ended (DONE, FAIL,
    ANS or TIMEOUT), `answer` its ANS text."""
    if stop not in STOP_KINDS:
        raise ValueError(f"stop must be one of {STOP_KINDS}, got {stop!r}")
    words = answer.split()
    results = []
    stops = [c for c in task.evaluate if c["type"] == "stop"]
    for c in stops:
        results.append(check_stop(c, stop, words))
    if not stops and stop == "FAIL":
        results.append(CheckResult("stop", False, "the agent gave up (FAIL)"))
    for c in task.evaluate:
        if c["type"] != "stop":
            results.append(check_state(task, c, probe))
    return all(r.passed for r in results), results


def under_root(root: Path, path: str) -> Path:
    """Where a task path (/home/user/...) lives under `root`; a path that climbs out of it is refused."""
    target = (root / str(path).lstrip("/")).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"task path {path!r} leaves the task's folder")
    return target


@dataclass
class LocalProbe:
    """A probe on this machine: files under `root` (task paths are mapped below it), pdflatex, GRASS."""

    root: Path
    grass: Any = None  # a probes.GrassLocation
    kalgebra_vars: Mapping[str, str] | None = None
    pymol: Any = None  # a probes.PymolSession
    stellarium: Any = None  # a probes.StellariumRemote

    def _path(self, path: str) -> Path:
        return under_root(self.root, path)

    def read_text(self, path: str) -> str:
        return read_beneath(self.root, path).decode("utf-8")  # no link followed: the app writes there

    def compiles(self, folder: str, main: str) -> tuple[bool, str]:
        from iclr26.scienceboard.probes import latex_compiles

        return latex_compiles(self._path(folder), main)

    def grass_run(self, cmd: str, kwargs: Mapping[str, Any]) -> Any:
        if self.grass is None:
            raise ValueError("no GRASS location is open")
        return self.grass.run(cmd, **dict(kwargs))

    def dump(self) -> Mapping[str, Any]:
        if self.stellarium is not None:
            return self.stellarium.dump()
        if self.grass is None:
            raise ValueError("no GRASS location is open")
        return self.grass.dump()

    def count(self, selection: str) -> int:
        if self.pymol is None:
            raise ValueError("PyMOL is not running")
        return int(self.pymol.count(selection))

    def variables(self) -> Mapping[str, str]:
        if self.kalgebra_vars is None:
            raise ValueError("KAlgebra's variables are not read by this probe")
        return self.kalgebra_vars
