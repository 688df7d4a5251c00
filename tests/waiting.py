"""Waiting on a condition in tests, never on a fixed time: `wait_until(probe, timeout_s, what)` calls
`probe` until it returns something truthy and returns that, or fails naming `what` and the last value."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")


def wait_until(probe: Callable[[], T], timeout_s: float, what: str, *, every_s: float = 0.1) -> T:
    """`probe()`'s first truthy value within `timeout_s`; a test failure naming `what` otherwise."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout_s:g} s (last: {value!r:.300})")
        time.sleep(every_s)
