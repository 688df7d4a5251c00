"""What DASH's Triton kernels accept and how they run, in one module that imports neither Triton nor
torch: the dQ reductions (`DQMode`, whose values `kernels.py` compares `DQ_MODE` against), the
head dims, and whether the kernels run in Triton's CPU interpreter (`interpreting`)."""

from __future__ import annotations

import os
from enum import IntEnum


class DQMode(IntEnum):
    """The dQ reduction of the backward (`kernels.py`'s module docstring); the value is the kernel's
    `DQ_MODE` constexpr, the lower-case name the `dq_mode` argument of `attention`."""

    ORDERED = 0
    """deterministic: spin on the Q tile's turn counter, add, release the next turn"""
    ATOMIC = 1
    """non-deterministic: fp32 atomic adds in whatever order the hardware lands them"""
    DEFERRED = 2
    """deterministic: one slot per (tile, turn), summed in turn order afterwards"""
    ORDERED_LAZY = 3
    """deterministic: as ORDERED, each turn released one step late"""
    TWO_PASS = 4
    """deterministic: the dK/dV pass skips dQ; a second kernel, one program per Q tile, sums
    dQ over the KV blocks in order (no cross-program reduction, the score tiles recomputed)"""
    PARTIALS = 5
    """deterministic: each KV block writes its dQ contribution to its own fp32 slice of a
    [n_kv_blocks, B·H, L, d] workspace; a reduction kernel sums the slices in ascending KV order
    (no spin, no recomputation, n_kv_blocks × dQ's size in fp32 of extra memory)"""

    @property
    def label(self) -> str:
        """The `dq_mode` string: ``ordered``, ``atomic``, ``deferred``, ``ordered_lazy``, ``two_pass``,
        ``partials``."""
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> DQMode:
        """The mode named `label` (one of `DQ_MODES`)."""
        return cls[label.upper()]


DQ_MODES = tuple(m.label for m in DQMode)
HEAD_DIMS = (16, 32, 64, 128, 256)
"""head dims the kernels support (powers of two: `tl.arange`; >= 16: `tl.dot`)"""


def interpreting() -> bool:
    """True when the kernels run in Triton's CPU interpreter: `TRITON_INTERPRET=1`, which Triton
    reads when it is first imported, so the entry point sets it before that (the tests' conftest,
    the CLI, `benchmarks/smoke_results.py`); this package only reads it."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"
