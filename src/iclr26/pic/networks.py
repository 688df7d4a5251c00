"""Batched-ensemble MLPs: E independent networks evaluated with one batched matmul.

Critic ensembles (TD3's twin critics, EPIC's N critics) and stacked runs share this: the weights
of member e live at index e of one (E, in, out) tensor, so a forward pass is a single `baddbmm`
instead of E small matmuls (the CPU cost that dominates offline RL updates at width 256). R runs
trained together (seeds × datasets, `stacked.py`) are R·E members, run-major.

`EnsembleMLP`'s output is (R·E, B, out); callers read it through named views rather than indexing that
layout: `single` (a one-member net: (B, out)), `values` (scalar heads: (E, B)), `member_value`
(one member's: (B,)) and `min_value` (the min over members: (B,)). Stacked runs add a leading R axis
to each view, so code that reduces over the batch with `dim=-1` serves one run and a stack alike.
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
    """E independent MLPs (ReLU hidden layers) per run, for R stacked runs: R·E members in all.

    `output="tanh"` squashes to (−1, 1) (actors); `"none"` leaves it linear (critics, values).
    `forward` returns (R·E, B, out), run-major. Its input is (B, in), shared by every member;
    (R·E, B, in), one batch per member; (R, B, in), one batch per run shared by the run's E members;
    or (R, E, B, in). One run (R = 1) is the plain ensemble: (E, B, in) is one batch per member.
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        hidden: Sequence[int] = (256, 256),
        ensemble: int = 1,
        output: str = "none",
        runs: int = 1,
    ) -> None:
        super().__init__()
        if output not in ("none", "tanh"):
            raise ValueError(f"output must be 'none' or 'tanh', got {output!r}")
        if runs < 1:
            raise ValueError(f"runs must be >= 1, got {runs}")
        dims = [in_dim, *hidden, out_dim]
        self.layers = nn.ModuleList(
            EnsembleLinear(a, b, runs * ensemble) for a, b in itertools.pairwise(dims)
        )
        self.output = output
        self.ensemble, self.runs = ensemble, runs
        self.stacked = runs > 1  # whether the views lead with a run axis (`stack` sets it even for R = 1)
        self.hidden = tuple(hidden)

    @property
    def out_dim(self) -> int:
        """Output width of each member."""
        return self.layers[-1].out_dim

    @property
    def in_dim(self) -> int:
        """Input width of each member."""
        return self.layers[0].in_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r, e = self.runs, self.ensemble
        if x.dim() == 4:  # (R, E, B, in)
            x = x.reshape(-1, *x.shape[2:])
        elif x.dim() == 3 and x.shape[0] == r and e > 1:  # one batch per run, shared by its members
            x = x.unsqueeze(1).expand(r, e, *x.shape[1:]).reshape(r * e, *x.shape[1:])
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return torch.tanh(x) if self.output == "tanh" else x

    # Named views of the (R·E, B, out) output, so that callers never index the ensemble layout. A plain
    # network's have no run axis; a stacked one's (R > 1, or made by `stack`) lead with the R axis.

    def single(self, x: torch.Tensor) -> torch.Tensor:
        """(B, out), or (R, B, out) for stacked runs: the output of a one-member network."""
        if self.ensemble != 1:
            raise ValueError(f"single() needs a one-member network, this one has {self.ensemble} members")
        out = self(x)
        return out if self.stacked else out[0]

    def values(self, x: torch.Tensor) -> torch.Tensor:
        """(E, B), or (R, E, B): every member's scalar output (critics: Q_1(s, a), ..., Q_E(s, a))."""
        self._check_scalar()
        out = self(x).squeeze(-1)
        return out.unflatten(0, (self.runs, self.ensemble)) if self.stacked else out

    def member_value(self, x: torch.Tensor, member: int = 0) -> torch.Tensor:
        """(B,) or (R, B): one member's scalar output (TD3's Q1 is member 0, a value network's V its only)."""
        if not 0 <= member < self.ensemble:
            raise ValueError(f"member must be in [0, {self.ensemble}), got {member}")
        return self.values(x)[..., member, :]

    def min_value(self, x: torch.Tensor) -> torch.Tensor:
        """(B,) or (R, B): the minimum over members of the scalar outputs (clipped double Q, EDAC's min)."""
        return self.values(x).amin(-2)

    def _check_scalar(self) -> None:
        if self.out_dim != 1:
            raise ValueError(f"values need a network with one output, this one has {self.out_dim}")

    # Stacking: R single-run networks as one, and back.

    @classmethod
    def stack(cls, nets: Sequence[EnsembleMLP]) -> EnsembleMLP:
        """One network of len(nets) runs whose run r has the weights of nets[r] (all one-run, one shape)."""
        first = nets[0]
        shape = (first.in_dim, first.out_dim, first.hidden, first.ensemble, first.output)
        for net in nets:
            if net.runs != 1 or (net.in_dim, net.out_dim, net.hidden, net.ensemble, net.output) != shape:
                raise ValueError("stack() needs one-run networks of one shape")
        out = cls(first.in_dim, first.out_dim, first.hidden, first.ensemble, first.output, runs=len(nets))
        out.stacked = True
        out = out.to(next(first.parameters()).device)
        with torch.no_grad():
            for name, param in out.named_parameters():
                param.copy_(torch.cat([net.get_parameter(name) for net in nets]))
        return out

    def run(self, r: int) -> EnsembleMLP:
        """Run r of a stack as a one-run network (a copy of its weights)."""
        if not 0 <= r < self.runs:
            raise ValueError(f"run must be in [0, {self.runs}), got {r}")
        out = EnsembleMLP(self.in_dim, self.out_dim, self.hidden, self.ensemble, self.output)
        out = out.to(next(self.parameters()).device)
        e = self.ensemble
        with torch.no_grad():
            for name, param in out.named_parameters():
                param.copy_(self.get_parameter(name)[r * e : (r + 1) * e])
        return out


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
