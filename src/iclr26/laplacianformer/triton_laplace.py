"""Triton kernels for the Laplacian kernel matrix K_ij = exp(−‖q_i − k_j‖₁ / λ), forward and backward.

The L1 distance has no matrix-multiply form, so each program holds a (BLOCK_N × BLOCK_M × BLOCK_D)
tile of |q_i − k_j| in registers and reduces over the feature axis. The backward is two kernels
with no atomics: one program per block of rows of ∂L/∂q (looping over all keys) and one per
block of rows of ∂L/∂k (looping over all queries), so every sum is taken in one fixed order and
gradients are bitwise repeatable. Accumulation is in fp32 whatever the input dtype.

Reference: `laplace_kernel_reference` in `laplace_kernel.py`; CPU correctness with
`TRITON_INTERPRET=1` (fp32).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _laplace_fwd(
    q_ptr,
    k_ptr,
    out_ptr,
    inv_lam,
    n,
    m,
    d,
    stride_qb,
    stride_qn,
    stride_kb,
    stride_km,
    stride_ob,
    stride_on,
    BLOCK_N: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    b = tl.program_id(2)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dist = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for d0 in range(0, d, BLOCK_D):
        offs_d = d0 + tl.arange(0, BLOCK_D)
        q = tl.load(
            q_ptr + b * stride_qb + offs_n[:, None] * stride_qn + offs_d[None, :],
            mask=(offs_n[:, None] < n) & (offs_d[None, :] < d),
            other=0.0,
        ).to(tl.float32)
        k = tl.load(
            k_ptr + b * stride_kb + offs_m[:, None] * stride_km + offs_d[None, :],
            mask=(offs_m[:, None] < m) & (offs_d[None, :] < d),
            other=0.0,
        ).to(tl.float32)
        dist += tl.sum(tl.abs(q[:, None, :] - k[None, :, :]), axis=2)  # ‖q_i − k_j‖₁
    kmat = tl.exp(-dist * inv_lam)  # exp(−D/λ)
    tl.store(
        out_ptr + b * stride_ob + offs_n[:, None] * stride_on + offs_m[None, :],
        kmat.to(out_ptr.dtype.element_ty),
        mask=(offs_n[:, None] < n) & (offs_m[None, :] < m),
    )


@triton.jit
def _laplace_bwd_rows(
    x_ptr,
    y_ptr,
    w_ptr,
    dx_ptr,
    scale,
    n,
    m,
    d,
    stride_xb,
    stride_xn,
    stride_yb,
    stride_ym,
    stride_wb,
    stride_wn,
    stride_wm,
    BLOCK_N: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    """dx_ic = scale · Σ_j W_ij sign(x_ic − y_jc), rows i of this program, all j in order."""
    pid_n = tl.program_id(0)
    pid_d = tl.program_id(1)
    b = tl.program_id(2)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    x = tl.load(
        x_ptr + b * stride_xb + offs_n[:, None] * stride_xn + offs_d[None, :],
        mask=(offs_n[:, None] < n) & (offs_d[None, :] < d),
        other=0.0,
    ).to(tl.float32)
    acc = tl.zeros((BLOCK_N, BLOCK_D), dtype=tl.float32)
    for m0 in range(0, m, BLOCK_M):
        offs_m = m0 + tl.arange(0, BLOCK_M)
        y = tl.load(
            y_ptr + b * stride_yb + offs_m[:, None] * stride_ym + offs_d[None, :],
            mask=(offs_m[:, None] < m) & (offs_d[None, :] < d),
            other=0.0,
        ).to(tl.float32)
        w = tl.load(
            w_ptr + b * stride_wb + offs_n[:, None] * stride_wn + offs_m[None, :] * stride_wm,
            mask=(offs_n[:, None] < n) & (offs_m[None, :] < m),
            other=0.0,
        ).to(tl.float32)
        diff = x[:, None, :] - y[None, :, :]
        sign = tl.where(diff > 0, 1.0, tl.where(diff < 0, -1.0, 0.0))
        acc += tl.sum(w[:, :, None] * sign, axis=1)
    tl.store(
        dx_ptr + b * stride_xb + offs_n[:, None] * stride_xn + offs_d[None, :],
        (acc * scale).to(dx_ptr.dtype.element_ty),
        mask=(offs_n[:, None] < n) & (offs_d[None, :] < d),
    )


def _block(x: int, cap: int) -> int:
    return max(16, min(cap, triton.next_power_of_2(x)))


def laplace_fwd(q: torch.Tensor, k: torch.Tensor, inv_lam: float) -> torch.Tensor:
    """K (B, n, m) for q (B, n, d), k (B, m, d), contiguous."""
    bsz, n, d = q.shape
    m = k.shape[1]
    out = torch.empty(bsz, n, m, device=q.device, dtype=q.dtype)
    bn, bm, bd = 32, _block(m, 32), _block(d, 16)
    grid = (triton.cdiv(n, bn), triton.cdiv(m, bm), bsz)
    _laplace_fwd[grid](
        q,
        k,
        out,
        inv_lam,
        n,
        m,
        d,
        q.stride(0),
        q.stride(1),
        k.stride(0),
        k.stride(1),
        out.stride(0),
        out.stride(1),
        BLOCK_N=bn,
        BLOCK_M=bm,
        BLOCK_D=bd,
    )
    return out


def laplace_bwd(
    q: torch.Tensor, k: torch.Tensor, w: torch.Tensor, inv_lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(∂L/∂q, ∂L/∂k) from W = G ⊙ K (B, n, m)."""
    bsz, n, d = q.shape
    m = k.shape[1]
    dq = torch.empty_like(q)
    dk = torch.empty_like(k)
    bd = _block(d, 16)
    bn, bm = 32, _block(m, 32)
    # rows of dq: Σ over keys j; W indexed [i, j]
    _laplace_bwd_rows[(triton.cdiv(n, bn), triton.cdiv(d, bd), bsz)](
        q,
        k,
        w,
        dq,
        -inv_lam,
        n,
        m,
        d,
        q.stride(0),
        q.stride(1),
        k.stride(0),
        k.stride(1),
        w.stride(0),
        w.stride(1),
        w.stride(2),
        BLOCK_N=bn,
        BLOCK_M=bm,
        BLOCK_D=bd,
    )
    # rows of dk: Σ over queries i; read W transposed via strides, sign(k − q) = −sign(q − k)
    _laplace_bwd_rows[(triton.cdiv(m, bm), triton.cdiv(d, bd), bsz)](
        k,
        q,
        w,
        dk,
        -inv_lam,
        m,
        n,
        d,
        k.stride(0),
        k.stride(1),
        q.stride(0),
        q.stride(1),
        w.stride(0),
        w.stride(2),
        w.stride(1),
        BLOCK_N=bm,
        BLOCK_M=bn,
        BLOCK_D=bd,
    )
    return dq, dk


class LaplaceKernelFunction(torch.autograd.Function):
    """Autograd wrapper: Triton forward and deterministic Triton backward."""

    @staticmethod
    def forward(ctx, q: torch.Tensor, k: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        q, k = q.contiguous(), k.contiguous()
        inv_lam = 1.0 / float(lam)
        kmat = laplace_fwd(q, k, inv_lam)
        ctx.save_for_backward(q, k, kmat, lam)
        ctx.inv_lam = inv_lam
        return kmat

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        q, k, kmat, lam = ctx.saved_tensors
        w = (grad * kmat).contiguous()  # W = G ⊙ K
        dq, dk = laplace_bwd(q, k, w, ctx.inv_lam)
        dlam = None
        if ctx.needs_input_grad[2]:
            # ∂K/∂λ = K·D/λ² with D = −λ log K  ⇒  ∂L/∂λ = −Σ G·K log K / λ
            dlam = (-(grad.float() * torch.xlogy(kmat.float(), kmat.float())).sum() / lam).to(lam.dtype)
        return dq, dk, dlam
