"""The one claim rule: a method against a named baseline, paired over units.

The rule (`judge`): take the units both arms measured (finite values); with fewer than the claim's
`min_pairs` the design cannot test the claim (`not tested`). When every unit has both arms at or
beyond their floor (no better than a trivial policy: 0 vs 0 successes), the comparison is
`uninformative`. Otherwise the interval of the mean paired difference (method − baseline) is ± twice
its standard error, or a paired percentile bootstrap where the claim declares a skewed or bounded
metric (`interval="bootstrap"`): an interval wholly on the claimed side is `held`, wholly on the
other `did not hold`, one that contains 0 `within noise`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from iclr26.core.intervals import bootstrap_interval
from iclr26.core.records import ClaimCheck

MIN_PAIRS = 3
"""Paired units a claim needs by default: 2 × SE from fewer has too few degrees of freedom to trust."""

# From least to most damning for the claim: a claim against several baselines reports its worst.
_ORDER = ("held", "within noise", "uninformative", "did not hold", "not tested")


@dataclass(frozen=True)
class Claim:
    """What a study claims: `method` beats each of `baselines` on `metric`, paired over the units.

    The baselines are named before the run. Against several, the claim must hold against every one (so
    picking the best of them after the fact cannot help it), and the reported check is the worst.
    `floor` is the metric's trivial value (0 successes) and `floor_arm` a floor arm of the study: a unit
    where both compared arms are no better than it counts as at the floor. `interval="bootstrap"`
    declares a skewed or bounded metric (a rate near 0 or 1, a heavy tail)."""

    metric: str
    method: str
    baselines: tuple[str, ...]
    higher_is_better: bool = True
    interval: Literal["se", "bootstrap"] = "se"
    min_pairs: int = MIN_PAIRS
    floor: float | None = None
    floor_arm: str | None = None
    label: str = ""  # the metric as the report names it; "": `metric`

    def __post_init__(self) -> None:
        if isinstance(self.baselines, str):
            object.__setattr__(self, "baselines", (self.baselines,))
        if not self.baselines:
            raise ValueError(f"claim on {self.metric!r}: name at least one baseline")
        if self.method in self.baselines:
            raise ValueError(f"claim on {self.metric!r}: {self.method!r} is both the method and a baseline")
        if self.interval not in ("se", "bootstrap"):
            raise ValueError(f"claim on {self.metric!r}: interval must be 'se' or 'bootstrap'")
        if self.min_pairs < 2:
            raise ValueError(f"claim on {self.metric!r}: min_pairs must be >= 2 (a spread needs two pairs)")


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, int | float) and math.isfinite(x)


def judge(
    claim: Claim,
    baseline: str,
    method_values: Mapping[str, float],
    baseline_values: Mapping[str, float],
    floor_values: Mapping[str, float] | None = None,
) -> ClaimCheck:
    """The check of `claim` against `baseline`, from each arm's value per unit key (`floor_values`: the
    floor arm's, when the claim names one); see the module docstring for the rule."""
    keys = [k for k in method_values if _finite(method_values[k]) and _finite(baseline_values.get(k))]
    label = claim.label or claim.metric
    m = np.array([method_values[k] for k in keys], dtype=np.float64)
    b = np.array([baseline_values[k] for k in keys], dtype=np.float64)
    mean_m = float(m.mean()) if len(keys) else math.nan
    mean_b = float(b.mean()) if len(keys) else math.nan
    base = dict(metric=label, method=claim.method, method_value=mean_m, baseline=baseline,
                baseline_value=mean_b, higher_is_better=claim.higher_is_better, n=len(keys))  # fmt: skip
    if len(keys) < claim.min_pairs:
        rule = f"{len(keys)} paired unit(s), fewer than the {claim.min_pairs} the claim needs"
        return ClaimCheck(**base, verdict="not tested", rule=rule)
    sign = 1.0 if claim.higher_is_better else -1.0
    floors = _floors(claim, keys, floor_values)
    if floors is not None and all(sign * (m - floors) <= 0) and all(sign * (b - floors) <= 0):
        return ClaimCheck(
            **base, verdict="uninformative", rule=f"both arms at their floor on all {len(keys)} units"
        )
    d = m - b
    mean_d = float(d.mean())
    if claim.interval == "bootstrap":
        lo, hi = bootstrap_interval(np.mean, [d], n_boot=2000, seed=0)
        rule = f"paired bootstrap 95% over {len(keys)} units"
    else:
        half = float(2 * d.std(ddof=1) / math.sqrt(len(d)))
        lo, hi = mean_d - half, mean_d + half
        rule = f"± 2 SE of {len(keys)} paired differences"
    better, worse = (lo > 0, hi < 0) if sign > 0 else (hi < 0, lo > 0)
    verdict = "held" if better else "did not hold" if worse else "within noise"
    margin = (hi - lo) / 2
    return ClaimCheck(**base, margin=margin, verdict=verdict, interval=[lo, hi], rule=rule)


def _floors(claim: Claim, keys: Sequence[str], floor_values: Mapping[str, float] | None) -> np.ndarray | None:
    """The floor per paired unit: the floor arm's value, else the claim's constant floor, else None."""
    if (
        claim.floor_arm is not None
        and floor_values is not None
        and all(_finite(floor_values.get(k)) for k in keys)
    ):
        return np.array([floor_values[k] for k in keys], dtype=np.float64)
    if claim.floor is not None:
        return np.full(len(keys), float(claim.floor))
    return None


def worst(checks: Sequence[ClaimCheck]) -> ClaimCheck:
    """Of a claim's checks against each of its baselines, the one least favourable to the claim."""
    return max(checks, key=lambda c: _ORDER.index(c.verdict))
