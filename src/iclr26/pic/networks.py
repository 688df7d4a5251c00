"""Batched-ensemble MLPs: E independent networks evaluated with one batched matmul.

Critic ensembles (TD3's twin critics, EPIC's N critics) and stacked seeds share this: the weights
of member e live at index e of one (E, in, out) tensor, so a forward pass is a single `baddbmm`
instead of E small matmuls (the CPU cost that dominates offline RL updates at width 256).

`EnsembleMLP`'s output is (E, B, out); callers read it through named views rather than indexing that
layout: `single` (a one-member net: (B, out)), `values` (scalar heads: (E, B)), `member_value`
(one member's: (B,)) and `min_value` (the min over members: (B,)).
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Sequence
from typing import Any

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

    @property
    def out_dim(self) -> int:
        """Output width of each member."""
        return self.layers[-1].out_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return torch.tanh(x) if self.output == "tanh" else x

    # Named views of the (E, B, out) output, so that callers never index the ensemble layout.

    def single(self, x: torch.Tensor) -> torch.Tensor:
        """(B, out): the output of a one-member network (an actor, a value network)."""
        if self.ensemble != 1:
            raise ValueError(f"single() needs a one-member network, this one has {self.ensemble} members")
        return self(x)[0]

    def values(self, x: torch.Tensor) -> torch.Tensor:
        """(E, B): every member's scalar output (critics: Q_1(s, a), ..., Q_E(s, a))."""
        self._check_scalar()
        return self(x).squeeze(-1)

    def member_value(self, x: torch.Tensor, member: int = 0) -> torch.Tensor:
        """(B,): one member's scalar output (TD3's Q1 is member 0; a value network's V is its only one)."""
        if not 0 <= member < self.ensemble:
            raise ValueError(f"member must be in [0, {self.ensemble}), got {member}")
        return self.values(x)[member]

    def min_value(self, x: torch.Tensor) -> torch.Tensor:
        """(B,): the minimum over members of the scalar outputs (clipped double Q, EDAC's min over N)."""
        return self.values(x).amin(0)

    def _check_scalar(self) -> None:
        if self.out_dim != 1:
            raise ValueError(f"values need a network with one output, this one has {self.out_dim}")


@torch.no_grad()
def soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """Polyak averaging θ' ← τ·θ + (1 − τ)·θ' (TD3, Fujimoto et al. 2018, Alg. 1)."""
    for t, s in zip(target.parameters(), source.parameters(), strict=True):
        t.lerp_(s, tau)


def frozen_copy(net: nn.Module) -> nn.Module:
    """A target network: a copy whose parameters never receive gradients."""
    target = copy.deepcopy(net)
    target.requires_grad_(False)
    return target


def tanh_policy_spec(obs_dim: int, act_dim: int, hidden: Sequence[int]) -> dict[str, Any]:
    """`EnsembleMLP` kwargs of a deterministic tanh policy: state -> action in (−1, 1)."""
    return dict(in_dim=obs_dim, out_dim=act_dim, hidden=hidden, output="tanh")


def critic_spec(obs_dim: int, act_dim: int, hidden: Sequence[int], ensemble: int) -> dict[str, Any]:
    """`EnsembleMLP` kwargs of `ensemble` Q critics in one network: [s, a] -> Q."""
    return dict(in_dim=obs_dim + act_dim, out_dim=1, hidden=hidden, ensemble=ensemble)
