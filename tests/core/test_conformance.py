"""Conformance rules that every module under `src/iclr26` obeys, each one a test (issue 58, item 7).
Rules that CONTRIBUTING.md stated without a test drifted across eleven systems; rules with a test held.

The rules are parametrized over the catalog's systems and the shared packages, as
`test_config_help.py` is over the catalog; `test_every_module_is_in_a_group` fails when a new
package is in none of the groups, so that no module escapes the rules. A violation is reported with
its file and line.

- No `global` statement: module state lives in a small object, behind `functools.cache`, or is
  passed in explicitly.
- No class named `*Agent` outside `agents/` unless it implements `iclr26.agents.Agent` (the protocol
  in `agents/loop.py`): a policy, a player or a scorer is named for what it is.
- No system calls `get_chat_model`: the run's model is `ctx.chat_model()` (`--llm`).
- Every system has `study(...) -> Study`, its `run` calls `run_study`,
  it writes no resume ledger and builds no `ClaimCheck` of its own, and its study declares a floor
  arm (a task benchmark also an oracle and a null).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import textwrap
import typing
from collections.abc import Callable
from pathlib import Path

import pytest

import iclr26
from iclr26.agents import loop
from iclr26.catalog import PAPERS, status_of

SRC = Path(iclr26.__file__).resolve().parent  # src/iclr26
ROOT = SRC.parents[1]
SYSTEMS = [p.name for p in PAPERS]
SHARED = ["core", "agents", "rlvr"]
TOP_LEVEL = "iclr26"  # the package's own modules: cli, catalog, __main__
GROUPS = [*SYSTEMS, *SHARED, TOP_LEVEL]


def modules(group: str) -> list[Path]:
    """The Python files of `group`: a system's or shared package's tree, or the top-level modules."""
    if group == TOP_LEVEL:
        return sorted(SRC.glob("*.py"))
    return sorted((SRC / group).rglob("*.py"))


def where(path: Path, line: int) -> str:
    """`src/iclr26/x/y.py:12`, the form an editor jumps to."""
    return f"{path.relative_to(ROOT).as_posix()}:{line}"


def test_every_module_is_in_a_group():
    grouped = {p for g in GROUPS for p in modules(g)}
    loose = sorted(p.relative_to(ROOT).as_posix() for p in SRC.rglob("*.py") if p not in grouped)
    assert not loose, f"modules no conformance rule reads (add their package to GROUPS): {loose}"


# -- no `global` statement -----------------------------------------------------------------------


def global_statements(source: str) -> list[tuple[int, str]]:
    """(line, names) of every `global` statement in `source`, at any depth."""
    return [
        (node.lineno, ", ".join(node.names))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Global)
    ]


def test_global_statements_are_found_at_any_depth():
    source = textwrap.dedent(
        """
        x = 0
        global y
        def f():
            global x
            def g():
                nonlocal_ok = 1
            class C:
                def m(self):
                    global x, z
        """
    )
    assert global_statements(source) == [(3, "y"), (5, "x"), (10, "x, z")]
    assert global_statements("def f():\n    x = 1\n    def g():\n        nonlocal x\n") == []


@pytest.mark.parametrize("group", GROUPS)
def test_no_global_statement(group):
    found = [
        f"{where(path, line)}: global {names}"
        for path in modules(group)
        for line, names in global_statements(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "no `global` statement in src/ (CONTRIBUTING.md): keep the state in a small module-level "
        "object, behind functools.cache, or pass it in explicitly\n" + "\n".join(found)
    )


# -- no `*Agent` class that is not an `agents.Agent` -----------------------------------------------

PROTOCOL = loop.Agent


def _protocol_members(proto: type) -> tuple[list[str], list[str]]:
    """(data members, methods) that `proto` declares."""
    data = [n for n in inspect.get_annotations(proto) if not n.startswith("_")]
    methods = [n for n, v in vars(proto).items() if callable(v) and not n.startswith("_")]
    return data, methods


def _assigns_self_attribute(cls: type, name: str) -> bool:
    """Whether some method of `cls` or its bases sets `self.<name>` (an attribute set in __init__)."""
    for klass in cls.__mro__[:-1]:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        stores = (n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store))
        if any(n.attr == name and ast.unparse(n.value) == "self" for n in stores):
            return True
    return False


def _signature_problem(impl: Callable[..., object], spec: Callable[..., object], name: str) -> str | None:
    """Why `impl` cannot stand in for the protocol method `spec` (called as the loop calls it:
    positionally, or by the protocol's parameter names), or None."""
    want = [p for p in inspect.signature(spec).parameters.values() if p.name != "self"]
    try:
        sig = inspect.signature(impl)
    except (TypeError, ValueError):
        return f"{name}: no signature"
    args = [object() for _ in want]
    try:
        sig.bind(None, *args)
        sig.bind(None, **{p.name: a for p, a in zip(want, args, strict=True)})
    except TypeError as e:
        shown = ", ".join(p.name for p in want)
        return f"{name}{sig} cannot be called as {name}(self, {shown}): {e}"
    wanted = typing.get_type_hints(spec).get("return")
    try:
        got = typing.get_type_hints(impl).get("return")
    except Exception:  # an annotation that does not resolve: only the protocol's checks apply
        got = None
    if wanted not in (None, type(None)) and isinstance(got, type) and not issubclass(got, wanted):
        return f"{name} returns {got.__name__}, not {wanted.__name__}"
    return None


def agent_protocol_problems(cls: type, proto: type = PROTOCOL) -> list[str]:
    """What `cls` lacks to implement `proto` structurally (empty when it does)."""
    data, methods = _protocol_members(proto)
    problems = [
        f"no `{n}` attribute" for n in data if not hasattr(cls, n) and not _assigns_self_attribute(cls, n)
    ]
    for n in methods:
        impl = getattr(cls, n, None)
        if not callable(impl):
            problems.append(f"no `{n}` method")
            continue
        why = _signature_problem(impl, getattr(proto, n), n)
        if why:
            problems.append(why)
    return problems


class _Conforming:
    name = "ok"

    def reset(self, task_id: str, instruction: str) -> None: ...

    def act(self, observation: loop.Observation) -> loop.AgentReply:
        return loop.AgentReply("done")


class _NamedInInit:
    def __init__(self) -> None:
        self.name = "set in __init__"

    def reset(self, task_id: str, instruction: str) -> None: ...

    def act(self, observation: loop.Observation) -> loop.AgentReply:
        return loop.AgentReply("")


class _TickPolicy:  # conavbench's old base `Agent`: a motor action per tick, no reset
    name = "tick"

    def act(self, view: object) -> str:
        return "forward"


class _ReturnsText(_Conforming):
    def act(self, observation: loop.Observation) -> str:  # type: ignore[override]
        return "done"


class _WrongArity:
    name = "x"

    def reset(self) -> None: ...

    def act(self, observation: loop.Observation, extra: int) -> loop.AgentReply:
        return loop.AgentReply("")


class _Nameless:
    def reset(self, task_id: str, instruction: str) -> None: ...

    def act(self, observation: loop.Observation) -> loop.AgentReply:
        return loop.AgentReply("")


def test_agent_check_on_constructed_classes():
    assert agent_protocol_problems(_Conforming) == []
    assert agent_protocol_problems(_NamedInInit) == []
    tick = agent_protocol_problems(_TickPolicy)
    assert "no `reset` method" in tick
    assert len(tick) == 2 and tick[1].startswith("act") and "act(self, observation)" in tick[1], tick
    assert agent_protocol_problems(_ReturnsText) == ["act returns str, not AgentReply"]
    wrong = agent_protocol_problems(_WrongArity)
    assert len(wrong) == 2 and wrong[0].startswith("reset") and wrong[1].startswith("act"), wrong
    assert agent_protocol_problems(_Nameless) == ["no `name` attribute"]
    # the project's own agents pass
    from iclr26.agents import LLMAgent, NullAgent, OracleAgent

    for cls in (LLMAgent, NullAgent, OracleAgent):
        assert agent_protocol_problems(cls) == [], cls


def agent_named_classes(source: str) -> list[tuple[int, str, bool]]:
    """(line, name, defined at module level) of each class whose name ends in `Agent`."""
    tree = ast.parse(source)
    top = {id(n) for n in tree.body}
    return [
        (node.lineno, node.name, id(node) in top)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name.endswith("Agent")
    ]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("group", [g for g in GROUPS if g != "agents"])
def test_agent_classes_implement_the_agent_protocol(group):
    candidates = [
        (path, found) for path in modules(group) for found in agent_named_classes(path.read_text("utf-8"))
    ]
    if candidates and group in SYSTEMS and status_of(group)[0] != "implemented":
        pytest.skip(f"{group}'s optional dependencies are missing: its classes cannot be imported")
    found = []
    for path, (line, name, top) in candidates:
        if not top:
            found.append(f"{where(path, line)}: class {name} is not at module level, so it cannot be checked")
            continue
        cls = getattr(importlib.import_module(_module_name(path)), name)
        problems = agent_protocol_problems(cls)
        if problems:
            found.append(f"{where(path, line)}: class {name}: {'; '.join(problems)}")
    assert not found, (
        "a class named `*Agent` outside agents/ implements iclr26.agents.Agent (agents/loop.py) "
        "(CONTRIBUTING.md); otherwise name it for what it is (a policy, a player, a scorer)\n"
        + "\n".join(found)
    )


# -- the study contract (issue 58, items 5 and 7) ---------------------------------------------------

BENCHMARKS = {"devops_gym", "scienceboard", "liveweb_ie", "glow", "conavbench"}
"""Task benchmarks: besides floors, their study declares an oracle and a null arm."""
OWN_LEDGER_OR_VERDICT = {"ClaimCheck", "append_log", "read_log", "write_done", "read_done"}
"""What a ported system leaves to `core.study`: the resume ledger and the claim check."""


def called_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of every call in `source`, by the called name (`f(...)`, `x.f(...)` -> f) and of
    every attribute call on a name (`ClaimCheck.paired(...)` -> ClaimCheck)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                out.append((node.lineno, func.id))
            elif isinstance(func, ast.Attribute):
                out.append((node.lineno, func.attr))
                if isinstance(func.value, ast.Name):
                    out.append((node.lineno, func.value.id))
    return out


def test_called_names_sees_plain_attribute_and_class_method_calls():
    found = {name for _, name in called_names("a(); m.b(); ClaimCheck.paired(1); x = c")}
    assert found == {"a", "m", "b", "ClaimCheck", "paired"}


@pytest.mark.parametrize("system", SYSTEMS)
def test_no_system_picks_its_own_model(system):
    """The run's model is `ctx.chat_model()` (`--llm`); `get_chat_model` under a system ignores it."""
    bad = [
        where(p, line)
        for p in modules(system)
        for line, name in called_names(p.read_text(encoding="utf-8"))
        if name == "get_chat_model"
    ]
    assert not bad, f"{system} calls get_chat_model (use ctx.chat_model()): {bad}"


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_ported_system_runs_a_study_with_floors_and_keeps_no_ledger_of_its_own(system):
    from iclr26.core.study import Study

    module = importlib.import_module(f"iclr26.{system}.system")
    study = getattr(module, "study", None)
    assert callable(study), f"iclr26.{system}.system has no study(...) -> Study"
    assert inspect.signature(study).return_annotation in (Study, "Study"), f"{system}: study() -> Study"
    assert "run_study" in {name for _, name in called_names(inspect.getsource(module.run))}, (
        f"{system}: run() does not call core.study.run_study"
    )
    bad = [
        where(p, line)
        for p in modules(system)
        for line, name in called_names(p.read_text(encoding="utf-8"))
        if name in OWN_LEDGER_OR_VERDICT
    ]
    assert not bad, f"{system} keeps its own ledger or verdict (core.study owns them): {bad}"
    text = "\n".join(p.read_text(encoding="utf-8") for p in modules(system))
    declared = {role for role in ("floor", "oracle", "null") if f'"{role}"' in text}
    need = {"floor", "oracle", "null"} if system in BENCHMARKS else {"floor"}
    assert need <= declared, f"{system}'s study declares no {sorted(need - declared)} arm"
