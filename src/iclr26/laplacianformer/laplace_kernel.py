"""The Laplacian kernel matrix K_ij = exp(−‖q_i − k_j‖₁ / λ) between two token sets.

`laplace_kernel(q, k, lam)` is the public entry: on CUDA tensors (or when forced) it runs the
Triton kernels in `triton_laplace.py`, elsewhere `torch.cdist(p=1)`. The plain-PyTorch reference
below is what both are tested against (Triton under `TRITON_INTERPRET=1`).

Gradients (the paper's custom backward), with W = G ⊙ K for upstream gradient G:
    ∂L/∂q_ic = −(1/λ) Σ_j W_ij sign(q_ic − k_jc)
    ∂L/∂k_jc = +(1/λ) Σ_i W_ij sign(q_ic − k_jc)
"""

from __future__ import annotations

import os

import torch


def l1_distance_reference(q: torch.Tensor, k: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    """‖q_i − k_j‖₁ for q (..., n, d) and k (..., m, d) → (..., n, m), chunked over n."""
    out = []
    for start in range(0, q.shape[-2], chunk):
        qc = q[..., start : start + chunk, :]
        out.append((qc.unsqueeze(-2) - k.unsqueeze(-3)).abs().sum(-1))
    return torch.cat(out, dim=-2)


def laplace_kernel_reference(q: torch.Tensor, k: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    """exp(−‖q_i − k_j‖₁ / λ) in plain PyTorch (broadcast |q − k|); autograd gives gradients."""
    return torch.exp(-l1_distance_reference(q, k) / lam)


def laplace_kernel_cdist(q: torch.Tensor, k: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    """The same kernel through `torch.cdist(p=1)`: the fast CPU path (5x the broadcast one)."""
    return torch.exp(-torch.cdist(q, k, p=1) / lam)


def _use_triton(q: torch.Tensor, force: bool | None) -> bool:
    if force is not None:
        return force
    if os.environ.get("ICLR26_NO_TRITON") == "1":
        return False
    return q.is_cuda


def laplace_kernel(
    q: torch.Tensor,
    k: torch.Tensor,
    lam: float | torch.Tensor = 1.0,
    *,
    use_triton: bool | None = None,
) -> torch.Tensor:
    """K = exp(−‖q_i − k_j‖₁ / λ) for q (..., n, d), k (..., m, d) → (..., n, m).

    `use_triton=None` picks the Triton kernels on CUDA and the PyTorch reference elsewhere;
    `True` forces Triton (on CPU this needs `TRITON_INTERPRET=1`). `lam` may be a tensor
    (a learned temperature); its gradient is Σ G ⊙ K ⊙ D / λ² with D the L1 distance.
    """
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k need the same feature size, got {q.shape[-1]} and {k.shape[-1]}")
    if q.shape[:-2] != k.shape[:-2]:
        raise ValueError(f"q and k need the same batch dims, got {tuple(q.shape)} and {tuple(k.shape)}")
    if isinstance(lam, float | int) and lam <= 0:
        raise ValueError(f"lam (λ) must be positive, got {lam}")
    if not _use_triton(q, use_triton):
        return laplace_kernel_cdist(q, k, lam)
    from iclr26.laplacianformer.triton_laplace import LaplaceKernelFunction

    lam_t = lam if isinstance(lam, torch.Tensor) else torch.tensor(float(lam), device=q.device)
    batch = q.shape[:-2]
    qf = q.reshape(-1, *q.shape[-2:])
    kf = k.reshape(-1, *k.shape[-2:])
    out = LaplaceKernelFunction.apply(qf, kf, lam_t)
    return out.reshape(*batch, q.shape[-2], k.shape[-2])
