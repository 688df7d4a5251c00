"""CoNavBench's metrics: LH-VLN's (HCPLab-SYSU/LH-VLN `utils/metrics.py`, re-derived here) plus the
collaborative ones.

Per episode i of M with N_i sub-tasks, s_ji in {0, 1} the success of sub-task j:

- SR = mean_i S_i; OSR = mean_i O_i (S, O: episode success / oracle success, see `SUCCESS_RULES`);
- SPL = mean_i S_i * G_i / max(G_i, P_i), G, P the ground-truth and taken steps (0 when P_i = 0);
- NE = mean_i (mean_j e_ji), e the geodesic distance (m) to the goal when the sub-task ended;
- ISR = sum_ij s_ji / sum_i N_i;
- CSR = mean_i [s_1i N_i + sum_{j>1} s_ji (1 + (N_i - 1) s_{j-1,i})] / N_i^2  (Eq. CSR);
- CGT = mean_i [s_1i N_i w_1i + sum_{j>1} s_ji (1 + (N_i - 1) s_{j-1,i}) w_ji] / N_i, with
  w_ji = g_ji / sum_j g_ji the sub-task's share of the ground-truth steps  (Eq. CGT);
- TAR = mean over all sub-tasks of 1 - max(e - 1, 0) / max(e, l), l the geodesic length from where
  the sub-task began; 1 when e = l = 0, 0 when l = 0 < e  (Eq. TAR).

Ours: makespan (seconds until a mission's last action), interference events, schedule repairs,
and the step-level SR: the success rate over the step-by-step protocol's sub-task trials (each
sub-task run on its own from its reference start, LH-VLN's `metrics['step']`), which equals ISR
over those trials. Rates get Wilson 95% intervals; means get percentile-bootstrap intervals.

Collaborative success (the paper does not say): with `success_rule="delivered"` (our default) an
episode succeeds when the object reaches e, i.e. the delivering robot's final `place` succeeds (the
simulator lets a place succeed only while the robot holds the object, so it implies the pick and
handoff chain); `"all"` is LH-VLN's strict rule, every sub-task of every robot. Either way every
robot's sub-tasks enter ISR/CSR/CGT/TAR in schedule order (the plan's order).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from iclr26.core.intervals import wilson_interval

SUCCESS_RULES = ("delivered", "all")


@dataclass(frozen=True)
class EpisodeRecord:
    """One LH-VLN sample: an episode (or one step-by-step trial) as run by an agent.

    Per-sub-task tuples are in schedule order; `final` indexes the delivering sub-task (the last
    `place`), used by `success_rule="delivered"`.
    """

    episode: str
    kind: str  # "single" | "collaborative"
    collab_type: str | None
    subtask_successes: tuple[bool, ...]
    subtask_oracle_successes: tuple[bool, ...]
    subtask_steps: tuple[int, ...]  # actions taken, the stop included
    subtask_gt_steps: tuple[int, ...]  # the expert's actions
    subtask_nav_errors: tuple[float, ...]  # metres, geodesic, when the sub-task ended
    subtask_gt_lengths: tuple[float, ...]  # metres, geodesic, from where the sub-task began
    final: int
    makespan: float = math.nan  # seconds
    interference: int = 0
    repairs: int = 0
    wait_time: float = 0.0  # seconds robots spent waiting


def episode_success(successes: Sequence[bool], final: int, rule: str = "delivered") -> bool:
    """An episode's success under `rule` ("delivered": sub-task `final`; "all": every sub-task)."""
    if rule not in SUCCESS_RULES:
        raise ValueError(f"success_rule must be one of {SUCCESS_RULES}, got {rule!r}")
    if not successes:
        return False
    return bool(successes[final]) if rule == "delivered" else all(successes)


def success_rate(successes: Sequence[bool]) -> float:
    """SR (or OSR): the mean of episode successes; 0 for no episodes (LH-VLN)."""
    return sum(map(bool, successes)) / len(successes) if successes else 0.0


def spl(successes: Sequence[bool], gt_steps: Sequence[int], path_steps: Sequence[int]) -> float:
    """SPL = mean of s * G / max(G, P), a term 0 when P = 0 (LH-VLN)."""
    terms = [
        float(s) * g / max(g, p) if p > 0 else 0.0  # Eq. SPL
        for s, g, p in zip(successes, gt_steps, path_steps, strict=True)
    ]
    return sum(terms) / len(terms) if terms else 0.0


def navigation_error(errors: Sequence[float]) -> float:
    """NE: the mean of per-episode navigation errors (metres)."""
    return sum(errors) / len(errors) if errors else 0.0


def isr(subtask_successes: Sequence[Sequence[bool]]) -> float:
    """ISR = successful sub-tasks / all sub-tasks, pooled over episodes."""
    total = sum(len(s) for s in subtask_successes)
    return sum(sum(map(bool, s)) for s in subtask_successes) / total if total else 0.0


def _conditional_terms(s: Sequence[bool]) -> list[float]:
    """s_1 N, then s_j (1 + (N - 1) s_{j-1}): a success counts N times when its predecessor succeeded."""
    n = len(s)
    terms = [float(s[0]) * n]
    terms += [float(sj) * (1 + (n - 1) * float(prev)) for prev, sj in itertools.pairwise(s)]
    return terms


def csr(subtask_successes: Sequence[Sequence[bool]]) -> float:
    """CSR: the conditional success rate; episodes without sub-tasks count 0 (LH-VLN)."""
    if not subtask_successes:
        return 0.0
    total = 0.0
    for s in subtask_successes:
        if s:
            total += sum(_conditional_terms(s)) / len(s) ** 2  # Eq. CSR
    return total / len(subtask_successes)


def cgt(subtask_successes: Sequence[Sequence[bool]], subtask_gt_steps: Sequence[Sequence[float]]) -> float:
    """CGT: CSR's terms weighted by each sub-task's share of the ground-truth steps, over N.

    LH-VLN divides by zero when an episode's ground-truth steps sum to 0; we weight equally then.
    """
    if not subtask_successes:
        return 0.0
    total = 0.0
    for s, g in zip(subtask_successes, subtask_gt_steps, strict=True):
        if not s:
            continue
        gsum = float(sum(g))
        w = [gj / gsum for gj in g] if gsum > 0 else [1.0 / len(s)] * len(s)
        total += sum(t * wj for t, wj in zip(_conditional_terms(s), w, strict=True)) / len(s)  # Eq. CGT
    return total / len(subtask_successes)


def target_approach(error: float, gt_length: float) -> float:
    """One sub-task's TAR term: 1 - max(e - 1, 0) / max(e, l), with LH-VLN's edge cases."""
    if error == 0 and gt_length == 0:
        return 1.0  # a perfect match
    if gt_length == 0:
        return 0.0  # no reference path
    return 1.0 - max(error - 1.0, 0.0) / max(error, gt_length)  # Eq. TAR


def tar(errors: Sequence[Sequence[float]], gt_lengths: Sequence[Sequence[float]]) -> float:
    """TAR: the mean `target_approach` over every sub-task of every episode."""
    terms = [
        target_approach(e, g)
        for ei, gi in zip(errors, gt_lengths, strict=True)
        for e, g in zip(ei, gi, strict=True)
    ]
    return sum(terms) / len(terms) if terms else 0.0


def wilson_ci(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval for k successes in n trials at z = 1.96 ((0, 1) when n = 0)."""
    return wilson_interval(k, n, z=1.96)


def bootstrap_ci(
    values: Sequence[float], *, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """A percentile-bootstrap interval of the mean of `values` (nan, nan when empty)."""
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return math.nan, math.nan
    rng = random.Random(seed)
    n = len(finite)
    means = sorted(sum(rng.choices(finite, k=n)) / n for _ in range(n_boot))
    lo = math.floor((1 - level) / 2 * (n_boot - 1))
    hi = math.ceil((1 + level) / 2 * (n_boot - 1))
    return means[lo], means[hi]


def summarize(records: Sequence[EpisodeRecord], *, success_rule: str = "delivered") -> dict[str, float]:
    """Every metric over `records`, with `<name>_lo`/`<name>_hi` 95% intervals for SR, OSR and ISR
    (Wilson) and for makespan (bootstrap). Makespan averages over the finite values only."""
    S = [episode_success(r.subtask_successes, r.final, success_rule) for r in records]
    OS = [episode_success(r.subtask_oracle_successes, r.final, success_rule) for r in records]
    subs = [r.subtask_successes for r in records]
    ne = [
        sum(r.subtask_nav_errors) / len(r.subtask_nav_errors) if r.subtask_nav_errors else 0.0
        for r in records
    ]
    makespans = [r.makespan for r in records if not math.isnan(r.makespan)]
    n_sub = sum(len(s) for s in subs)
    k_sub = sum(sum(map(bool, s)) for s in subs)
    out = {
        "episodes": float(len(records)),
        "sr": success_rate(S),
        "osr": success_rate(OS),
        "spl": spl(S, [sum(r.subtask_gt_steps) for r in records], [sum(r.subtask_steps) for r in records]),
        "ne": navigation_error(ne),
        "isr": isr(subs),
        "csr": csr(subs),
        "cgt": cgt(subs, [r.subtask_gt_steps for r in records]),
        "tar": tar([r.subtask_nav_errors for r in records], [r.subtask_gt_lengths for r in records]),
        "makespan": sum(makespans) / len(makespans) if makespans else math.nan,
        "interference": sum(r.interference for r in records) / len(records) if records else 0.0,
        "repairs": sum(r.repairs for r in records) / len(records) if records else 0.0,
        "wait_time": sum(r.wait_time for r in records) / len(records) if records else 0.0,
    }
    out["sr_lo"], out["sr_hi"] = wilson_ci(sum(S), len(S))
    out["osr_lo"], out["osr_hi"] = wilson_ci(sum(OS), len(OS))
    out["isr_lo"], out["isr_hi"] = wilson_ci(k_sub, n_sub)
    out["makespan_lo"], out["makespan_hi"] = bootstrap_ci(makespans)
    return out


def step_level_sr(trials: Sequence[EpisodeRecord]) -> tuple[float, float, float]:
    """The step-level SR and its Wilson interval: successful step-by-step trials / all trials (each
    trial a one-sub-task record; this is ISR over the trials)."""
    k = sum(sum(map(bool, r.subtask_successes)) for r in trials)
    n = sum(len(r.subtask_successes) for r in trials)
    lo, hi = wilson_ci(k, n)
    return (k / n if n else 0.0), lo, hi
