"""LaplacianFormer: Laplacian-kernel linear attention (arXiv 2604.20368, ICLR 2026).

Public API:
- `LaplacianAttention(dim, heads, landmarks, lam, ...)`: drop-in attention module;
- `laplace_kernel(q, k, lam)`: exp(−‖q − k‖₁/λ), Triton on CUDA, PyTorch elsewhere;
- `newton_schulz_inverse(a, iters)`: the landmark-matrix inverse with analytic backward;
- baselines `SoftmaxAttention`, `NystromAttention`, `PerformerAttention`, `GaussianSoftAttention`;
- `VisionTransformer(..., attention=kind)` and `SYSTEM` for `iclr26 run laplacianformer`.
"""

from dataclasses import replace

from iclr26.catalog import implemented_system
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
from iclr26.laplacianformer.laplace_kernel import laplace_kernel
from iclr26.laplacianformer.newton_schulz import newton_schulz_inverse
from iclr26.laplacianformer.system import LaplacianFormerConfig, run
from iclr26.laplacianformer.vit import ATTENTION_KINDS, VisionTransformer, make_attention

_BENCH = LaplacianFormerConfig()
PRESETS = {
    "smoke": replace(
        _BENCH,
        seeds=1,
        tasks=("lfw",),
        attentions=("laplacian", "softmax", "nystrom"),
        dim=32,
        epochs=2,
        scaling_lengths=(64, 128),
        scaling_dim=32,
        scaling_repeats=1,
    ),
    # the tour: Laplacian attention vs softmax and two linear baselines on digits, 1 seed, shorter
    "demo": replace(
        _BENCH,
        seeds=1,
        tasks=("digits",),
        attentions=("laplacian", "softmax", "nystrom", "soft"),
        scaling_lengths=(256, 1024, 4096),
        scaling_repeats=1,
    ),
    "bench": _BENCH,  # the README figures
    # DeiT-Tiny-like width on all three tasks, long sequences for scaling; meant for a GPU.
    "paper": replace(
        _BENCH,
        tasks=("digits", "lfw", "textures"),
        dim=192,
        depth=6,
        heads=3,
        landmarks=49,
        epochs=100,
        lr=1e-3,
        scaling_lengths=(1024, 2048, 4096, 8192, 16384, 32768, 65536),
        scaling_dim=192,
        device="cuda",
    ),
}

SYSTEM = implemented_system("laplacianformer", presets=PRESETS, run=run)

__all__ = [
    "ATTENTION_KINDS",
    "SYSTEM",
    "GaussianSoftAttention",
    "LaplacianAttention",
    "LaplacianFormerConfig",
    "NystromAttention",
    "PerformerAttention",
    "SoftmaxAttention",
    "VisionTransformer",
    "exact_laplacian_attention",
    "injective_feature_map",
    "laplace_kernel",
    "make_attention",
    "newton_schulz_inverse",
    "nystrom_laplacian_attention",
]
