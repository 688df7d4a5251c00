"""Confidence intervals shared by the systems: the Wilson interval of a rate, and the percentile
bootstrap of any statistic of paired samples."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from iclr26.core.validation import check_int

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for k successes in n trials ((0, 1) when n = 0):
    (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    if k == 0:  # the bounds are exactly 0 and 1 there; the float formula leaves ~1e-17
        return 0.0, min(1.0, centre + half)
    if k == n:
        return max(0.0, centre - half), 1.0
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_interval(
    stat: Callable[..., float],
    arrays: Sequence[np.ndarray],
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of `stat(*arrays)`, the rows of every array resampled together
    with replacement (a paired bootstrap). Resamples where `stat` is undefined (nan, e.g. an AUC of
    one class) are left out; (nan, nan) when all are."""
    check_int("n_boot", n_boot, 1)
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError(f"arrays: lengths {[len(a) for a in arrays]} differ; the bootstrap pairs their rows")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    values = np.array([stat(*(a[i] for a in arrays)) for i in idx], dtype=np.float64)
    values = values[~np.isnan(values)]
    if not len(values):
        return math.nan, math.nan
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)
