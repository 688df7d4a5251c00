"""Token and time accounting for language-model calls.

Every backend holds a `UsageMeter`; each request adds its prompt and completion tokens (as the
server reports them) and its wall time. A run sums the meters of the models it made
(`RunContext.chat_model`) into `results.json` under `llm_usage`, which is how token claims
(e.g. Eigen-1's "−53.5% tokens") are measured. Cache hits are counted apart: they cost no tokens.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Usage:
    """Totals over a set of model calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    cached_calls: int = 0  # answered from the response cache: no tokens, no server time
    estimated_calls: int = 0  # interrupted streams whose server sent no counts: deltas counted

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.wall_s + other.wall_s,
            self.cached_calls + other.cached_calls,
            self.estimated_calls + other.estimated_calls,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.calls - other.calls,
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.wall_s - other.wall_s,
            self.cached_calls - other.cached_calls,
            self.estimated_calls - other.estimated_calls,
        )

    def as_dict(self) -> dict[str, float | int]:
        """JSON-ready totals, with `total_tokens`."""
        return {**asdict(self), "wall_s": round(self.wall_s, 3), "total_tokens": self.total_tokens}


class UsageMeter:
    """A thread-safe running total of `Usage` (requests may run in parallel)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage()

    def record(
        self,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        wall_s: float = 0.0,
        *,
        cached: bool = False,
        estimated: bool = False,
    ) -> None:
        """Add one call."""
        one = Usage(1, int(prompt_tokens), int(completion_tokens), float(wall_s), int(cached), int(estimated))
        self._add(one)
        for meter in _CELL_METERS.get():  # the study cells this call was made in (`metered`)
            if meter is not self:
                meter._add(one)

    def _add(self, usage: Usage) -> None:
        with self._lock:
            self._total = self._total + usage

    @property
    def total(self) -> Usage:
        """The totals so far."""
        with self._lock:
            return self._total

    def reset(self) -> Usage:
        """Return the totals so far and start again from zero."""
        with self._lock:
            out, self._total = self._total, Usage()
        return out


_CELL_METERS: ContextVar[tuple[UsageMeter, ...]] = ContextVar("iclr26_cell_meters", default=())


@contextmanager
def metered() -> Iterator[UsageMeter]:
    """Within the block, every call any model records in this context (this thread, and the threads
    `chat_many` starts from it) is counted in the yielded meter too: one study cell's usage, however
    many cells run at once in other threads or processes."""
    meter = UsageMeter()
    token = _CELL_METERS.set((*_CELL_METERS.get(), meter))
    try:
        yield meter
    finally:
        _CELL_METERS.reset(token)
