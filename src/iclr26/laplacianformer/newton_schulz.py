"""Newton–Schulz inverse of the landmark kernel matrix, with an analytic backward.

LaplacianFormer (arXiv 2604.20368) inverts the m×m landmark kernel matrix A by the Newton–Schulz
iteration instead of `pinv`/SVD:

    X_{k+1} = X_k (2I − A X_k)                                         # Newton–Schulz step

started from X_0 = Aᵀ / (‖A‖₁ ‖A‖_∞), which makes ‖I − A X_0‖₂ < 1 for any non-singular A, so the
residual squares at every step. The backward uses the derivative of the exact inverse,

    ∂L/∂A = −Xᵀ (∂L/∂X) Xᵀ,

instead of back-propagating through the iterations (cheaper, and exact once X has converged).
"""

from __future__ import annotations

import warnings

import torch

from iclr26.core.validation import check_in, check_int, check_interval


class NewtonSchulzWarning(RuntimeWarning):
    """The iteration stopped before the residual fell below the tolerance."""


def newton_schulz_init(a: torch.Tensor) -> torch.Tensor:
    """X_0 = Aᵀ / (‖A‖₁ ‖A‖_∞) for a batch of square matrices `a` (..., m, m)."""
    norm_1 = a.abs().sum(dim=-2).amax(dim=-1)  # max column sum
    norm_inf = a.abs().sum(dim=-1).amax(dim=-1)  # max row sum
    scale = (norm_1 * norm_inf).clamp_min(torch.finfo(a.dtype).tiny)
    return a.transpose(-1, -2) / scale[..., None, None]


def _iterate(a: torch.Tensor, iters: int) -> tuple[torch.Tensor, torch.Tensor]:
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    x = newton_schulz_init(a)
    for _ in range(iters):
        x = x @ (2 * eye - a @ x)  # X ← X(2I − AX)
    residual = torch.linalg.matrix_norm(eye - a @ x) / a.shape[-1] ** 0.5
    return x, residual


class _NewtonSchulzInverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a: torch.Tensor, iters: int) -> tuple[torch.Tensor, torch.Tensor]:  # type: ignore[override]
        x, residual = _iterate(a, iters)
        ctx.save_for_backward(x)
        ctx.mark_non_differentiable(residual)
        return x, residual

    @staticmethod
    def backward(ctx, grad_x: torch.Tensor, _grad_res: torch.Tensor):  # type: ignore[override]
        (x,) = ctx.saved_tensors
        xt = x.transpose(-1, -2)
        return -xt @ grad_x @ xt, None  # d(A⁻¹) = −A⁻¹ dA A⁻¹


def newton_schulz_inverse(
    a: torch.Tensor,
    iters: int = 20,
    *,
    tol: float | None = 1e-3,
    on_fail: str = "warn",
) -> torch.Tensor:
    """Approximate A⁻¹ for a batch of square matrices (..., m, m) by `iters` Newton–Schulz steps.

    When `tol` is set, the RMS residual ‖I − AX‖_F / √m is checked: above `tol` it warns
    (`on_fail="warn"`) or raises (`on_fail="raise"`), naming the iterations and the residual.
    """
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"newton_schulz_inverse needs square matrices (..., m, m), got {tuple(a.shape)}")
    check_int("iters", iters, 1)
    check_in("on_fail", on_fail, ("warn", "raise"))
    check_interval("tol", tol, 0, closed=(False, True), optional=True)
    if not torch.isfinite(a).all():
        raise ValueError("newton_schulz_inverse got non-finite entries in the matrix to invert")
    x, residual = _NewtonSchulzInverse.apply(a, iters)
    if tol is not None:
        worst = float(residual.max())
        if not worst <= tol:  # also catches NaN
            msg = (
                f"Newton–Schulz inverse did not converge: residual ‖I − AX‖_F/√m = {worst:.3g} "
                f"> tol {tol:g} after {iters} iterations (matrix {a.shape[-1]}×{a.shape[-1]}); "
                "raise `ns_iters` or regularise the matrix"
            )
            if on_fail == "raise":
                raise RuntimeError(msg)
            warnings.warn(msg, NewtonSchulzWarning, stacklevel=2)
    return x
