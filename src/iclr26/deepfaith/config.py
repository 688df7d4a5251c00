"""The `deepfaith` system's config: tasks and prior methods, the supervisory signal (dedup and
filter), and the nested configs of the prior methods, the explainer and its training."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.deepfaith.explainer import ExplainerConfig
from iclr26.deepfaith.priors import PRIOR_METHODS, PriorConfig
from iclr26.deepfaith.tasks import TASKS
from iclr26.deepfaith.train import ExplainerTrainConfig


@dataclass(frozen=True)
class DeepFaithConfig:
    """Everything the run uses; the defaults are the `bench` preset (the README figures)."""

    seed: int = 0
    """seed of the tasks' splits and target models, the priors, the explainer and the metrics"""
    tasks: tuple[str, ...] = TASKS
    """explanation tasks (breast_cancer, wine, digits, lfw, sentiment)"""
    methods: tuple[str, ...] = PRIOR_METHODS
    """prior methods (Grad-CAM only runs on image tasks)"""
    train_inputs: int = 192
    """inputs whose prior explanations supervise the explainer"""
    test_inputs: int = 100
    """held-out inputs every method is scored on"""
    priors: PriorConfig = field(default_factory=lambda: PriorConfig(ig_steps=32, kernel_samples=64))
    """sample budgets of the prior methods"""
    dedup_threshold: float = 0.9
    """τ: cosine similarity at which two maps are duplicates"""
    dedup_keep: str = "best"
    """which duplicate survives: the input's most faithful one (best), or the first listed (first)"""
    filter_quantile: float = 0.2
    """p: a map must pass the p-quantile of every metric"""
    filter_runs: int = 16
    """random subsets of FC / INF when filtering the priors"""
    metric_runs: int = 64
    """random subsets of FC / INF in the final evaluation"""
    explainer: ExplainerConfig = field(default_factory=ExplainerConfig)
    """shape of the amortized explainer (a transformer encoder over feature tokens)"""
    train: ExplainerTrainConfig = field(default_factory=lambda: ExplainerTrainConfig(epochs=80, epsilon=1e-4))
    """the explainer's optimisation and objective (Algorithm 1)"""
    min_steps: int = 1200
    """small tasks get more epochs than train.epochs, so every task gets at least this many updates"""
    device: str = "cpu"
    """torch device (cpu, cuda, cuda:1, ...)"""
    threads: int = 2
    """torch CPU threads"""

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ConfigError(f"tasks: name at least one; choose from {TASKS}")
        for t in self.tasks:
            check_in("tasks", t, TASKS)
        if not self.methods:
            raise ConfigError(f"methods: name at least one; choose from {PRIOR_METHODS}")
        for m in self.methods:
            check_in("methods", m, PRIOR_METHODS)
        check_int("seed", self.seed)
        check_int("train_inputs", self.train_inputs, 2)
        check_int("test_inputs", self.test_inputs, 2)
        check_int("threads", self.threads, 1)
        check_int("filter_runs", self.filter_runs, 1)
        check_int("metric_runs", self.metric_runs, 1)
        check_int("min_steps", self.min_steps, 0)
        check_in("dedup_keep", self.dedup_keep, ("best", "first"))
        check_interval("dedup_threshold", self.dedup_threshold, 0, 1, closed=(False, True))
        check_interval("filter_quantile", self.filter_quantile, 0, 1, closed=(True, False))

    def train_config(self, pairs: int = 0) -> ExplainerTrainConfig:
        """The explainer's optimisation; with `pairs` training pairs, at least `min_steps` updates."""
        if not pairs:
            return self.train
        batches = max(1, math.ceil(pairs / self.train.batch_size))
        return replace(self.train, epochs=max(self.train.epochs, math.ceil(self.min_steps / batches)))
