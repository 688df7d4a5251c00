"""Learning-rate schedules shared by the systems' training loops."""

from __future__ import annotations

import math


def warmup_cosine(step: int, warmup: int, total: int, floor: float = 0.0) -> float:
    """LR factor: linear warm-up for `warmup` steps, then cosine decay from 1 to `floor` at `total`."""
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
