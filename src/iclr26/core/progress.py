"""Progress for long work: a live rich bar on a terminal, periodic log lines elsewhere."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

T = TypeVar("T")


@contextmanager
def progress_task(
    console: Console, description: str, total: int, *, every: float = 0.1
) -> Iterator[Callable[[int], None]]:
    """Yield `advance(n=1)`: a live bar on a terminal, else a log line per `every` of total."""
    if total <= 0:
        raise ValueError(f"progress total must be positive, got {total}")
    if console.is_terminal:
        with Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        ) as prog:
            task = prog.add_task(description, total=total)
            yield lambda n=1: prog.advance(task, n)
        return
    state = {"done": 0, "next": max(1, int(total * every))}
    start = time.perf_counter()

    def advance(n: int = 1) -> None:
        state["done"] += n
        if state["done"] >= state["next"] or state["done"] >= total:
            el = time.perf_counter() - start
            console.print(f"{description}: {state['done']}/{total} ({el:.1f} s)", highlight=False)
            state["next"] = state["done"] + max(1, int(total * every))

    yield advance


def track(console: Console, iterable: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate over `iterable` showing progress (`total` defaults to `len(iterable)`)."""
    if total is None:
        total = len(iterable)  # type: ignore[arg-type]
    with progress_task(console, description, total) as advance:
        for item in iterable:
            yield item
            advance(1)
