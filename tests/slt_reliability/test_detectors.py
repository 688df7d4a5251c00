"""detectors.py: cross-fitting scores each sentence with detectors fitted on the other folds only (its
own label cannot move its score), fitting on dev scores test, and a split with one label is refused."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from iclr26.core.errors import UserError
from iclr26.slt_reliability import detectors as D
from iclr26.slt_reliability.data import make_corpus
from iclr26.slt_reliability.models import Vocab
from iclr26.slt_reliability.reliability import ReliabilityConfig
from iclr26.slt_reliability.score import Scored, rest_pose, score_split
from iclr26.slt_reliability.train import TrainConfig, build_translator

CFG = ReliabilityConfig()


@pytest.fixture(scope="module")
def scored() -> Scored:
    corpus = make_corpus("phoenix_like", seed=1, n_train=20, n_dev=0, n_test=40)
    torch.manual_seed(0)
    cfg = TrainConfig(d_model=32, heads=2)
    model = build_translator("gloss_free", Vocab(corpus.words), corpus.glosses, cfg)
    out = score_split(model.eval(), corpus.test, corpus.entity_words, rest_pose(corpus.train), CFG, max_len=8)
    y = np.random.default_rng(0).integers(0, 2, size=len(out.y))  # labels for the test: any mix of both
    return dataclasses.replace(out, y=y, chair=y * 0.5)


def test_crossfit_scores_do_not_depend_on_their_own_labels(scored, monkeypatch) -> None:
    pairs = D.fold_indices(scored.y, 4, seed=0)
    monkeypatch.setattr(D, "fold_indices", lambda y, folds, seed=0: pairs)  # the same folds after flipping
    base = D.crossfit(scored, CFG, folds=4)
    held = pairs[0][1]
    y = scored.y.copy()
    y[held] = 1 - y[held]
    flipped = D.crossfit(dataclasses.replace(scored, y=y, chair=y * 0.5), CFG, folds=4)
    for name in (*D.METHODS, *D.SIGNALS):
        assert np.allclose(base.score[name][held], flipped.score[name][held]), name
        assert np.isfinite(base.score[name]).all()
    others = np.setdiff1d(np.arange(len(y)), held)
    assert not np.allclose(base.score["grounding"][others], flipped.score["grounding"][others])


def test_evaluate_fits_on_one_split_and_scores_another(scored) -> None:
    fit, target = scored.select(range(0, 20)), scored.select(range(20, 40))
    ev = D.evaluate(fit, target, CFG)
    direct = D.Detectors.fit(fit, CFG).scores(target)
    for name in D.METHODS:
        assert np.allclose(ev.score[name], direct[name])
        assert ((ev.rate[name] >= 0) & (ev.rate[name] <= 1)).all()
    assert len(ev.y) == 20 and "dev" in ev.how


def test_one_label_is_refused(scored) -> None:
    same = dataclasses.replace(scored, y=np.ones_like(scored.y))
    with pytest.raises(UserError, match="every sentence is hallucinated"):
        D.crossfit(same, CFG)
    few = scored.y.copy()
    few[:] = 0
    few[0] = 1
    with pytest.raises(UserError, match="at least 2 sentences of each label"):
        D.fold_indices(few, 5)


def test_auc_equals_sklearns_roc_auc_with_ties_and_any_labels() -> None:
    from sklearn.metrics import roc_auc_score

    from iclr26.slt_reliability.detectors import auc

    rng = np.random.default_rng(0)
    for n in (2, 7, 60, 500):
        y = rng.integers(0, 2, n)
        y[:2] = (0, 1)
        for score in (rng.normal(size=n), rng.integers(0, 4, n).astype(float)):  # continuous, heavily tied
            assert auc(y, score) == pytest.approx(roc_auc_score(y, score), abs=1e-12)
            assert auc(np.where(y == 1, 5, -3), score) == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    assert np.isnan(auc(np.ones(5), np.arange(5.0)))
    with pytest.raises(ValueError, match="finite"):
        auc(np.array([0, 1]), np.array([0.0, np.nan]))
