"""One seed for every random number generator a run touches."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Seeded:
    """The generators `set_seed` made: pass these explicitly rather than use global state."""

    seed: int
    rng: np.random.Generator
    torch_generator: torch.Generator


def set_seed(seed: int, *, deterministic: bool = False) -> Seeded:
    """Seed Python, NumPy and torch (CPU and CUDA) from `seed`; return explicit generators.

    With `deterministic=True`, torch also refuses non-deterministic kernels, so a seeded run
    repeats bit for bit on the same machine and library versions.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if deterministic:
        torch.use_deterministic_algorithms(True)
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    gen = torch.Generator().manual_seed(seed)
    return Seeded(seed=seed, rng=np.random.default_rng(seed), torch_generator=gen)
