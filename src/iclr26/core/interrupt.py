"""SIGINT, SIGTERM and SIGHUP as one exception: `stop_on_signals()` makes each raise `Interrupted`
(a `KeyboardInterrupt`) in the main thread, so that the run's `finally` blocks and context managers
run as for Ctrl-C: sandboxes, tmux servers, Xvfb and apps are stopped (each lives in its own process
group, which its `close()` kills), and `results.json` says `interrupted` with what finished.

The first signal raises; later ones, while that cleanup runs, are ignored (SIGKILL still ends us). A
worker forked from ours (a process pool) inherits the handler: `interrupt_workers` signals the
workers of a pool, so that each stops its task through that task's own cleanup.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # SIGHUP: the terminal or ssh session closed


class _Received:
    """The signal this process got under `stop_on_signals` (None: none yet). One instance, shared by
    the handler and `raise_if_interrupted`; a forked pool worker gets its own copy."""

    signum: int | None = None


_RECEIVED = _Received()


class Interrupted(KeyboardInterrupt):
    """Stopped by `signum`; the CLI exits with `exit_code` (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    def __reduce__(self) -> tuple[type[Interrupted], tuple[int]]:
        return Interrupted, (self.signum,)  # a pool worker's Interrupted reaches the parent whole

    @property
    def name(self) -> str:
        """SIGINT, SIGTERM or SIGHUP."""
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as a shell reports death by that signal."""
        return 128 + self.signum


def exit_code(interrupt: KeyboardInterrupt) -> int:
    """The exit status for a run stopped by `interrupt` (a plain Ctrl-C is SIGINT's 130)."""
    return interrupt.exit_code if isinstance(interrupt, Interrupted) else 128 + signal.SIGINT


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP raise `Interrupted` once; the old handlers come back."""
    _RECEIVED.signum = None

    def handler(signum: int, frame: FrameType | None) -> None:
        if _RECEIVED.signum is not None:
            return  # already stopping; let the cleanup finish
        _RECEIVED.signum = signum
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def raise_if_interrupted() -> None:
    """Raise `Interrupted` if this process already got its signal: a pool worker calls it before each
    task, so that the tasks queued for it before the signal are not started."""
    if _RECEIVED.signum is not None:
        raise Interrupted(_RECEIVED.signum)


def interrupt_workers(pool: ProcessPoolExecutor, signum: int = signal.SIGTERM) -> None:
    """Cancel what `pool` has not started and send `signum` to its workers: forked under
    `stop_on_signals`, each raises `Interrupted` in the task it runs, whose cleanup stops that task's
    children, and starts no other task (`raise_if_interrupted`); the pool's shutdown then waits for
    that, not for the tasks to finish."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        with contextlib.suppress(ProcessLookupError, OSError):
            if proc.pid is not None:
                os.kill(proc.pid, signum)
