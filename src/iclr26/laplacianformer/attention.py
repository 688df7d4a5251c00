"""LaplacianAttention: Laplacian-kernel linear attention with Nyström landmarks and a
Newton–Schulz inverse (LaplacianFormer, arXiv 2604.20368).

For queries Q, keys K, values V (per head, N tokens) and m landmarks Q̃, K̃ (average-pooled Q, K):

    κ(a, b)  = exp(−‖a − b‖₁ / λ)                                   # Laplacian kernel
    C_q      = κ(Q, K̃)            (N × m)
    W        = κ(Q̃, K̃)            (m × m)
    C_k      = κ(Q̃, K)            (m × N)
    Y        = φ(C_q) · NS⁻¹(W + εI) · (C_k V) / N  + DWConv(V)       # Nyström + local term
    out      = Y W_o

φ is the paper's injective feature map. The paper's text was not available to us (see README):
we implement it as a per-landmark standardisation of C_q over the tokens, an invertible affine
map of each column (so distinct query rows stay distinct: injective), following the public
reproduction's reading of the paper's Eqs. 4–6; `normalization="row"` divides by the
Nyström row sums instead (softmax-like) and `"none"` leaves C_q as is.

With m = N (no pooling) the Nyström product is exact: φ(κ(Q, K)) V / N, which
`exact_laplacian_attention` computes directly (tests check the two agree).
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.laplacianformer.baselines import check_dims, check_input, check_odd_kernel, landmark_pool
from iclr26.laplacianformer.laplace_kernel import laplace_kernel
from iclr26.laplacianformer.newton_schulz import newton_schulz_inverse

Normalization = Literal["injective", "row", "none"]
NORMALIZATIONS = ("injective", "row", "none")


def injective_feature_map(c: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Standardise each column of c (..., N, m) over the N tokens: (c − μ_col) / σ_col.

    An invertible affine map per column, so φ is injective on the rows of c.
    """
    mu = c.mean(dim=-2, keepdim=True)
    var = c.var(dim=-2, keepdim=True, unbiased=False)
    return (c - mu) * torch.rsqrt(var + eps)


def exact_laplacian_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    lam: float | torch.Tensor = 4.0,
    normalization: Normalization = "injective",
) -> torch.Tensor:
    """The O(N²) Laplacian-kernel attention that the Nyström form approximates; (..., N, d)."""
    check_in("normalization", normalization, NORMALIZATIONS)
    c = laplace_kernel(q, k, lam)
    n = k.shape[-2]
    if normalization == "injective":
        return injective_feature_map(c) @ v / n
    if normalization == "row":
        return (c @ v) / c.sum(-1, keepdim=True)
    return c @ v / n


def nystrom_laplacian_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    landmarks: int,
    lam: float | torch.Tensor = 4.0,
    *,
    ns_iters: int = 20,
    ns_tol: float | None = None,
    reg: float = 1e-4,
    normalization: Normalization = "injective",
) -> torch.Tensor:
    """Nyström Laplacian attention for q, k, v (..., N, d) with `landmarks` pooled landmarks."""
    check_int("landmarks", landmarks, 1)
    check_in("normalization", normalization, NORMALIZATIONS)
    n = k.shape[-2]
    q_l = landmark_pool(q, landmarks)  # Q̃ (…, m, d)
    k_l = landmark_pool(k, landmarks)  # K̃
    c_q = laplace_kernel(q, k_l, lam)  # κ(Q, K̃)   N × m
    w = laplace_kernel(q_l, k_l, lam)  # κ(Q̃, K̃)   m × m
    c_k = laplace_kernel(q_l, k, lam)  # κ(Q̃, K)   m × N
    eye = torch.eye(landmarks, device=w.device, dtype=w.dtype)
    # NS⁻¹(W + εI), in at least fp32 whatever the activations' dtype (bf16 cannot invert)
    w32 = (w + reg * eye).to(torch.promote_types(w.dtype, torch.float32))
    w_inv = newton_schulz_inverse(w32, ns_iters, tol=ns_tol).to(w.dtype)
    if normalization == "row":
        num = c_q @ (w_inv @ (c_k @ v))
        den = c_q @ (w_inv @ c_k.sum(-1, keepdim=True))
        den = torch.where(den.abs() < 1e-6, torch.full_like(den, 1e-6), den)  # keep the sign
        return num / den
    feat = injective_feature_map(c_q) if normalization == "injective" else c_q
    return feat @ (w_inv @ (c_k @ v)) / n  # Y = φ(C_q) W⁻¹ (C_k V) / N


class LaplacianAttention(nn.Module):
    """Drop-in attention: x (B, N, dim) → (B, N, dim), Laplacian kernel + Nyström + Newton–Schulz.

    Parameters
    ----------
    dim, heads : model width and number of heads (dim divisible by heads).
    landmarks : m, the number of pooled landmarks (≤ N; N need not be divisible by m).
    lam : λ, the kernel scale in exp(−‖q − k‖₁/λ); 4 as in the public code.
    ns_iters : Newton–Schulz iterations for the m × m inverse.
    ns_tol : if set, warn when the inverse's residual stays above it.
    normalization : "injective" (the feature map above), "row" or "none".
    local_conv : kernel size of the depthwise conv on V (0 disables it); applied on the
        (H, W) grid when `hw` is passed to forward, else along the token axis.
    exact : compute the O(N²) kernel attention instead of the Nyström form.
    """

    def __init__(
        self,
        dim: int,
        heads: int = 8,
        landmarks: int = 16,
        lam: float = 4.0,
        ns_iters: int = 20,
        ns_tol: float | None = None,
        normalization: Normalization = "injective",
        local_conv: int = 3,
        qkv_bias: bool = True,
        exact: bool = False,
    ) -> None:
        super().__init__()
        self.head_dim = check_dims(dim, heads)
        check_int("landmarks", landmarks, 1)
        check_interval("lam (λ)", lam, 0, closed=(False, True))
        check_int("ns_iters", ns_iters, 1)
        check_interval("ns_tol", ns_tol, 0, closed=(False, True), optional=True)
        check_in("normalization", normalization, NORMALIZATIONS)
        check_odd_kernel("local_conv", local_conv)
        self.dim, self.heads, self.landmarks = dim, heads, landmarks
        self.lam, self.ns_iters, self.ns_tol = lam, ns_iters, ns_tol
        self.normalization, self.exact, self.local_conv = normalization, exact, local_conv
        self.to_qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.to_out = nn.Linear(dim, dim)
        self.conv = (
            nn.Conv2d(dim, dim, local_conv, padding=local_conv // 2, groups=dim) if local_conv else None
        )

    def _local(self, v: torch.Tensor, hw: tuple[int, int] | None) -> torch.Tensor:
        """Depthwise conv on V; v (B, H, N, d) → (B, N, dim)."""
        v = rearrange(v, "b h n d -> b (h d) n")
        if hw is not None:
            h, w = hw
            if h * w != v.shape[-1]:
                raise ValueError(f"hw={hw} does not match {v.shape[-1]} tokens")
            out = self.conv(v.reshape(*v.shape[:2], h, w)).flatten(2)
        else:  # along the token axis: the 2-D kernel's centre column
            k = self.conv.weight[:, :, :, self.local_conv // 2]
            out = F.conv1d(v, k, self.conv.bias, padding=self.local_conv // 2, groups=self.dim)
        return rearrange(out, "b c n -> b n c")

    def forward(self, x: torch.Tensor, hw: tuple[int, int] | None = None) -> torch.Tensor:
        check_input(x, self.dim)
        n = x.shape[1]
        if not self.exact and self.landmarks > n:
            raise ValueError(
                f"landmarks ({self.landmarks}) must not exceed the number of tokens ({n}); "
                "lower `landmarks` or use exact=True"
            )
        q, k, v = rearrange(self.to_qkv(x), "b n (three h d) -> three b h n d", three=3, h=self.heads)
        if self.exact:
            y = exact_laplacian_attention(q, k, v, self.lam, self.normalization)
        else:
            y = nystrom_laplacian_attention(
                q,
                k,
                v,
                self.landmarks,
                self.lam,
                ns_iters=self.ns_iters,
                ns_tol=self.ns_tol,
                normalization=self.normalization,
            )
        y = rearrange(y, "b h n d -> b n (h d)")
        if self.conv is not None:
            y = y + self._local(v, hw)
        return self.to_out(y)
