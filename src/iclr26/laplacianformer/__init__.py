"""LaplacianFormer: Laplacian-kernel linear attention (arXiv 2604.20368, ICLR 2026).

Public API:
- `LaplacianAttention(dim, heads, landmarks, lam, ...)`: drop-in attention module;
- `laplace_kernel(q, k, lam)`: exp(−‖q − k‖₁/λ), Triton on CUDA, PyTorch elsewhere;
- `newton_schulz_inverse(a, iters)`: the landmark-matrix inverse with analytic backward;
- baselines `SoftmaxAttention`, `NystromAttention`, `PerformerAttention`, `GaussianSoftAttention`;
- `VisionTransformer(..., attention=kind)` and `SYSTEM` for `iclr26 run laplacianformer`.
"""

from iclr26.core.system import system_attributes
from iclr26.laplacianformer.attention import (
    LaplacianAttention,
    exact_laplacian_attention,
    injective_feature_map,
    nystrom_laplacian_attention,
)
from iclr26.laplacianformer.baselines import (
    GaussianSoftAttention,
    NystromAttention,
    PerformerAttention,
    SoftmaxAttention,
)
from iclr26.laplacianformer.config import LaplacianFormerConfig
from iclr26.laplacianformer.laplace_kernel import laplace_kernel
from iclr26.laplacianformer.newton_schulz import newton_schulz_inverse
from iclr26.laplacianformer.train import TrainConfig
from iclr26.laplacianformer.vit import ATTENTION_KINDS, VisionTransformer, make_attention

__all__ = [
    "ATTENTION_KINDS",
    "SYSTEM",
    "GaussianSoftAttention",
    "LaplacianAttention",
    "LaplacianFormerConfig",
    "NystromAttention",
    "PerformerAttention",
    "SoftmaxAttention",
    "TrainConfig",
    "VisionTransformer",
    "exact_laplacian_attention",
    "injective_feature_map",
    "laplace_kernel",
    "make_attention",
    "newton_schulz_inverse",
    "nystrom_laplacian_attention",
]

__getattr__ = system_attributes(__name__)  # SYSTEM and PRESETS, loaded from .system on first use
