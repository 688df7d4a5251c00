"""RePro's dual score of a reasoning trajectory's optimization process (arXiv 2512.01925).

Given the surrogate objective along the scored prefixes, J_0 = J_b, J_1, ..., J_k:

- magnitude (intensity): how far J_t has risen from the baseline, squashed into (0, 1],

      Δ_t = (J_t − J_b) / J_b,      S_magn,t = 1 − tanh(Δ_t + 1) = 1 − tanh(J_t / J_b)

  (J ≤ 0, so J_t / J_b is the ratio of answer NLLs: 0 when the answer is certain → 1; 1 when
  reasoning changed nothing → 1 − tanh 1 ≈ 0.24; → 0 as J_t falls below J_b). The secondary
  summaries print tanh(Δ + 1) + 1, which lies in [1, 2) and falls as J rises; we read the paper's
  (0, 1] range and its "higher J̃ is better" as the minus sign they dropped (README, "Choices").
- stability: the rank correlation of J_0..J_t with the step index 0..t (Kendall's τ_b by default,
  or Spearman's ρ), rescaled to [0, 1]: S_stab,t = (corr + 1) / 2; a sequence of one point gets
  0.5. J may be smoothed by an EMA first.
- composite: S_t = (1 − w) · S_magn,t + w · S_stab,t.
"""

from __future__ import annotations

from typing import Literal

import torch

RankCorr = Literal["kendall", "spearman"]


def magnitude_score(J: torch.Tensor, J_b: torch.Tensor | float, eps: float = 1e-6) -> torch.Tensor:
    """S_magn = 1 − tanh(Δ + 1), Δ = (J − J_b)/J_b, elementwise, in (0, 1]; J_b is clamped to ≤ −eps."""
    J = torch.as_tensor(J, dtype=torch.float64)
    J_b = torch.as_tensor(J_b, dtype=torch.float64).clamp(max=-eps)
    delta = (J - J_b) / J_b
    return 1 - torch.tanh(delta + 1)  # magnitude score


def kendall_tau(x: torch.Tensor) -> torch.Tensor:
    """Kendall's τ_b of x (n,) with its index 0..n−1 (ties in x counted); 0 when undefined."""
    x = torch.as_tensor(x, dtype=torch.float64).flatten()
    n = x.shape[0]
    if n < 2:
        return x.new_zeros(())
    upper = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    diff = (x[None, :] - x[:, None])[upper]  # x_j − x_i for i < j
    n0 = n * (n - 1) / 2
    n_tied = float((diff == 0).sum())
    if n0 - n_tied == 0:
        return x.new_zeros(())
    return torch.sign(diff).sum() / torch.sqrt(torch.tensor((n0 - n_tied) * n0, dtype=torch.float64))


def _average_ranks(x: torch.Tensor) -> torch.Tensor:
    """Ranks 0..n−1 of x, ties given their mean rank."""
    order = torch.argsort(x, stable=True)
    ranks = torch.empty_like(x)
    ranks[order] = torch.arange(x.shape[0], dtype=x.dtype)
    for v in torch.unique(x):
        tied = x == v
        if int(tied.sum()) > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


def spearman_rho(x: torch.Tensor) -> torch.Tensor:
    """Spearman's ρ of x (n,) with its index 0..n−1 (average ranks for ties); 0 when undefined."""
    x = torch.as_tensor(x, dtype=torch.float64).flatten()
    n = x.shape[0]
    if n < 2:
        return x.new_zeros(())
    r = _average_ranks(x) - (n - 1) / 2
    idx = torch.arange(n, dtype=torch.float64) - (n - 1) / 2
    denom = torch.sqrt((r * r).sum() * (idx * idx).sum())
    return (r * idx).sum() / denom if float(denom) > 0 else x.new_zeros(())


def ema(x: torch.Tensor, beta: float) -> torch.Tensor:
    """y_0 = x_0, y_t = β·y_{t−1} + (1 − β)·x_t (causal, so EMA of a prefix = prefix of the EMA)."""
    if not 0 <= beta < 1:
        raise ValueError(f"ema beta must be in [0, 1), got {beta}")
    x = torch.as_tensor(x, dtype=torch.float64).flatten()
    out = torch.empty_like(x)
    for t in range(x.shape[0]):
        out[t] = x[t] if t == 0 else beta * out[t - 1] + (1 - beta) * x[t]
    return out


def _corr(x: torch.Tensor, method: RankCorr) -> torch.Tensor:
    if method == "kendall":
        return kendall_tau(x)
    if method == "spearman":
        return spearman_rho(x)
    raise ValueError(f"rank correlation must be 'kendall' or 'spearman', got {method!r}")


def stability_score(
    J: torch.Tensor, method: RankCorr = "kendall", ema_beta: float | None = None
) -> torch.Tensor:
    """S_stab = (corr(J_0..J_t, 0..t) + 1)/2 in [0, 1]: 1 rising throughout, 0 falling, 0.5 one point."""
    J = torch.as_tensor(J, dtype=torch.float64).flatten()
    if ema_beta is not None:
        J = ema(J, ema_beta)
    return (_corr(J, method) + 1) / 2  # stability score


def trajectory_scores(
    J: torch.Tensor,
    w: float,
    method: RankCorr = "kendall",
    ema_beta: float | None = None,
    eps: float = 1e-6,
) -> torch.Tensor:
    """S_t = (1 − w)·S_magn,t + w·S_stab,t for t = 0..k, from J (k+1,) whose J[0] is J_b."""
    if not 0 <= w <= 1:
        raise ValueError(f"stability weight w must be in [0, 1], got {w}")
    J = torch.as_tensor(J, dtype=torch.float64).flatten()
    if J.shape[0] < 1:
        raise ValueError("J must hold at least J_b (J[0])")
    magn = magnitude_score(J, J[0], eps)
    smooth = ema(J, ema_beta) if ema_beta is not None else J
    stab = torch.stack([(_corr(smooth[: t + 1], method) + 1) / 2 for t in range(J.shape[0])])
    return (1 - w) * magn + w * stab  # composite score S
