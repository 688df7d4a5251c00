"""Hallucination labels, text-only baselines and detection metrics for SLT reliability (arXiv 2510.18439).

- CHAIR = |{entity words of the hypothesis not in the reference}| / |{entity words of the hypothesis}|,
  0 when the hypothesis has no entity word; a sentence is hallucinated iff CHAIR > 0.
- Baselines (each oriented so that higher = more likely hallucinated): 1 − confidence (mean token
  probability), perplexity exp(−mean log p), mean token entropy; META, a logistic regression on the
  grounding sentence score(s) plus confidence, log-perplexity and entropy.
- Metrics: ROC-AUC, average precision, accuracy at 0.5 of a calibrated rate, Pearson and Spearman of a
  score against CHAIR, ROC curve points.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

# --------------------------------------------------------------------------- labels


def chair(hyp_words: Sequence[str], ref_entities: Iterable[str], entity_vocab: Collection[str]) -> float:
    """CHAIR of one hypothesis: the share of its entity words (occurrences) absent from the reference.

    hyp_words: the hypothesis's words; ref_entities: the reference's entity words; entity_vocab: every
    word that is an entity (people, places, objects, numbers). Matching is exact (normalise beforehand).
    """
    ref = set(ref_entities)
    entities = [w for w in hyp_words if w in entity_vocab]
    if not entities:
        return 0.0
    return sum(w not in ref for w in entities) / len(entities)


def chair_scores(
    hyps: Sequence[Sequence[str]], refs_entities: Sequence[Iterable[str]], entity_vocab: Collection[str]
) -> np.ndarray:
    """CHAIR of every hypothesis; (n,)."""
    if len(hyps) != len(refs_entities):
        raise ValueError(f"refs_entities: {len(refs_entities)} references for {len(hyps)} hypotheses")
    return np.array([chair(h, r, entity_vocab) for h, r in zip(hyps, refs_entities, strict=True)])


def hallucinated(chair_values: np.ndarray | Sequence[float]) -> np.ndarray:
    """The label: 1 iff CHAIR > 0; (n,) int."""
    return (np.asarray(chair_values, dtype=np.float64) > 0).astype(np.int64)


# --------------------------------------------------------------------------- text baselines


def _masked(
    values: torch.Tensor | np.ndarray, mask: torch.Tensor | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(mask, dtype=bool)
    if v.shape != m.shape:
        raise ValueError(f"mask: shape {m.shape} does not match the values {v.shape}")
    n = m.sum(-1)
    if (n == 0).any():
        raise ValueError(f"mask: sentence {int(np.flatnonzero(n == 0)[0])} has no scored token")
    return np.where(m, v, 0.0), n


def confidence(logp: torch.Tensor | np.ndarray, mask: torch.Tensor | np.ndarray) -> np.ndarray:
    """Mean probability of the generated tokens; logp (B, N) log p of each token -> (B,)."""
    v, n = _masked(np.exp(np.asarray(logp, dtype=np.float64)), mask)
    return v.sum(-1) / n


def perplexity(logp: torch.Tensor | np.ndarray, mask: torch.Tensor | np.ndarray) -> np.ndarray:
    """exp(−mean log p) of the generated tokens; (B, N) -> (B,)."""
    v, n = _masked(logp, mask)
    return np.exp(-v.sum(-1) / n)


def mean_entropy(entropy: torch.Tensor | np.ndarray, mask: torch.Tensor | np.ndarray) -> np.ndarray:
    """Mean entropy of the next-token distributions; (B, N) -> (B,)."""
    v, n = _masked(entropy, mask)
    return v.sum(-1) / n


def text_baselines(
    logp: torch.Tensor | np.ndarray, entropy: torch.Tensor | np.ndarray, mask: torch.Tensor | np.ndarray
) -> dict[str, np.ndarray]:
    """The three text baselines as hallucination scores (higher = more likely hallucinated)."""
    return {
        "confidence": 1.0 - confidence(logp, mask),
        "perplexity": perplexity(logp, mask),
        "entropy": mean_entropy(entropy, mask),
    }


def meta_features(
    grounding: np.ndarray, logp: torch.Tensor | np.ndarray, entropy: torch.Tensor | np.ndarray, mask
) -> np.ndarray:
    """META's inputs: grounding sentence score(s) (n,) or (n, k), then confidence, log-perplexity, entropy."""
    g = np.asarray(grounding, dtype=np.float64)
    g = g[:, None] if g.ndim == 1 else g
    text = [confidence(logp, mask), np.log(perplexity(logp, mask)), mean_entropy(entropy, mask)]
    if g.shape[0] != len(text[0]):
        raise ValueError(f"grounding: {g.shape[0]} rows for {len(text[0])} sentences")
    return np.column_stack([g, *text])


class MetaDetector:
    """META: a logistic regression on grounding + text signals predicting the hallucination label."""

    def __init__(self, C: float = 1.0) -> None:
        self.C = C

    def fit(self, x: np.ndarray, y: np.ndarray | Sequence[int]) -> MetaDetector:
        y = np.asarray(y, dtype=np.int64)
        if len(np.unique(y)) < 2:
            raise ValueError("y: META needs both labels (0 and 1) among its training sentences")
        self.model_ = make_pipeline(
            StandardScaler(), LogisticRegression(C=self.C, max_iter=2000, class_weight="balanced")
        )
        self.model_.fit(np.asarray(x, dtype=np.float64), y)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """P(hallucinated); (n,)."""
        if not hasattr(self, "model_"):
            raise RuntimeError("MetaDetector: call fit first")
        return self.model_.predict_proba(np.asarray(x, dtype=np.float64))[:, 1]


# --------------------------------------------------------------------------- metrics


def detection_metrics(
    y: np.ndarray | Sequence[int],
    score: np.ndarray | Sequence[float],
    rate: np.ndarray | Sequence[float] | None = None,
    chair_values: np.ndarray | Sequence[float] | None = None,
) -> dict[str, float]:
    """AUC and AP of `score` (higher = hallucinated); accuracy of rate ≥ 0.5 when a calibrated `rate` is
    given; Pearson and Spearman of `score` against CHAIR when given (nan where a side is constant)."""
    y = np.asarray(y, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    if y.shape != score.shape:
        raise ValueError(f"score: shape {score.shape} does not match the labels {y.shape}")
    both = len(np.unique(y)) == 2
    out = {
        "auc": float(roc_auc_score(y, score)) if both else float("nan"),
        "ap": float(average_precision_score(y, score)) if both else float("nan"),
    }
    if rate is not None:
        out["accuracy"] = float(((np.asarray(rate, dtype=np.float64) >= 0.5) == y).mean())
    if chair_values is not None:
        c = np.asarray(chair_values, dtype=np.float64)
        constant = np.ptp(c) == 0 or np.ptp(score) == 0
        out["pearson"] = float("nan") if constant else float(pearsonr(score, c).statistic)
        out["spearman"] = float("nan") if constant else float(spearmanr(score, c).statistic)
    return out


def roc_points(
    y: np.ndarray | Sequence[int], score: np.ndarray | Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """(false positive rates, true positive rates) of the ROC curve, for figures."""
    fpr, tpr, _ = roc_curve(np.asarray(y), np.asarray(score, dtype=np.float64))
    return fpr, tpr
