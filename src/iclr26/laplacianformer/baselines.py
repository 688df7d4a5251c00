"""Baseline attention modules with the same interface as `LaplacianAttention`.

All take x (B, N, dim) (and an optional `hw` grid, which they ignore) and return (B, N, dim),
with one fused qkv projection and one output projection, so a model's parameter count barely
depends on the attention type:

- `SoftmaxAttention`: exact softmax attention (`F.scaled_dot_product_attention`).
- `NystromAttention`: Nyströmformer (Xiong et al., 2021): segment-mean landmarks, softmax kernels,
  iterative Moore–Penrose pseudo-inverse, depthwise-conv skip on V.
- `PerformerAttention`: FAVOR+ (Choromanski et al., 2021) with positive orthogonal random features.
- `GaussianSoftAttention`: SOFT (Lu et al., 2021): Gaussian kernel exp(−‖q−k‖²/(2√d)) with Q = K,
  landmarks pooled from Q, Newton–Schulz inverse of the landmark kernel matrix.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_finite_tensor, check_int, debug_checks
from iclr26.laplacianformer.newton_schulz import newton_schulz_inverse


def check_dims(dim: int, heads: int) -> int:
    """Head size dim // heads; raises if `dim` is not divisible by `heads`."""
    if dim <= 0 or heads <= 0 or dim % heads:
        raise ConfigError(f"dim ({dim}) must be a positive multiple of heads ({heads})")
    return dim // heads


def check_odd_kernel(name: str, value: object) -> int:
    """`value` as a depthwise-conv kernel size: 0 (no conv) or odd, so that padding k // 2 on both
    sides keeps the token count (an even kernel would add one token)."""
    k = check_int(name, value, 0)
    if k and k % 2 == 0:
        raise ConfigError(f"{name} must be 0 or an odd kernel size (a same-size conv), got {value!r}")
    return k


def check_input(x: torch.Tensor, dim: int) -> None:
    """x must be (B, N, dim); under `debug_checks()` also finite (a full pass over x, so off by default)."""
    if x.ndim != 3 or x.shape[-1] != dim:
        raise ValueError(f"attention expects x of shape (batch, tokens, {dim}), got {tuple(x.shape)}")
    if debug_checks():
        try:
            check_finite_tensor("x", x)
        except ConfigError as e:
            raise ConfigError(f"attention input has non-finite values: {e}") from None


def landmark_pool(x: torch.Tensor, landmarks: int) -> torch.Tensor:
    """Segment means of x (..., N, d) into `landmarks` rows; N need not be divisible.

    Token t goes to segment ⌊t·m/N⌋, so the m contiguous segments differ in size by at most one
    and none is empty whenever m ≤ N (a ⌈N/m⌉ split would leave all-padding segments, e.g. N=50,
    m=16, and with them zero landmarks).
    """
    n = x.shape[-2]
    if landmarks > n:
        raise ValueError(f"landmarks ({landmarks}) must not exceed the number of tokens ({n})")
    if n % landmarks == 0:
        return x.reshape(*x.shape[:-2], landmarks, n // landmarks, x.shape[-1]).mean(-2)
    segment = torch.arange(n, device=x.device) * landmarks // n
    onehot = (segment[None, :] == torch.arange(landmarks, device=x.device)[:, None]).to(x.dtype)
    return (onehot / onehot.sum(-1, keepdim=True)) @ x  # (m, N) averaging matrix


class _QKVAttention(nn.Module):
    """Shared projections: x → q, k, v (B, H, N, d); output (B, H, N, d) → x."""

    def __init__(self, dim: int, heads: int, qkv_bias: bool = True) -> None:
        super().__init__()
        self.dim, self.heads = dim, heads
        self.head_dim = check_dims(dim, heads)
        self.to_qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.to_out = nn.Linear(dim, dim)

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        check_input(x, self.dim)
        qkv = rearrange(self.to_qkv(x), "b n (three h d) -> three b h n d", three=3, h=self.heads)
        return qkv[0], qkv[1], qkv[2]

    def merge(self, out: torch.Tensor) -> torch.Tensor:
        return self.to_out(rearrange(out, "b h n d -> b n (h d)"))


class SoftmaxAttention(_QKVAttention):
    """Exact softmax attention softmax(QKᵀ/√d)V through SDPA."""

    def forward(self, x: torch.Tensor, hw: tuple[int, int] | None = None) -> torch.Tensor:
        q, k, v = self.split(x)
        return self.merge(F.scaled_dot_product_attention(q, k, v))


def iterative_pinv(a: torch.Tensor, iters: int = 6) -> torch.Tensor:
    """Nyströmformer's pseudo-inverse iteration (Razavi et al., 2014), for row-stochastic a."""
    eye = torch.eye(a.shape[-1], device=a.device, dtype=a.dtype)
    col = a.abs().sum(-2).amax(-1)
    row = a.abs().sum(-1).amax(-1)
    z = a.transpose(-1, -2) / (col * row)[..., None, None]
    for _ in range(iters):
        az = a @ z
        # Z ← ¼ Z (13I − AZ (15I − AZ (7I − AZ)))
        z = 0.25 * z @ (13 * eye - az @ (15 * eye - az @ (7 * eye - az)))
    return z


class NystromAttention(_QKVAttention):
    """Nyströmformer: softmax(Q K̃ᵀ) · pinv(softmax(Q̃ K̃ᵀ)) · softmax(Q̃ Kᵀ) V + conv(V)."""

    def __init__(
        self, dim: int, heads: int, landmarks: int = 16, pinv_iters: int = 6, conv_kernel: int = 33
    ) -> None:
        super().__init__(dim, heads)
        check_int("landmarks", landmarks, 1)
        check_int("pinv_iters", pinv_iters, 1)
        check_odd_kernel("conv_kernel", conv_kernel)
        self.landmarks, self.pinv_iters = landmarks, pinv_iters
        self.conv = (
            nn.Conv2d(
                heads,
                heads,
                (conv_kernel, 1),
                padding=(conv_kernel // 2, 0),
                groups=heads,
                bias=False,
            )
            if conv_kernel
            else None
        )

    def forward(self, x: torch.Tensor, hw: tuple[int, int] | None = None) -> torch.Tensor:
        q, k, v = self.split(x)
        q = q * self.head_dim**-0.5
        q_l, k_l = landmark_pool(q, self.landmarks), landmark_pool(k, self.landmarks)
        f = torch.softmax(q @ k_l.transpose(-1, -2), dim=-1)
        a = torch.softmax(q_l @ k_l.transpose(-1, -2), dim=-1)
        b = torch.softmax(q_l @ k.transpose(-1, -2), dim=-1)
        out = f @ (iterative_pinv(a, self.pinv_iters) @ (b @ v))
        if self.conv is not None:
            out = out + self.conv(v)
        return self.merge(out)


def orthogonal_gaussian(rows: int, cols: int, generator: torch.Generator) -> torch.Tensor:
    """Blocks of orthogonal rows with chi-distributed norms (FAVOR+'s orthogonal random features)."""
    blocks = []
    for _ in range(math.ceil(rows / cols)):
        g = torch.randn(cols, cols, generator=generator)
        qmat, _ = torch.linalg.qr(g)
        blocks.append(qmat.T)
    w = torch.cat(blocks)[:rows]
    norms = torch.randn(rows, cols, generator=generator).norm(dim=1)
    return w * norms[:, None]


class PerformerAttention(_QKVAttention):
    """FAVOR+: φ(x) = exp(ωᵀx − ‖x‖²/2)/√r with x scaled by d^-¼; out = φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1)."""

    def __init__(self, dim: int, heads: int, features: int = 64, seed: int = 0) -> None:
        super().__init__(dim, heads)
        check_int("features", features, 1)
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("omega", orthogonal_gaussian(features, self.head_dim, g))

    def feature_map(self, x: torch.Tensor, is_query: bool) -> torch.Tensor:
        x = x * self.head_dim**-0.25
        proj = x @ self.omega.T
        sq = (x**2).sum(-1, keepdim=True) / 2
        # subtract a max for stability (per row for queries, global for keys: cancels in the ratio)
        stab = proj.amax(-1, keepdim=True) if is_query else proj.amax(dim=(-1, -2), keepdim=True)
        return torch.exp(proj - sq - stab.detach()) / math.sqrt(self.omega.shape[0]) + 1e-6

    def forward(self, x: torch.Tensor, hw: tuple[int, int] | None = None) -> torch.Tensor:
        q, k, v = self.split(x)
        qp, kp = self.feature_map(q, True), self.feature_map(k, False)
        kv = kp.transpose(-1, -2) @ v
        denom = qp @ kp.sum(-2, keepdim=True).transpose(-1, -2)
        return self.merge((qp @ kv) / denom)


class GaussianSoftAttention(_QKVAttention):
    """SOFT: Q = K, K(a, b) = exp(−‖a − b‖²/(2√d)); out = K(Q,Q̃)·NS⁻¹(K(Q̃,Q̃))·K(Q̃,Q)·V."""

    def __init__(self, dim: int, heads: int, landmarks: int = 16, ns_iters: int = 20) -> None:
        super().__init__(dim, heads)
        check_int("landmarks", landmarks, 1)
        check_int("ns_iters", ns_iters, 1)
        self.landmarks, self.ns_iters = landmarks, ns_iters

    def kernel(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.exp(-torch.cdist(a, b).pow(2) / (2 * math.sqrt(self.head_dim)))

    def forward(self, x: torch.Tensor, hw: tuple[int, int] | None = None) -> torch.Tensor:
        q, _, v = self.split(x)  # SOFT ties keys to queries
        q_l = landmark_pool(q, self.landmarks)
        a = self.kernel(q_l, q_l)
        a_inv = newton_schulz_inverse(a, self.ns_iters, tol=None)
        out = self.kernel(q, q_l) @ (a_inv @ (self.kernel(q_l, q) @ v))
        return self.merge(out)
