"""IQL (Kostrikov, Nair & Levine, "Offline Reinforcement Learning with Implicit Q-Learning", ICLR 2022).

    L_V(ψ) = E_{(s,a)~D} L₂^τ( min_i Q'_i(s, a) − V_ψ(s) ),   L₂^τ(u) = |τ − 1(u < 0)|·u²      Eq. (5)
    L_Q(θ) = Σ_i E_{(s,a,s')~D} ( r + γ(1 − d)·V_ψ(s') − Q_i(s, a) )²                        Eq. (6)
    L_π(φ) = E_{(s,a)~D} min(exp(β·(min_i Q'_i(s, a) − V_ψ(s))), 100) · ‖π(s) − a‖²         Eq. (7)

Choice: the policy is deterministic (tanh MLP), so the advantage-weighted log-likelihood of Eq. (7)
becomes an advantage-weighted squared error (CORL's `DeterministicPolicy` option) — faster than the
Gaussian policy and deterministic at evaluation. τ = 0.7, β = 3, weights clipped at 100 (the paper's
MuJoCo settings). The paper's cosine decay of the actor learning rate is not used. States are
normalized by dataset mean/std; reward scaling (1000 / return range on locomotion) belongs to the
sampler (`BatchSampler(reward_scale=return_range_reward_scale(...))`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclr26.pic.algorithms.common import (
    Batch,
    Checkpointable,
    StateNormalizer,
    act_numpy,
    build_networks,
    check_config,
    frozen_copy,
    generator_for,
    state_action,
)
from iclr26.pic.networks import EnsembleMLP, soft_update


@dataclass(frozen=True)
class IQLConfig:
    """IQL hyper-parameters; defaults are the paper's MuJoCo settings (Kostrikov et al. 2022, App. B)."""

    actor_lr: float = 3e-4  # Adam learning rate of the policy
    critic_lr: float = 3e-4  # Adam learning rate of the Q critics
    value_lr: float = 3e-4  # Adam learning rate of V
    hidden: tuple[int, ...] = (256, 256)  # hidden widths of all networks
    batch_size: int = 256  # minibatch size (used by whoever builds the sampler)
    gamma: float = 0.99  # discount
    tau: float = 5e-3  # target-critic Polyak rate
    expectile: float = 0.7  # τ of the expectile regression for V
    temperature: float = 3.0  # β, inverse temperature of the advantage weights
    max_weight: float = 100.0  # advantage weights exp(β·A) are clipped at this value
    normalize_states: bool = True  # normalize states by dataset mean/std

    def __post_init__(self) -> None:
        check_config(self)
        if not 0.0 < self.expectile < 1.0:
            raise ValueError(f"expectile must be in (0, 1), got {self.expectile}")
        if self.value_lr <= 0 or self.temperature < 0 or self.max_weight <= 0:
            raise ValueError(
                f"value_lr and max_weight must be > 0 and temperature >= 0, got "
                f"{self.value_lr}, {self.max_weight}, {self.temperature}"
            )


def expectile_loss(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """Mean of L₂^τ(u) = |τ − 1(u < 0)|·u² over u = Q − V (Kostrikov et al. 2022, Eq. 5)."""
    weight = torch.abs(tau - (diff < 0).to(diff.dtype))
    return (weight * diff**2).mean()


def awr_weights(advantage: torch.Tensor, temperature: float, max_weight: float) -> torch.Tensor:
    """exp(β·A) clipped at `max_weight` (Kostrikov et al. 2022, Eq. 7)."""
    return torch.exp(temperature * advantage).clamp(max=max_weight)


class IQL(Checkpointable):
    """IQL update rule over given networks and optimizers."""

    MODULES = ("actor", "critic", "critic_target", "value", "normalizer")
    OPTIMIZERS = ("actor_optimizer", "critic_optimizer", "value_optimizer")

    def __init__(
        self,
        config: IQLConfig,
        actor: EnsembleMLP,
        critic: EnsembleMLP,
        value: EnsembleMLP,
        actor_optimizer: torch.optim.Optimizer,
        critic_optimizer: torch.optim.Optimizer,
        value_optimizer: torch.optim.Optimizer,
        normalizer: StateNormalizer,
        generator: torch.Generator,
    ) -> None:
        self.config = config
        self.actor, self.value = actor, value
        self.critic, self.critic_target = critic, frozen_copy(critic)
        self.actor_optimizer = actor_optimizer
        self.critic_optimizer = critic_optimizer
        self.value_optimizer = value_optimizer
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
    ) -> IQL:
        """Default networks (tanh policy, twin-critic ensemble, V) and Adam optimizers, seeded by `seed`."""
        cfg = config if config is not None else IQLConfig()
        nets = build_networks(
            seed,
            device,
            actor=dict(in_dim=obs_dim, out_dim=act_dim, hidden=cfg.hidden, output="tanh"),
            critic=dict(in_dim=obs_dim + act_dim, out_dim=1, hidden=cfg.hidden, ensemble=2),
            value=dict(in_dim=obs_dim, out_dim=1, hidden=cfg.hidden),
        )
        return cls(
            cfg,
            nets["actor"],
            nets["critic"],
            nets["value"],
            torch.optim.Adam(nets["actor"].parameters(), lr=cfg.actor_lr),
            torch.optim.Adam(nets["critic"].parameters(), lr=cfg.critic_lr),
            torch.optim.Adam(nets["value"].parameters(), lr=cfg.value_lr),
            StateNormalizer(obs_dim).to(device),
            generator_for(device, seed + 1),
        )

    def update(self, batch: Batch) -> dict[str, float]:
        """One step of V (expectile), Q (TD onto V) and π (advantage-weighted regression), then targets."""
        cfg = self.config
        self.total_it += 1
        obs = self.normalizer(batch["observations"])
        next_obs = self.normalizer(batch["next_observations"])
        a = batch["actions"]

        # V: expectile regression onto the target critics' min
        with torch.no_grad():
            q_target = self.critic_target(state_action(obs, a)).squeeze(-1).amin(0)  # (B,)
        v = self.value(obs)[0, :, 0]
        value_loss = expectile_loss(q_target - v, cfg.expectile)  # Eq. (5)
        self.value_optimizer.zero_grad(set_to_none=True)
        value_loss.backward()
        self.value_optimizer.step()
        advantage = (q_target - v).detach()

        # Q: TD onto V(s'), each critic its own MSE
        with torch.no_grad():
            y = batch["rewards"] + cfg.gamma * (1.0 - batch["dones"]) * self.value(next_obs)[0, :, 0]
        q = self.critic(state_action(obs, a)).squeeze(-1)  # (2, B)
        critic_loss = ((q - y) ** 2).mean(1).sum()  # Eq. (6)
        self.critic_optimizer.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_optimizer.step()

        # π: advantage-weighted regression (deterministic policy: weighted squared error)
        weights = awr_weights(advantage, cfg.temperature, cfg.max_weight)
        pi = self.actor(obs)[0]
        actor_loss = (weights * (pi - a).pow(2).sum(-1)).mean()  # Eq. (7)
        self.actor_optimizer.zero_grad(set_to_none=True)
        actor_loss.backward()
        self.actor_optimizer.step()

        soft_update(self.critic_target, self.critic, cfg.tau)
        return {
            "value_loss": value_loss.item(),
            "critic_loss": critic_loss.item(),
            "actor_loss": actor_loss.item(),
            "advantage": advantage.mean().item(),
        }

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic action π(s) in [-1, 1] for raw (obs_dim,) or (n, obs_dim) observations."""
        return act_numpy(self.actor, self.normalizer, obs)
