"""Behaviour cloning: a deterministic tanh policy regressed onto the dataset actions.

    L(π) = E_{(s,a)~D} (π(s) − a)²     (mean over batch and action dimensions)

States are normalized by the dataset mean/std, as for TD3+BC, so the two differ only in the Q term.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from iclr26.pic.algorithms.common import (
    ActorConfig,
    AlgorithmBase,
    Batch,
    StateNormalization,
    StateNormalizer,
    gradient_step,
    metric,
)
from iclr26.pic.networks import EnsembleMLP, tanh_policy_spec


@dataclass(frozen=True)
class BCConfig(StateNormalization, ActorConfig):
    """BC hyper-parameters (CORL's defaults, width and learning rate shared with the other baselines)."""


def bc_loss(pi: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Mean squared error between policy and dataset actions, (B, act_dim) each (or (R, B, act_dim):
    one loss per run)."""
    return (pi - a).pow(2).mean((-2, -1))


class BC(AlgorithmBase):
    """Behaviour cloning over a given policy network and optimizer (the update draws no random numbers)."""

    config_cls = BCConfig
    config: BCConfig
    MODULES = ("actor", "normalizer")
    OPTIMIZERS = ("actor_optimizer",)

    def __init__(
        self,
        config: BCConfig,
        actor: EnsembleMLP,
        actor_optimizer: torch.optim.Optimizer,
        normalizer: StateNormalizer,
    ) -> None:
        super().__init__(config, normalizer)
        self.actor, self.actor_optimizer = actor, actor_optimizer

    @classmethod
    def network_specs(cls, obs_dim: int, act_dim: int, cfg: BCConfig) -> dict[str, dict[str, Any]]:
        """A tanh policy."""
        return {"actor": tanh_policy_spec(obs_dim, act_dim, cfg.hidden)}

    def update(self, batch: Batch) -> dict[str, Any]:
        """One gradient step on the BC loss."""
        self.total_it += 1
        pi = self.actor.single(self.normalizer(batch["observations"]))
        loss = bc_loss(pi, batch["actions"])
        gradient_step(self.actor_optimizer, loss.sum())
        return {"actor_loss": metric(loss)}
