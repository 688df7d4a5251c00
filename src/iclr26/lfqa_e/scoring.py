"""From metric scores to preferences, and from preferences to agreement with the human label
(the paper's §3.3: accuracy, per-class precision, recall and F1, and their macro average over the
three classes response_a, response_b, same).

Tie rule for a scalar metric: the pair is "same" when the two scores differ by at most
`tie_margin` of the larger magnitude, |s_a − s_b| ≤ tie_margin · max(|s_a|, |s_b|); otherwise
the higher score wins. The margin is relative, so one number serves lengths, ROUGE and cosines.
A preference of None is a failure (a judge reply with no verdict) and counts as wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iclr26.core.intervals import bootstrap_interval
from iclr26.core.validation import check_interval
from iclr26.lfqa_e.data import LABELS, Comparison

INDEX = {lab: i for i, lab in enumerate(LABELS)}


def preferences(scores: np.ndarray, tie_margin: float = 0.01, *, relative: bool = True) -> list[str]:
    """Each row's preference from (n, 2) scores of (response_a, response_b): the relative tie rule
    above, or |s_a − s_b| ≤ tie_margin when not `relative` (model scores on a logit scale)."""
    check_interval("tie_margin", tie_margin, 0.0, 1.0 if relative else float("inf"))
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] != 2:
        raise ValueError(f"scores must have shape (n, 2), got {scores.shape}")
    a, b = scores[:, 0], scores[:, 1]
    scale = np.maximum(np.abs(a), np.abs(b)) if relative else 1.0
    tie = np.abs(a - b) <= tie_margin * scale
    return [
        "same" if t else ("response_a" if x > y else "response_b") for t, x, y in zip(tie, a, b, strict=True)
    ]


@dataclass(frozen=True)
class Agreement:
    """How a metric's preferences agree with the labels (percentages)."""

    n: int
    accuracy: float
    macro_f1: float
    per_class: dict[str, dict[str, float]]
    """label -> precision, recall, f1 (%)"""
    tie_accuracy: float | None
    """recall on the pairs labelled same (None when there are none)"""
    failures: float
    """share of pairs with no preference (counted wrong)"""
    accuracy_ci: tuple[float, float] | None = None
    macro_f1_ci: tuple[float, float] | None = None


def _codes(predictions: Sequence[str | None], labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    if len(predictions) != len(labels):
        raise ValueError(f"{len(predictions)} predictions for {len(labels)} labels")
    for p in predictions:
        if p is not None and p not in INDEX:
            raise ValueError(f"a preference must be one of {', '.join(LABELS)} or None, got {p!r}")
    pred = np.array([INDEX[p] if p is not None else -1 for p in predictions], dtype=np.int64)
    return pred, np.array([INDEX[y] for y in labels], dtype=np.int64)


def _accuracy(pred: np.ndarray, gold: np.ndarray) -> float:
    return 100.0 * float(np.mean(pred == gold)) if len(gold) else float("nan")


def _per_class(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """(3, 3) rows of precision, recall, F1 (%) per class; 0 where undefined (as scikit-learn's
    zero_division=0)."""
    out = np.zeros((len(LABELS), 3))
    for k in range(len(LABELS)):
        tp = np.sum((pred == k) & (gold == k))
        fp = np.sum((pred == k) & (gold != k))
        fn = np.sum((pred != k) & (gold == k))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        out[k] = (100 * p, 100 * r, 100 * (2 * p * r / (p + r)) if p + r else 0.0)
    return out


def _macro_f1(pred: np.ndarray, gold: np.ndarray) -> float:
    return float(_per_class(pred, gold)[:, 2].mean())


def agreement(
    predictions: Sequence[str | None], labels: Sequence[str], *, n_boot: int = 0, seed: int = 0
) -> Agreement:
    """Accuracy, per-class P/R/F1, macro-F1 and tie accuracy of `predictions` against `labels`,
    with bootstrap 95% intervals when `n_boot` > 0."""
    pred, gold = _codes(predictions, labels)
    if not len(gold):
        raise ValueError("no comparisons to score")
    table = _per_class(pred, gold)
    ties = gold == INDEX["same"]
    return Agreement(
        n=len(gold),
        accuracy=_accuracy(pred, gold),
        macro_f1=float(table[:, 2].mean()),
        per_class={
            lab: dict(zip(("precision", "recall", "f1"), map(float, table[k]), strict=True))
            for k, lab in enumerate(LABELS)
        },
        tie_accuracy=_accuracy(pred[ties], gold[ties]) if ties.any() else None,
        failures=100.0 * float(np.mean(pred < 0)),
        accuracy_ci=bootstrap_interval(_accuracy, (pred, gold), n_boot, seed) if n_boot else None,
        macro_f1_ci=bootstrap_interval(_macro_f1, (pred, gold), n_boot, seed) if n_boot else None,
    )


def breakdown(
    predictions: Sequence[str | None], comparisons: Sequence[Comparison], by: str
) -> dict[str, Agreement]:
    """`agreement` within each value of a comparison attribute (language, compare_type or topic)."""
    if by not in ("language", "compare_type", "topic"):
        raise ValueError(f"by must be language, compare_type or topic, got {by!r}")
    groups: dict[str, list[int]] = {}
    for i, c in enumerate(comparisons):
        groups.setdefault(getattr(c, by) or "(none)", []).append(i)
    return {
        g: agreement([predictions[i] for i in idx], [comparisons[i].label for i in idx])
        for g, idx in sorted(groups.items())
    }


def confusion(predictions: Sequence[str | None], labels: Sequence[str]) -> np.ndarray:
    """(3, 4) counts: rows the label, columns the prediction (response_a, response_b, same, none)."""
    pred, gold = _codes(predictions, labels)
    out = np.zeros((len(LABELS), len(LABELS) + 1), dtype=np.int64)
    for p, g in zip(pred, gold, strict=True):
        out[g, p if p >= 0 else len(LABELS)] += 1
    return out


__all__ = ["INDEX", "Agreement", "agreement", "breakdown", "confusion", "preferences"]
