"""Frozen config dataclasses: the `--set field=value` override parser, presets as changes, and
per-field help.

Every system's config is a frozen dataclass with typed fields and defaults; a component's config
nests as a field. The CLI turns `--set lr=3e-4 --set grpo.beta=0.04` into a new config with
`apply_overrides`, converting each string to the field's declared type and naming the field, the
value and what is accepted when it cannot. `with_changes` is the same with Python values (how
presets are written). A field's help is the string literal under it (`field_help`), and
`describe_config` lists every (dotted) field for `iclr26 run NAME --help-config`.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import inspect
import itertools
import json
import textwrap
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from iclr26.core.errors import UserError

C = TypeVar("C")

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ConfigError(UserError, ValueError):
    """A config field got a value it cannot take; the message names the field and the fix."""


def parse_overrides(items: Sequence[str]) -> dict[str, str]:
    """Split `["a=1", "b.c=x"]` into `{"a": "1", "b.c": "x"}`; reject malformed items."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set expects field=value, got {item!r}")
        if key in out:
            raise ConfigError(f"--set gives field {key!r} twice ({out[key]!r} and {value!r})")
        out[key] = value
    return out


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in get_args(tp))
    if origin is not None:
        args = ", ".join("..." if a is Ellipsis else _type_name(a) for a in get_args(tp))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if tp is type(None):
        return "None"
    return getattr(tp, "__name__", str(tp))


def convert_value(field: str, raw: str, tp: Any) -> Any:
    """Convert the string `raw` to type `tp` for config field `field`, or raise ConfigError."""

    def fail(extra: str = "") -> ConfigError:
        msg = f"field {field!r}: cannot use {raw!r}, expected {_type_name(tp)}"
        return ConfigError(msg + (f" ({extra})" if extra else ""))

    origin = get_origin(tp)
    if tp is Any:
        return raw
    if origin is Literal:
        allowed = get_args(tp)
        for a in allowed:
            if str(a) == raw:
                return a
        raise ConfigError(
            f"field {field!r}: {raw!r} is not allowed; choose one of " + ", ".join(repr(a) for a in allowed)
        )
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if type(None) in args and raw.strip().lower() in {"none", "null", ""}:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return convert_value(field, raw, a)
            except ConfigError:
                continue
        raise fail()
    if origin in (tuple, list):
        parts = [p.strip() for p in raw.strip().strip("()[]").split(",") if p.strip()]
        args = get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(parts) != len(args):
                raise fail(f"needs {len(args)} comma-separated values, got {len(parts)}")
            return tuple(convert_value(field, p, a) for p, a in zip(parts, args, strict=True))
        elem = args[0] if args else str
        vals = [convert_value(field, p, elem) for p in parts]
        return tuple(vals) if origin is tuple else vals
    if origin is dict or tp is dict:
        try:
            val = json.loads(raw)
        except json.JSONDecodeError as e:
            raise fail("give a JSON object") from e
        if not isinstance(val, dict):
            raise fail("give a JSON object")
        return val
    if tp is bool:
        low = raw.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise fail("use true/false")
    if tp is int:
        try:
            f = float(raw)
        except ValueError as e:
            raise fail() from e
        # Accept 1e6 and 1_000_000, but never silently truncate 2.5.
        if not f.is_integer():
            raise fail("not a whole number")
        return int(raw) if raw.strip().lstrip("-").replace("_", "").isdigit() else int(f)
    if tp is float:
        try:
            return float(raw)
        except ValueError as e:
            raise fail() from e
    if tp is str:
        return raw
    if tp is Path:
        return Path(raw)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for m in tp:
            if raw in (m.name, str(m.value)):
                return m
        raise ConfigError(
            f"field {field!r}: {raw!r} is not allowed; choose one of " + ", ".join(m.name for m in tp)
        )
    raise ConfigError(f"field {field!r}: type {_type_name(tp)} cannot be set from the command line")


RUN_LLM = "choose the run's model with --llm (auto, embedded, http or hf:PATH)"
"""why a config's old model field (`llm`, `model`, `vlm`, ...) is gone: the model is the run's"""


def run_llm_renames(*names: str) -> dict[str, str]:
    """A config's `RENAMED` entries for old per-system model fields, all now `--llm`:
    `RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm", "llm_path")`."""
    return dict.fromkeys(names, RUN_LLM)


def _no_field(config: Any, head: str, fields: set[str]) -> ConfigError:
    """The error for a field `config` lacks: a renamed one (the config class's `RENAMED` map, old
    name -> where it went) says where it went, any other lists the fields."""
    renamed = getattr(type(config), "RENAMED", {})
    if head in renamed:
        return ConfigError(f"{type(config).__name__} has no field {head!r} any more: {renamed[head]}")
    return ConfigError(
        f"{type(config).__name__} has no field {head!r}; fields are: " + ", ".join(sorted(fields))
    )


def _leaf_type(config: Any, key: str) -> tuple[str, Any]:
    """The field name and declared type that the dotted `key` reaches in `config`, or a ConfigError
    naming the config's fields."""
    head, dot, rest = key.partition(".")
    fields = {f.name for f in dataclasses.fields(config) if f.init}
    if head not in fields:
        raise _no_field(config, head, fields)
    if not dot:
        return head, typing.get_type_hints(type(config))[head]
    if not dataclasses.is_dataclass(getattr(config, head)):
        raise ConfigError(f"field {head!r} is not a nested config; use {head}=VALUE")
    return _leaf_type(getattr(config, head), rest)


def apply_overrides(config: C, overrides: Mapping[str, str]) -> C:
    """Return a copy of the frozen dataclass `config` with string `overrides` converted and set.

    Nested dataclass fields are addressed with dots (`critic.width=512`). Each string is converted
    to its field's declared type, then set with `with_changes`; the dataclasses' own
    `__post_init__` checks run on the result, so cross-field errors surface here too.
    """
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"apply_overrides needs a dataclass instance, got {type(config).__name__}")
    changes = {}
    for key, raw in overrides.items():
        name, tp = _leaf_type(config, key)
        changes[key] = convert_value(name, raw, tp)
    try:
        return with_changes(config, changes)
    except (ValueError, TypeError) as e:
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(str(e)) from e


def config_to_dict(config: Any) -> dict[str, Any]:
    """A JSON-ready dict of a (possibly nested) config dataclass."""

    def clean(v: Any) -> Any:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return {f.name: clean(getattr(v, f.name)) for f in dataclasses.fields(v)}
        if isinstance(v, enum.Enum):
            return v.name
        if isinstance(v, Path):
            return str(v)
        if isinstance(v, tuple | list):
            return [clean(x) for x in v]
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        return v

    return clean(config)


def with_changes(config: C, changes: Mapping[str, Any]) -> C:
    """A copy of `config` with Python-valued `changes`; dotted keys (`td3.lr`) reach nested configs.

    The programmatic twin of `apply_overrides` (which takes strings from the command line): presets
    are written as `with_changes(bench, {"steps": 40, "grpo.lr": 1e-5})`.
    """
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"with_changes needs a dataclass instance, got {type(config).__name__}")
    fields = {f.name for f in dataclasses.fields(config) if f.init}
    flat: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in changes.items():
        head, dot, rest = key.partition(".")
        if head not in fields:
            raise _no_field(config, head, fields)
        if dot:
            nested.setdefault(head, {})[rest] = value
        else:
            flat[head] = value
    for head, sub in nested.items():
        base = flat.pop(head, getattr(config, head))
        if not dataclasses.is_dataclass(base):
            raise ConfigError(f"field {head!r} is not a nested config; set {head} itself")
        flat[head] = with_changes(base, sub)
    return dataclasses.replace(config, **flat)


# -- per-field help ----------------------------------------------------------------------------
# A field's help is the string literal written under it, as CleanRL and tyro read them:
#
#     steps: int = 3000
#     """gradient steps per (algorithm, dataset, seed)"""


@functools.cache
def _docstrings_of(cls: type) -> dict[str, str]:
    """The field docstrings written in `cls`'s own class body (not its bases)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):  # defined in a REPL or generated
        return {}
    tree = ast.parse(source)
    body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef)), [])
    out: dict[str, str] = {}
    for stmt, after in itertools.pairwise(body):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            out[stmt.target.id] = " ".join(after.value.value.split())
    return out


def field_help(cls: type) -> dict[str, str]:
    """Help text of each field of the config dataclass `cls`: its docstring, else `metadata["help"]`,
    else "" (bases are searched too, so a subclass inherits its parent's help)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            docs |= _docstrings_of(klass)
    return {f.name: f.metadata.get("help") or docs.get(f.name, "") for f in dataclasses.fields(cls)}


@dataclasses.dataclass(frozen=True)
class FieldDoc:
    """One row of `iclr26 run NAME --help-config`: a (dotted) field with its type, values and help."""

    path: str
    type: str
    default: Any
    value: Any
    help: str


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def describe_config(config: Any, prefix: str = "", defaults: Any = None) -> list[FieldDoc]:
    """Every field of the config instance `config`, nested configs expanded as dotted paths: type,
    default (the enclosing config's default, so a nested field shows the system's default rather
    than its class's), the value in `config`, and help."""
    cls = type(config)
    hints = typing.get_type_hints(cls)
    helps = field_help(cls)
    rows: list[FieldDoc] = []
    for f in dataclasses.fields(config):
        if not f.init:
            continue
        value = getattr(config, f.name)
        default = getattr(defaults, f.name) if defaults is not None else _default(f)
        path = prefix + f.name
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            nested_default = default if dataclasses.is_dataclass(default) else None
            rows += describe_config(value, prefix=path + ".", defaults=nested_default)
            continue
        rows.append(FieldDoc(path, _type_name(hints[f.name]), default, value, helps[f.name]))
    return rows
