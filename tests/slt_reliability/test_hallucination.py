"""CHAIR labels, text baselines and detection metrics of SLT reliability (arXiv 2510.18439)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr26.slt_reliability.hallucination import (
    MetaDetector,
    chair,
    chair_scores,
    confidence,
    detection_metrics,
    hallucinated,
    mean_entropy,
    meta_features,
    perplexity,
    roc_points,
    text_baselines,
)

ENTITIES = {"anna", "berlin", "hamburg", "car", "three", "five"}


@pytest.mark.parametrize(
    ("hyp", "ref", "expected"),
    [
        ("anna drives the car to berlin", {"anna", "car", "berlin"}, 0.0),
        ("anna drives the car to hamburg", {"anna", "car", "berlin"}, 1 / 3),
        ("tomorrow it rains", {"berlin"}, 0.0),  # no entity word: 0
        ("five five cars", {"three"}, 1.0),  # occurrences count; "cars" is not an entity word
        ("three and five in hamburg", {"three", "hamburg"}, 1 / 3),
        ("berlin berlin anna", {"anna"}, 2 / 3),
    ],
)
def test_chair_on_crafted_sentences(hyp, ref, expected):
    assert chair(hyp.split(), ref, ENTITIES) == pytest.approx(expected)


def test_chair_scores_and_labels():
    hyps = [["anna", "in", "berlin"], ["hello"], ["car", "three"]]
    scores = chair_scores(hyps, [{"anna", "berlin"}, set(), {"car"}], ENTITIES)
    assert scores.tolist() == pytest.approx([0.0, 0.0, 0.5])
    assert hallucinated(scores).tolist() == [0, 0, 1]
    with pytest.raises(ValueError, match="refs_entities"):
        chair_scores(hyps, [set()], ENTITIES)


def test_text_baselines_on_hand_cases():
    logp = np.log(np.array([[0.5, 0.25, 0.9], [0.8, 0.1, 0.1]]))
    mask = np.array([[True, True, False], [True, True, True]])
    entropy = np.array([[1.0, 2.0, 9.0], [0.3, 0.6, 0.9]])
    assert confidence(logp, mask).tolist() == pytest.approx([0.375, 1.0 / 3])
    assert perplexity(logp, mask).tolist() == pytest.approx([1 / math.sqrt(0.125), (0.8 * 0.01) ** (-1 / 3)])
    assert mean_entropy(entropy, mask).tolist() == pytest.approx([1.5, 0.6])
    base = text_baselines(logp, entropy, mask)
    assert base["confidence"].tolist() == pytest.approx([0.625, 2 / 3])
    x = meta_features(np.array([0.2, 0.7]), logp, entropy, mask)
    assert x.shape == (2, 4)
    assert x[:, 2].tolist() == pytest.approx(np.log(perplexity(logp, mask)).tolist())
    with pytest.raises(ValueError, match="sentence 0"):
        confidence(logp, np.zeros_like(mask))


def test_meta_detector_learns_from_its_signals():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    x = np.column_stack([y + 0.3 * rng.normal(size=200), rng.normal(size=200), rng.normal(size=200)])
    meta = MetaDetector().fit(x, y)
    p = meta.predict_proba(x)
    assert p.shape == (200,) and ((p >= 0) & (p <= 1)).all()
    assert detection_metrics(y, p)["auc"] > 0.95
    with pytest.raises(ValueError, match="both labels"):
        MetaDetector().fit(x, np.zeros(200))


def test_detection_metrics_on_hand_cases():
    y = np.array([0, 0, 1, 1])
    score = np.array([0.1, 0.4, 0.35, 0.8])
    m = detection_metrics(y, score, rate=np.array([0.2, 0.6, 0.5, 0.9]), chair_values=[0, 0, 0.5, 1])
    assert m["auc"] == pytest.approx(0.75)
    assert m["ap"] == pytest.approx((1.0 + 2 / 3) / 2)
    assert m["accuracy"] == pytest.approx(0.75)  # 0.6 on a grounded sentence is the one error
    assert m["spearman"] == pytest.approx(np.corrcoef([1, 3, 2, 4], [1.5, 1.5, 3, 4])[0, 1])
    assert m["pearson"] == pytest.approx(np.corrcoef(score, [0, 0, 0.5, 1])[0, 1])
    assert math.isnan(detection_metrics(np.zeros(3), np.arange(3.0))["auc"])
    fpr, tpr = roc_points(y, score)
    assert fpr[0] == 0 and tpr[-1] == 1 and (np.diff(fpr) >= 0).all()
