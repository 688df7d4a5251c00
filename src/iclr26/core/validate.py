"""Shared checks for numeric parameters: one place for the message that names the field, the
value received and what is accepted (a `ConfigError`, which the CLI prints as one line)."""

from __future__ import annotations

import math

from iclr26.core.config import ConfigError


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
        if low is not None and high is not None:
            want = f"an int in [{low}, {high}]"
        elif low is not None:
            want = f"an int >= {low}"
        elif high is not None:
            want = f"an int <= {high}"
        else:
            want = "an int"
        want += f" ({unit})" if unit else ""
        want += " or None (no limit)" if optional else ""
        raise ConfigError(f"{name} must be {want}, got {value!r}")
    return value  # type: ignore[return-value]


def check_seconds(name: str, value: object, *, optional: bool = False) -> float | None:
    """`value` as a positive, finite number of seconds, or None when `optional`."""
    if value is None and optional:
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        want = "a positive finite number of seconds" + (" or None (no limit)" if optional else "")
        raise ConfigError(f"{name} must be {want}, got {value!r}")
    return float(value)  # type: ignore[arg-type]
