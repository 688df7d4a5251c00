"""The `laplacianformer` system's config: which (task, attention) pairs to train, the shared ViT
and LaplacianAttention settings, the optimiser (`TrainConfig`, nested) and the scaling sweep."""

from __future__ import annotations

from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.laplacianformer.attention import NORMALIZATIONS
from iclr26.laplacianformer.baselines import check_odd_kernel
from iclr26.laplacianformer.data import TASKS
from iclr26.laplacianformer.train import TrainConfig
from iclr26.laplacianformer.vit import ATTENTION_KINDS


@dataclass(frozen=True)
class LaplacianFormerConfig:
    """Everything the run uses; the defaults are the `bench` preset (the README figures)."""

    seed: int = 0
    """first seed; runs use seed, seed+1, ..."""
    seeds: int = 3
    """independent seeds per (task, attention)"""
    tasks: tuple[str, ...] = ("digits", "lfw")
    """image tasks to train on (digits, lfw, textures)"""
    attentions: tuple[str, ...] = ATTENTION_KINDS
    """attention types to compare (laplacian, softmax, nystrom, performer, soft)"""
    dim: int = 64
    """ViT width"""
    depth: int = 2
    """ViT blocks"""
    heads: int = 4
    """attention heads (of the ViT and of the scaling layer)"""
    landmarks: int = 16
    """m, the landmarks of every landmark-based attention"""
    lam: float = 4.0
    """λ of the Laplacian kernel exp(−‖q−k‖₁/λ)"""
    ns_iters: int = 20
    """Newton–Schulz iterations for the landmark-matrix inverse"""
    normalization: str = "injective"
    """LaplacianAttention's feature map: injective | row | none"""
    local_conv: int = 3
    """kernel size of LaplacianAttention's depthwise conv on V (odd; 0: off)"""
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(epochs=20, batch_size=64, lr=5e-3, weight_decay=0.05)
    )
    """optimisation, the same for every attention type"""
    scaling_lengths: tuple[int, ...] = (256, 512, 1024, 2048, 4096)
    """sequence lengths of the one-layer time/memory sweep (empty: skip it)"""
    scaling_dim: int = 64
    """width of the attention layer in the scaling sweep"""
    scaling_repeats: int = 3
    """timed repeats per (attention, length) after one warm-up"""
    device: str = "cpu"
    """torch device (cpu, cuda, cuda:1, ...)"""
    threads: int = 2
    """torch CPU threads"""

    def __post_init__(self) -> None:
        bad = [t for t in self.tasks if t not in TASKS]
        if bad or not self.tasks:
            raise ConfigError(f"tasks: unknown {bad}; choose from {TASKS}")
        bad = [a for a in self.attentions if a not in ATTENTION_KINDS]
        if bad or not self.attentions:
            raise ConfigError(f"attentions: unknown {bad}; choose from {ATTENTION_KINDS}")
        check_in("normalization", self.normalization, NORMALIZATIONS)
        check_int("seeds", self.seeds, 1)
        check_int("threads", self.threads, 1)
        for name in ("dim", "depth", "heads", "landmarks", "ns_iters", "scaling_dim", "scaling_repeats"):
            check_int(name, getattr(self, name), 1)
        check_interval("lam", self.lam, 0, closed=(False, True))
        check_odd_kernel("local_conv", self.local_conv)
        if self.dim % self.heads or self.scaling_dim % self.heads:
            raise ConfigError(
                f"dim ({self.dim}) and scaling_dim ({self.scaling_dim}) must divide by heads ({self.heads})"
            )
        if self.scaling_lengths and min(self.scaling_lengths) < self.landmarks:
            raise ConfigError(
                f"scaling_lengths must be >= landmarks ({self.landmarks}), got {self.scaling_lengths}"
            )
