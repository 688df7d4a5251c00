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


def derive_seed(seed: int, *stream: int | str, bits: int = 31) -> int:
    """A seed for one named stream of randomness of run `seed`, independent across streams.

    The stream is a path of ints and names (`derive_seed(seed, "sampler")`, `derive_seed(seed, 3,
    "episodes")`): NumPy's `SeedSequence` hashes `[seed, *path]` (a name as its UTF-8 bytes) into
    one 32-bit word, of which the top `bits` (31 by default: a valid seed for any library) are kept.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if not 1 <= bits <= 32:
        raise ValueError(f"bits must be in [1, 32], got {bits!r}")
    words: list[int] = [seed]
    for part in stream:
        if isinstance(part, str):
            words += part.encode()
        elif isinstance(part, int) and not isinstance(part, bool) and part >= 0:
            words.append(part)
        else:
            raise ValueError(f"a seed stream is made of non-negative ints and names, got {part!r}")
    state = np.random.SeedSequence(words).generate_state(1, dtype=np.uint32)[0]
    return int(state >> (32 - bits))
