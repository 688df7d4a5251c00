"""Shared argument checks: one place for the message that names the parameter, the value received
and what is accepted. Each raises a `ConfigError` (a `UserError` and a `ValueError`), which the CLI
prints as one line.

Public entry points call these first, before any work, so that bad input fails at the boundary with
the caller's own parameter name rather than deep inside a loop. Checks that cost time on every call
(`check_finite_tensor` on activations) run only when `debug_checks()` is on.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Hashable, Iterable
from typing import Any, TypeVar

from iclr26.core.config import ConfigError

T = TypeVar("T")

__all__ = [
    "check_fields",
    "check_finite_tensor",
    "check_in",
    "check_int",
    "check_interval",
    "check_seconds",
    "debug_checks",
    "node_set",
    "set_debug_checks",
]


class _DebugSwitch:
    """What `set_debug_checks` chose for this process (None: follow ICLR26_DEBUG_CHECKS)."""

    on: bool | None = None


_DEBUG = _DebugSwitch()


def debug_checks() -> bool:
    """Whether the costly per-call checks are on: `set_debug_checks(True)`, or the environment
    variable `ICLR26_DEBUG_CHECKS=1` when nothing was set in code."""
    if _DEBUG.on is not None:
        return _DEBUG.on
    return os.environ.get("ICLR26_DEBUG_CHECKS", "").strip().lower() in {"1", "true", "yes", "on"}


def set_debug_checks(on: bool | None) -> None:
    """Turn the costly checks on or off for this process (None: back to the environment variable)."""
    _DEBUG.on = on


def _bounds(low: float | None, high: float | None, closed: tuple[bool, bool], kind: str) -> str:
    if low is not None and high is not None:
        return f"{kind} in {'[' if closed[0] else '('}{low}, {high}{']' if closed[1] else ')'}"
    if low is not None:
        return f"{kind} {'>=' if closed[0] else '>'} {low}"
    if high is not None:
        return f"{kind} {'<=' if closed[1] else '<'} {high}"
    return kind


def check_int(
    name: str,
    value: object,
    low: int | None = None,
    high: int | None = None,
    *,
    unit: str = "",
    optional: bool = False,
) -> int | None:
    """`value` as an int in [low, high] (either bound may be open), or None when `optional`."""
    if value is None and optional:
        return None
    ok = isinstance(value, int) and not isinstance(value, bool)
    ok = ok and (low is None or value >= low) and (high is None or value <= high)  # type: ignore[operator]
    if not ok:
        want = "an " + _bounds(low, high, (True, True), "int")
        want += f" ({unit})" if unit else ""
        want += " or None (no limit)" if optional else ""
        raise ConfigError(f"{name} must be {want}, got {value!r}")
    return value  # type: ignore[return-value]


def check_interval(
    name: str,
    value: object,
    low: float | None = None,
    high: float | None = None,
    *,
    closed: tuple[bool, bool] = (True, True),
    optional: bool = False,
) -> float | None:
    """`value` as a finite float in the interval from `low` to `high`; `closed` says whether each
    end belongs to it (`closed=(False, True)` is (low, high]). Ints are accepted, bools are not."""
    if value is None and optional:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        v = float(value)  # type: ignore[arg-type]
        if low is not None:
            ok = v >= low if closed[0] else v > low
        if ok and high is not None:
            ok = v <= high if closed[1] else v < high
    if not ok:
        want = "a finite " + _bounds(low, high, closed, "number")
        want += " or None" if optional else ""
        raise ConfigError(f"{name} must be {want}, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def check_seconds(name: str, value: object, *, optional: bool = False) -> float | None:
    """`value` as a positive, finite number of seconds, or None when `optional`."""
    if value is None and optional:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        want = "a positive finite number of seconds" + (" or None (no limit)" if optional else "")
        raise ConfigError(f"{name} must be {want}, got {value!r}")
    return float(value)  # type: ignore[arg-type]


def check_in(name: str, value: T, options: Iterable[Any]) -> T:
    """`value` when it is one of `options`; else an error listing them (and the closest match)."""
    options = list(options)
    try:
        if value in options:
            return value
    except TypeError:  # an unhashable value compared with a set's members
        pass
    listed = ", ".join(repr(o) for o in options)
    hint = ""
    if isinstance(value, str):
        import difflib

        close = difflib.get_close_matches(value, [str(o) for o in options], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"{name} must be one of {listed}, got {value!r}{hint}")


def check_fields(where: str, raw: object, fields: Iterable[str], what: str = "object") -> dict[str, Any]:
    """`raw` (a parsed JSON value) as a dict that holds every one of `fields`; else a ConfigError
    that names `where`, what was expected and the missing fields."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a {what} must be a JSON object, got {type(raw).__name__}")
    missing = [k for k in fields if k not in raw]
    if missing:
        raise ConfigError(f"{where}: the {what} has no field {', '.join(missing)}")
    return raw


def check_finite_tensor(name: str, x: Any) -> Any:
    """`x` (a torch tensor or NumPy array) when every entry is finite; else an error that counts the
    NaN and infinite entries. Costs one pass over `x`: on hot paths, call it under `debug_checks()`."""
    import numpy as np

    if hasattr(x, "detach"):  # torch
        import torch

        bad = ~torch.isfinite(x)
        n_bad, n_nan = int(bad.sum()), int(torch.isnan(x).sum())
    else:
        arr = np.asarray(x)
        bad = ~np.isfinite(arr)
        n_bad, n_nan = int(bad.sum()), int(np.isnan(arr).sum())
    if n_bad:
        shape = tuple(x.shape)
        raise ConfigError(
            f"{name} must be finite, got {n_nan} NaN and {n_bad - n_nan} infinite entries (shape {shape})"
        )
    return x


def _preview(nodes: Collection[Any], k: int = 8) -> str:
    shown = list(nodes)[:k]
    head = ", ".join(repr(v) for v in shown)
    return f"{len(nodes)} nodes ({head}{', ...' if len(nodes) > k else ''})"


def node_set(
    name: str,
    value: object,
    nodes: Collection[Hashable] | None = None,
    *,
    allow_empty: bool = True,
) -> frozenset[Hashable]:
    """A node or a collection of nodes as a frozenset, the one rule every graph function follows:

    - None is the empty set;
    - a value that is itself one of `nodes` is that one node (so a graph whose nodes are tuples
      takes `("X", 1)` as a node);
    - otherwise a string or any other non-iterable is one node, and an iterable is a set of nodes.

    With `nodes`, every member must be one of them; the error names `name`, the unknown node and
    the graph's nodes. With `allow_empty=False`, the empty set is an error too.
    """
    if value is None:
        out: frozenset[Hashable] = frozenset()
    else:
        single = isinstance(value, str) or not isinstance(value, Iterable)
        if not single and nodes is not None:
            try:
                single = value in nodes
            except TypeError:  # unhashable: a list or a set of nodes
                single = False
        try:
            out = frozenset([value] if single else value)  # type: ignore[list-item, arg-type]
        except TypeError as e:
            msg = f"{name} must be a node or a collection of hashable nodes, got {value!r}"
            raise ConfigError(msg) from e
    if nodes is not None:
        for v in out:
            try:
                known = v in nodes
            except TypeError:
                known = False
            if not known:
                raise ConfigError(f"{name}: unknown node {v!r}; the graph has {_preview(nodes)}")
    if not allow_empty and not out:
        raise ConfigError(f"{name} must name at least one node, got {value!r}")
    return out
