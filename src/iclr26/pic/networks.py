"""Batched-ensemble MLPs: E independent networks evaluated with one batched matmul.

Critic ensembles (TD3's twin critics, EPIC's N critics) and stacked seeds share this: the weights
of member e live at index e of one (E, in, out) tensor, so a forward pass is a single `baddbmm`
instead of E small matmuls (the CPU cost that dominates offline RL updates at width 256).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch
from torch import nn


class EnsembleLinear(nn.Module):
    """E independent affine maps: (E, B, in) -> (E, B, out), initialised like `nn.Linear`."""

    def __init__(self, in_dim: int, out_dim: int, ensemble: int = 1) -> None:
        super().__init__()
        if min(in_dim, out_dim, ensemble) < 1:
            raise ValueError(f"in_dim, out_dim, ensemble must be >= 1, got {in_dim}, {out_dim}, {ensemble}")
        self.in_dim, self.out_dim, self.ensemble = in_dim, out_dim, ensemble
        self.weight = nn.Parameter(torch.empty(ensemble, in_dim, out_dim))
        self.bias = nn.Parameter(torch.empty(ensemble, 1, out_dim))
        bound = 1.0 / math.sqrt(in_dim)  # nn.Linear's default: kaiming_uniform(a=√5) ≡ U(±1/√in)
        nn.init.uniform_(self.weight, -bound, bound)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:  # one batch shared by every member
            x = x.unsqueeze(0).expand(self.ensemble, -1, -1)
        if x.dim() != 3 or x.shape[0] != self.ensemble or x.shape[-1] != self.in_dim:
            raise ValueError(
                f"expected (B, {self.in_dim}) or ({self.ensemble}, B, {self.in_dim}), got {tuple(x.shape)}"
            )
        return torch.baddbmm(self.bias, x, self.weight)


class EnsembleMLP(nn.Module):
    """E independent MLPs (ReLU hidden layers): (B, in) or (E, B, in) -> (E, B, out).

    `output="tanh"` squashes to (−1, 1) (actors); `"none"` leaves it linear (critics, values).
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        hidden: Sequence[int] = (256, 256),
        ensemble: int = 1,
        output: str = "none",
    ) -> None:
        super().__init__()
        if output not in ("none", "tanh"):
            raise ValueError(f"output must be 'none' or 'tanh', got {output!r}")
        dims = [in_dim, *hidden, out_dim]
        self.layers = nn.ModuleList(EnsembleLinear(a, b, ensemble) for a, b in itertools.pairwise(dims))
        self.output = output
        self.ensemble = ensemble

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return torch.tanh(x) if self.output == "tanh" else x


@torch.no_grad()
def soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """Polyak averaging θ' ← τ·θ + (1 − τ)·θ' (TD3, Fujimoto et al. 2018, Alg. 1)."""
    for t, s in zip(target.parameters(), source.parameters(), strict=True):
        t.lerp_(s, tau)
