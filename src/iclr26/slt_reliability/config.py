"""The `slt_reliability` run's config: which corpora and translators, how they are trained (nested
`TrainConfig`), how tokens are scored (nested `ReliabilityConfig`), and the analyses' settings
(degradation strengths, the wrong starting prompt, cross-dataset and cross-architecture transfer)."""

from __future__ import annotations

from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.slt_reliability.data import CorpusConfig
from iclr26.slt_reliability.reliability import ReliabilityConfig
from iclr26.slt_reliability.train import KINDS, TrainConfig

DATASETS: tuple[str, ...] = ("phoenix_like", "csl_like")
"""the synthetic corpora: in the roles of PHOENIX-2014T and CSL-Daily (other vocabularies and grammars)"""
FIT_ON: tuple[str, ...] = ("test_folds", "dev")
EXPERIMENTS: tuple[str, ...] = ("detection", "counter_prior")
PRIORS: tuple[str, ...] = ("uniform", "skewed")


@dataclass(frozen=True)
class SLTConfig:
    """Everything the run uses; the defaults are the README's bench."""

    datasets: tuple[str, ...] = DATASETS
    """synthetic corpora to build (phoenix_like, csl_like); ignored when data_root is set"""
    architectures: tuple[str, ...] = KINDS
    """translators to train on each corpus: gloss_based (TwoStream-SLT in spirit), gloss_free (SpaMo)"""
    n_train: int = 4000
    """training sentences per synthetic corpus"""
    n_dev: int = 400
    """dev sentences (seen signers): the reliability weights, META and the calibrations are fitted here"""
    n_test: int = 400
    """test sentences (held-out signers): every detection figure is measured here"""
    corpus: CorpusConfig = field(default_factory=CorpusConfig)
    """how the synthetic videos are rendered (signers, co-articulation, durations)"""
    data_root: str = ""
    """a local PHOENIX-style folder (annotation CSVs and 50-keypoint .npy files; see loader.py) used
    instead of the synthetic corpora; empty: synthetic"""
    entity_file: str = ""
    """entity words of the real data, one per line (CHAIR needs them); only with data_root"""
    train: TrainConfig = field(default_factory=TrainConfig)
    """translator training (shared by both architectures; the gloss-based one adds the CTC loss)"""
    reliability: ReliabilityConfig = field(default_factory=ReliabilityConfig)
    """token scoring: tail pooling, the attention-mass definition, how the weights are fitted"""
    meta_C: float = 1.0
    """inverse L2 strength of META's logistic regression"""
    fit_on: str = "test_folds"
    """where r_t, META and the calibrations are fitted: test_folds (stratified k-fold cross-fitting on
    the held-out-signer test split, every sentence scored out of fold) or dev (fit on dev, score test;
    a translator nearly perfect on its seen signers leaves too few hallucinated dev sentences)"""
    folds: int = 5
    """folds of the cross-fitting (fewer when the rarer label has fewer sentences)"""
    noise: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2)
    """Gaussian keypoint noise, in units of the signer's shoulder width (0: the clean video)"""
    downsample: tuple[int, ...] = (1, 2, 3, 4)
    """temporal downsampling factors (keep every k-th frame; 1: the clean video)"""
    drop: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6)
    """frame-drop rates (each frame dropped with this probability; 0: the clean video)"""
    prompt_words: int = 2
    """length of the wrong starting prompt: the decoder is forced to start with this many words of
    another test sentence's reference (0: skip the analysis)"""
    transfer: bool = True
    """fit the reliability weights on one dataset or architecture and test on every other"""
    figures: bool = True
    """draw the token, ROC and degradation figures"""
    seed: int = 0
    """seeds the corpora, the mismatched-video draw is reliability.seed, training is train.seed;
    this one also seeds the degradations and the bootstrap intervals"""
    experiment: str = "detection"
    """detection: the paper's tables on `datasets` × `architectures` (the README's bench). counter_prior:
    issue 61's experiment (`counter_prior.py`): phoenix_like with place-first translations, without and
    with an entity prior (`priors`), × `architectures` × `seeds`, 30% counter-prior test sentences
    (corpus.counter_prior); grounding against confidence on them, and under noise `stress_noise`"""
    priors: tuple[str, ...] = PRIORS
    """counter_prior only: the entity priors of its corpora (uniform, skewed)"""
    seeds: tuple[int, ...] = (0, 1, 2)
    """counter_prior only: each seed draws a corpus, its prior and a translator's initialisation"""
    stress_noise: float = 0.2
    """counter_prior only: keypoint noise (shoulder widths) of the degraded test videos"""

    def __post_init__(self) -> None:
        for d in self.datasets:
            check_in("datasets", d, DATASETS)
        for a in self.architectures:
            check_in("architectures", a, KINDS)
        if not self.architectures or (not self.datasets and not self.data_root):
            raise ConfigError("name at least one architecture and one dataset (or set data_root)")
        check_int("n_train", self.n_train, 1)
        check_int("n_dev", self.n_dev, 10)
        check_int("n_test", self.n_test, 10)
        check_int("prompt_words", self.prompt_words, 0, 10)
        check_in("fit_on", self.fit_on, FIT_ON)
        check_int("folds", self.folds, 2, 20)
        check_int("seed", self.seed, 0)
        check_interval("meta_C", self.meta_C, 0, closed=(False, True))
        for s in self.noise:
            check_interval("noise", s, 0)
        for k in self.downsample:
            check_int("downsample", k, 1, 16)
        for r in self.drop:
            check_interval("drop", r, 0, 1, closed=(True, False))
        check_in("experiment", self.experiment, EXPERIMENTS)
        for p in self.priors:
            check_in("priors", p, PRIORS)
        for sd in self.seeds:
            check_int("seeds", sd, 0)
        check_interval("stress_noise", self.stress_noise, 0, closed=(False, True))
        if self.experiment == "counter_prior" and (not self.priors or not self.seeds):
            raise ConfigError("experiment=counter_prior needs at least one prior and one seed")
        if self.entity_file and not self.data_root:
            raise ConfigError("entity_file is only read with data_root (the synthetic corpora mark entities)")
