"""The `vincie` system's config: the methods compared, the benchmark's size, and the nested model,
proxy-task, training and sampler configs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.core.config import ConfigError, run_llm_renames
from iclr26.core.validation import check_in, check_int
from iclr26.vincie.editing import SamplerConfig
from iclr26.vincie.model import ModelConfig
from iclr26.vincie.sequence import ProxyConfig
from iclr26.vincie.train import TrainConfig

# the learned methods: each is the session model trained with a change to the proxy config
LEARNED = {
    "vincie": {},
    "pairwise": {"context": False, "current_mask": False, "next_mask": False, "mask_rate": 0.0},
    "no_current_mask": {"current_mask": False},
    "no_next_mask": {"next_mask": False},
    "no_masks": {"current_mask": False, "next_mask": False, "mask_rate": 0.0},
}
METHODS = (*LEARNED, "vincie_image_only", "copy")
JUDGES = ("scene", "llm")
BACKENDS = ("serial", "ray")


@dataclass(frozen=True)
class VincieConfig:
    """Everything the run uses; the defaults are the `bench` preset (the README figures)."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm_backend")

    seed: int = 0
    """seed of the models, the training videos and the benchmark sessions"""
    methods: tuple[str, ...] = (
        "vincie", "pairwise", "no_current_mask", "no_next_mask", "vincie_image_only", "copy",
    )  # fmt: skip
    """methods compared: vincie, pairwise (single-turn editor on pairs), no_current_mask,
    no_next_mask, no_masks (proxy tasks removed), vincie_image_only (the vincie model sampling the
    image alone), copy (copy the previous image)"""
    bench_sessions: int = 32
    """held-out benchmark sessions (MSE-Bench: 100)"""
    turns: int = 5
    """edits per benchmark session (MSE-Bench: 5)"""
    train_folder: str = ""
    """train on sessions from this folder's annotation.json (iclr26.vincie.video.load_sessions)
    instead of videos made here"""
    judge: str = "scene"
    """scene (deterministic, knows the target scene) or llm (the run's model, `--llm`: it must see
    images, so a vision server with --llm http)"""
    paraphrase: bool = False
    """reword the benchmark's template instructions through the run's model (`--llm`)"""
    model: ModelConfig = field(default_factory=lambda: ModelConfig(width=72, heads=2))
    """the session transformer (every learned method uses the same size)"""
    proxy: ProxyConfig = field(default_factory=ProxyConfig)
    """proxy tasks and dropout rates of the vincie method (the others change it, see LEARNED)"""
    train: TrainConfig = field(default_factory=TrainConfig)
    """data size and optimisation, the same for every learned method"""
    sampler: SamplerConfig = field(default_factory=lambda: SamplerConfig(steps=16))
    """the Euler sampler and the inference order"""
    train_backend: str = "ray"
    """serial, or ray: the learned methods train side by side, one CPU each (not under torchrun)"""
    device: str = "cpu"
    """torch device (cpu, cuda; under torchrun each rank takes its local GPU)"""
    threads: int = 2
    """torch CPU threads"""

    def __post_init__(self) -> None:
        if not self.methods:
            raise ConfigError("methods: name at least one method")
        for m in self.methods:
            check_in("methods", m, METHODS)
        if "vincie_image_only" in self.methods and "vincie" not in self.methods:
            raise ConfigError("methods: vincie_image_only samples the vincie model; add vincie")
        check_int("seed", self.seed, 0)
        check_int("bench_sessions", self.bench_sessions, 1)
        check_int("turns", self.turns, 1)
        if self.turns > self.model.max_turns:
            raise ConfigError(f"turns={self.turns} exceeds model.max_turns={self.model.max_turns}")
        check_in("judge", self.judge, JUDGES)
        check_in("train_backend", self.train_backend, BACKENDS)
        check_int("threads", self.threads, 1)
