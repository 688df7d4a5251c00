"""Issue 61's counter-prior experiment: the corpora with an entity prior (skewed conditionals, a
counter-prior share of test sentences, place-first translations, harder signers), the default corpora
unchanged, the experiment's scale-free degradation measure, its length floor, the study's design, and
one tiny end-to-end run."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.ledger import CELLS_FILE
from iclr26.core.runner import run_system
from iclr26.slt_reliability import SYSTEM
from iclr26.slt_reliability.config import SLTConfig
from iclr26.slt_reliability.counter_prior import (
    ARMS,
    oriented_crossfit,
    rise_share,
    study,
)
from iclr26.slt_reliability.data import (
    _PH_NUMBER,
    _PH_PLACE,
    _PH_WEATHER,
    CorpusConfig,
    make_corpus,
    make_signers,
)

N = {"n_train": 1500, "n_dev": 0, "n_test": 400}


def _pairs(sample) -> list[tuple[str, str]]:
    """(place, weather-or-number) pairings of a sample's glosses as the prior grammar writes them."""
    g, out = sample.glosses, []
    for i, x in enumerate(g):
        if x not in _PH_PLACE:
            continue
        nxt = g[i + 1 : i + 5]
        if nxt and nxt[0] in _PH_WEATHER:
            out.append((x, nxt[0]))
            if len(nxt) > 2 and nxt[1] == "THEN":
                out.append((x, nxt[2]))
        elif nxt and nxt[0] == "TEMPERATURE":
            out.append((x, next(n for n in nxt if n in _PH_NUMBER)))
    return out


@pytest.fixture(scope="module")
def skewed():
    return make_corpus("phoenix_like", seed=3, **N, config=CorpusConfig(entity_prior="skewed", dominance=0.8))


@pytest.fixture(scope="module")
def uniform():
    return make_corpus("phoenix_like", seed=3, **N, config=CorpusConfig(entity_prior="uniform"))


def _dominant_share(corpus, split) -> float:
    """The share of sentences whose first place-weather pairing is the place's dominant weather."""
    lead = [(pl, w) for s in split for (pl, w) in _pairs(s)[:1] if w in _PH_WEATHER]
    return float(np.mean([w == corpus.prior.weather[pl] for pl, w in lead]))


def test_skewed_places_have_a_dominant_weather_and_usual_numbers(skewed, uniform) -> None:
    assert 0.7 < _dominant_share(skewed, skewed.train) < 0.9  # dominance 0.8
    assert _dominant_share(uniform, uniform.train) < 0.2  # 1 in 10 weathers
    numbers = [(pl, n) for s in skewed.train for (pl, n) in _pairs(s) if n in _PH_NUMBER]
    assert np.mean([n in skewed.prior.numbers[pl] for pl, n in numbers]) > 0.7
    assert Counter(skewed.prior.weather.values()).most_common(1)[0][1] <= 2  # a permutation over places


def test_counter_prior_test_sentences_pair_every_place_against_the_prior(skewed) -> None:
    counter = [s for s in skewed.test if s.counter_prior]
    assert 0.22 < len(counter) / len(skewed.test) < 0.38  # counter_prior 0.3
    assert not any(s.counter_prior for s in skewed.train)
    for s in counter:
        pairs = _pairs(s)
        assert pairs, s.glosses
        assert not any(skewed.prior.usual(pl, x) for pl, x in pairs), (s.glosses, pairs)
    usual = [s for s in skewed.test if not s.counter_prior]
    assert np.mean([skewed.prior.usual(*p) for s in usual for p in _pairs(s)[:1]]) > 0.6


def test_prior_corpora_write_the_place_first_and_keep_the_vocabulary(skewed, uniform) -> None:
    default = make_corpus("phoenix_like", seed=3, n_train=50, n_dev=0, n_test=0)
    assert (skewed.words, skewed.glosses, skewed.entity_words) == (
        default.words, default.glosses, default.entity_words
    )  # fmt: skip
    for s in [*skewed.train[:200], *uniform.train[:200]]:
        g, text = s.glosses, " ".join(s.text)
        if g[0] in _PH_PLACE or g[0] == "WIND":  # no time phrase: the place phrase comes first
            assert text.startswith(_PH_PLACE[g[0] if g[0] in _PH_PLACE else g[2]]), (g, text)
    s = next(x for x in skewed.train if x.glosses[:1] in (("NORTH",),) and "TEMPERATURE" not in x.glosses)
    assert s.text[:3] == ("in", "the", "north")
    assert default.prior is None and not any(x.counter_prior for x in default.test)


def test_harder_signers_and_prior_config_errors() -> None:
    hard = make_signers(0, "phoenix_like", 9, (0.02, 0.03))
    assert all(0.02 <= s.noise <= 0.03 for s in hard)
    assert [s.scale for s in hard] == [s.scale for s in make_signers(0, "phoenix_like", 9)]
    with pytest.raises(UserError, match="phoenix_like only"):
        make_corpus("csl_like", n_train=2, n_dev=0, n_test=0, config=CorpusConfig(entity_prior="skewed"))
    for bad in (
        {"entity_prior": "zipf"}, {"dominance": 1.0}, {"counter_prior": 1.5}, {"signer_noise": (0.2, 0.1)}
    ):  # fmt: skip
        with pytest.raises(UserError):
            CorpusConfig(**bad)
    with pytest.raises(ConfigError, match="experiment"):
        SLTConfig(experiment="ablation")
    with pytest.raises(ConfigError, match="priors"):
        SLTConfig(priors=("zipf",))


def test_rise_share_is_the_paired_share_of_rising_scores() -> None:
    clean = np.array([0.1, 0.2, 0.3, 0.4])
    assert rise_share(clean, clean) == 0.5  # no movement
    assert rise_share(clean, clean + 1) == 1.0
    assert rise_share(clean, np.array([0.2, 0.1, 0.3, 0.5])) == pytest.approx((1 + 0 + 0.5 + 1) / 4)


def test_oriented_crossfit_learns_the_sign_on_the_other_folds() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    x = -(y + rng.normal(0, 0.5, 200))  # short = hallucinated
    s = oriented_crossfit(y, x, 5, 0)
    assert np.array_equal(np.abs(s), np.abs(x))
    assert (np.sign(s) == -np.sign(x)).all()  # every fold learned the flip
    flipped = y.copy()
    flipped[0] = 1 - flipped[0]  # a sentence's own label cannot move its score
    assert oriented_crossfit(flipped, x, 5, 0)[0] == s[0]


def test_the_study_pairs_each_prior_over_its_six_translators() -> None:
    cfg = SLTConfig(experiment="counter_prior", datasets=("phoenix_like",))
    s = study(cfg)
    assert len(s.units) == 12 and s.unit_major
    assert {a.name: a.label for a in s.arms if a.role == "floor"} == {
        "length": "floor (hypothesis length)", "chance": "floor (random score)"
    }  # fmt: skip
    assert [a.name for a in s.arms] == list(ARMS)
    first = s.claims[0]
    assert (first.metric, first.method, first.baselines, first.floor_arm) == (
        "auc_counter_skewed", "grounding", ("confidence",), "length"
    )  # fmt: skip
    metrics = {f"{k}_{p}" for k in ("auc_counter", "auc", "fall") for p in ("uniform", "skewed")}
    assert {c.metric for c in s.claims} == metrics


def test_counter_prior_runs_end_to_end_and_resumes(tmp_path) -> None:
    sets = {
        "experiment": "counter_prior", "datasets": "phoenix_like", "architectures": "gloss_based",
        "seeds": "0", "n_train": "200", "n_dev": "10", "n_test": "80", "folds": "2", "train.epochs": "6",
        "train.batch_size": "16", "train.warmup": "10", "train.lr": "3e-3",
    }  # fmt: skip
    out = tmp_path / "run"
    record, _ = run_system(SYSTEM, "smoke", overrides=sets, out=out)
    assert record.status == "complete"
    cells = [json.loads(c) for c in (out / CELLS_FILE).read_text().splitlines()]
    assert len(cells) == 2 * len(ARMS)  # two priors, one translator, one seed each
    for c in cells:
        prior = c["unit"].split("/")[0]
        other = "skewed" if prior == "uniform" else "uniform"
        assert c["metrics"][f"auc_{other}"] is None
        assert 0.0 <= c["metrics"][f"fall_{prior}"] <= 1.0
    titles = [t.title for t in record.report.tables]
    assert any(t.startswith("Counter-prior experiment: translators") for t in titles)
    assert record.report.claim_check.verdict == "not tested"  # one translator per prior: fewer than 3 pairs
    again, _ = run_system(SYSTEM, "smoke", overrides=sets, out=out)  # every cell from the ledger
    assert [json.loads(c) for c in (out / CELLS_FILE).read_text().splitlines()] == cells
    assert again.report.tables[-2].rows == record.report.tables[-2].rows
