"""The hallucination detectors compared, how they are fitted from sentence labels, and how they are
scored without using a sentence's own label (arXiv 2510.18439, Section 4).

- `Detectors.fit`: r_t (Eq. 5) with its tail pooling R (Eq. 6), META (a logistic regression on 1 − R
  and the three text signals), and the orientation of each token signal used alone, all from one
  labelled split;
- `evaluate`: fit on one split, score another (e.g. dev -> test);
- `crossfit`: stratified k-fold over one split, every sentence scored by detectors fitted on the
  other folds. This is the default on test: a translator that is nearly perfect on its seen signers
  (dev) leaves too few hallucinated dev sentences to fit anything.

Every score is oriented so that higher = more likely hallucinated. Each method's calibration (the
isotonic map of Eq. 7 to a hallucination rate, and an isotonic fit of CHAIR) is fitted on the
fitting part too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata
from sklearn.isotonic import IsotonicRegression
from sklearn.model_selection import StratifiedKFold

from iclr26.core.errors import UserError
from iclr26.slt_reliability import hallucination as H
from iclr26.slt_reliability.reliability import (
    FEATURE_NAMES,
    ReliabilityConfig,
    TokenReliability,
    tail_pool,
    token_features,
)
from iclr26.slt_reliability.score import Scored

METHODS: tuple[str, ...] = ("grounding", "confidence", "perplexity", "entropy", "META")
"""The detectors of the main table."""
SIGNALS: tuple[str, ...] = FEATURE_NAMES
"""Each token feature used alone (tail-pooled like R), for the per-signal table and ROC curves."""


def auc(y: np.ndarray, score: np.ndarray) -> float:
    """ROC-AUC (the larger label positive), nan when only one label is present.

    Computed as the Mann-Whitney statistic with mid-ranks for ties, which equals scikit-learn's
    `roc_auc_score` (tested) without its per-call input validation: the bootstrap intervals call
    this thousands of times, where the validation took most of the run's time."""
    y, score = np.asarray(y), np.asarray(score, dtype=float)
    labels = np.unique(y)
    if len(labels) != 2:
        return float("nan")
    if y.shape != score.shape or not np.isfinite(score).all():
        raise ValueError(
            f"auc: scores must be finite and shaped like the labels {y.shape}, got {score.shape}"
        )
    positive = y == labels[1]
    n_pos = int(positive.sum())
    n_neg = len(y) - n_pos
    ranks = rankdata(score)  # mid-ranks: a tied pair counts one half
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@dataclass
class Detectors:
    """Everything fitted from one labelled split."""

    reliability: TokenReliability
    meta: H.MetaDetector
    orientation: dict[str, float]
    """per token signal, +1 or −1 so that higher means grounded (the sign with the higher fitting AUC)"""

    @classmethod
    def fit(cls, scored: Scored, config: ReliabilityConfig, meta_C: float = 1.0) -> Detectors:
        """Fit r_t, META and the signal orientations on `scored` (needs both labels)."""
        rel = TokenReliability(config).fit(scored.passes, scored.y)
        p = scored.passes
        grounding = 1.0 - rel.sentence_score(p).numpy()
        meta = H.MetaDetector(meta_C).fit(
            H.meta_features(grounding, p.logp_vid, p.entropy_vid, p.mask), scored.y
        )
        feats = token_features(p, rel.attn_scaler_)
        orientation = {}
        for j, name in enumerate(SIGNALS):
            fitted = {
                s: auc(scored.y, -tail_pool(s * feats[..., j], p.mask, config.tail_q).numpy())
                for s in (1, -1)
            }
            orientation[name] = float(max(fitted, key=lambda s: np.nan_to_num(fitted[s])))
        return cls(rel, meta, orientation)

    def scores(self, scored: Scored) -> dict[str, np.ndarray]:
        """Every method's and every signal's hallucination score on `scored`; (n,) each."""
        p = scored.passes
        grounding = 1.0 - self.reliability.sentence_score(p).numpy()
        out = {"grounding": grounding, **H.text_baselines(p.logp_vid, p.entropy_vid, p.mask)}
        out["META"] = self.meta.predict_proba(H.meta_features(grounding, p.logp_vid, p.entropy_vid, p.mask))
        feats = token_features(p, self.reliability.attn_scaler_)
        q = self.reliability.config.tail_q
        for j, name in enumerate(SIGNALS):
            out[name] = -tail_pool(self.orientation[name] * feats[..., j], p.mask, q).numpy()
        return out


@dataclass
class Evaluation:
    """Scores of every sentence of the evaluated split, none of them fitted on its own label."""

    y: np.ndarray
    chair: np.ndarray
    score: dict[str, np.ndarray] = field(default_factory=dict)
    """hallucination score per method or signal"""
    rate: dict[str, np.ndarray] = field(default_factory=dict)
    """the isotonic hallucination rate (Eq. 7 for grounding), fitted on the fitting part"""
    chair_fit: dict[str, np.ndarray] = field(default_factory=dict)
    """an isotonic prediction of CHAIR from the score, fitted on the fitting part"""
    how: str = ""
    """how the detectors were fitted, for captions"""


def _check_labels(scored: Scored, what: str) -> None:
    if len(np.unique(scored.y)) < 2:
        kind = "hallucinated" if scored.y[0] else "grounded"
        raise UserError(
            f"{what}: every sentence is {kind}, so no detector can be fitted; use more sentences or "
            "fit on another split (fit_on)"
        )


def _score_part(det: Detectors, fit: Scored, target: Scored, out: Evaluation, index: np.ndarray) -> None:
    fit_scores, scores = det.scores(fit), det.scores(target)
    for name, s in scores.items():
        rate = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(fit_scores[name], fit.y)
        chair = IsotonicRegression(out_of_bounds="clip").fit(fit_scores[name], fit.chair)
        for table, values in ((out.score, s), (out.rate, rate.predict(s)), (out.chair_fit, chair.predict(s))):
            table.setdefault(name, np.full(len(out.y), np.nan))[index] = values


def evaluate(fit: Scored, target: Scored, config: ReliabilityConfig, meta_C: float = 1.0) -> Evaluation:
    """Detectors fitted on `fit`, scored on `target`."""
    _check_labels(fit, "the fitting split")
    out = Evaluation(y=target.y, chair=target.chair, how="fitted on dev")
    _score_part(Detectors.fit(fit, config, meta_C), fit, target, out, np.arange(len(target.y)))
    return out


def fold_indices(y: np.ndarray, folds: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified (fit, held-out) index pairs; fewer folds when the rarer label has fewer sentences."""
    minority = int(min(np.bincount(np.asarray(y), minlength=2)))
    if minority < 2:
        raise UserError(
            f"cross-fitting needs at least 2 sentences of each label, got {minority} of the rarer one; "
            "use more test sentences (n_test)"
        )
    splitter = StratifiedKFold(n_splits=min(folds, minority), shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(y)), y))


def crossfit(
    scored: Scored, config: ReliabilityConfig, meta_C: float = 1.0, folds: int = 5, seed: int = 0
) -> Evaluation:
    """Every sentence of `scored` scored by detectors fitted on the other folds (stratified k-fold)."""
    _check_labels(scored, "the test split")
    pairs = fold_indices(scored.y, folds, seed)
    out = Evaluation(y=scored.y, chair=scored.chair, how=f"{len(pairs)}-fold cross-fitting on test")
    for fit_idx, held in pairs:
        fit = scored.select(fit_idx)
        _score_part(Detectors.fit(fit, config, meta_C), fit, scored.select(held), out, held)
    return out


def methods_present(evaluation: Evaluation, names: Sequence[str] = METHODS) -> list[str]:
    """The names of `names` that `evaluation` scored."""
    return [n for n in names if n in evaluation.score]
