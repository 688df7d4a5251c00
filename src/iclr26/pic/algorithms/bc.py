"""Behaviour cloning: a deterministic tanh policy regressed onto the dataset actions.

    L(π) = E_{(s,a)~D} (π(s) − a)²     (mean over batch and action dimensions)

States are normalized by the dataset mean/std, as for TD3+BC, so the two differ only in the Q term.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from iclr26.pic.algorithms.common import (
    Batch,
    Checkpointable,
    StateNormalizer,
    act_numpy,
    build_networks,
    check_config,
    generator_for,
)
from iclr26.pic.networks import EnsembleMLP


@dataclass(frozen=True)
class BCConfig:
    """BC hyper-parameters (CORL's defaults, width and learning rate shared with the other baselines)."""

    actor_lr: float = 3e-4  # Adam learning rate
    hidden: tuple[int, ...] = (256, 256)  # hidden widths of the policy
    batch_size: int = 256  # minibatch size (used by whoever builds the sampler)
    normalize_states: bool = True  # normalize states by dataset mean/std

    def __post_init__(self) -> None:
        check_config(self)


def bc_loss(pi: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Mean squared error between policy and dataset actions, (B, act_dim) each."""
    return F.mse_loss(pi, a)


class BC(Checkpointable):
    """Behaviour cloning over a given policy network and optimizer."""

    MODULES = ("actor", "normalizer")
    OPTIMIZERS = ("actor_optimizer",)

    def __init__(
        self,
        config: BCConfig,
        actor: EnsembleMLP,
        actor_optimizer: torch.optim.Optimizer,
        normalizer: StateNormalizer,
        generator: torch.Generator,
    ) -> None:
        self.config = config
        self.actor = actor
        self.actor_optimizer = actor_optimizer
        self.normalizer = normalizer
        self.generator = generator  # unused by the update; kept so every algorithm checkpoints alike
        self.total_it = 0

    @classmethod
    def create(
        cls,
        obs_dim: int,
        act_dim: int,
        config: Any = None,
        *,
        seed: int = 0,
        device: str | torch.device = "cpu",
    ) -> BC:
        """A tanh policy and its Adam optimizer, seeded by `seed`."""
        cfg = config if config is not None else BCConfig()
        nets = build_networks(
            seed, device, actor=dict(in_dim=obs_dim, out_dim=act_dim, hidden=cfg.hidden, output="tanh")
        )
        return cls(
            cfg,
            nets["actor"],
            torch.optim.Adam(nets["actor"].parameters(), lr=cfg.actor_lr),
            StateNormalizer(obs_dim).to(device),
            generator_for(device, seed + 1),
        )

    def update(self, batch: Batch) -> dict[str, float]:
        """One gradient step on the BC loss."""
        self.total_it += 1
        pi = self.actor(self.normalizer(batch["observations"]))[0]
        loss = bc_loss(pi, batch["actions"])
        self.actor_optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.actor_optimizer.step()
        return {"actor_loss": loss.item()}

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic action π(s) in [-1, 1] for raw (obs_dim,) or (n, obs_dim) observations."""
        return act_numpy(self.actor, self.normalizer, obs)
