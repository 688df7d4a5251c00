"""TD3+BC (Fujimoto & Gu, "A Minimalist Approach to Offline Reinforcement Learning", NeurIPS 2021).

TD3 (Fujimoto et al. 2018) with a behaviour-cloning term in the actor objective (Eq. 3):

    π = argmax_π E_{(s,a)~D} [ λ·Q(s, π(s)) − (π(s) − a)² ],   λ = α / ((1/N) Σ |Q(s_i, a_i)|)

with λ computed on the minibatch and not differentiated. (π(s) − a)² is the mean over batch and
action dimensions, as in the authors' code (`F.mse_loss`). States are normalized by the dataset's
mean and std (Sec. 5); the statistics live in the algorithm's `normalizer` and its checkpoints.

The twin critics are one `EnsembleMLP` with 2 members, so each critic pass is one batched matmul per
layer. PIC-TD3 (`pic.py`) subclasses this class and replaces only `actor_objective`.
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
    frozen_copy,
    generator_for,
    state_action,
)
from iclr26.pic.networks import EnsembleMLP, soft_update


@dataclass(frozen=True)
class TD3BCConfig:
    """TD3+BC hyper-parameters; defaults are the paper's (Fujimoto & Gu 2021, Table 3)."""

    actor_lr: float = 3e-4  # Adam learning rate of the actor
    critic_lr: float = 3e-4  # Adam learning rate of the critics
    hidden: tuple[int, ...] = (256, 256)  # hidden widths of actor and critics
    batch_size: int = 256  # minibatch size (used by whoever builds the sampler)
    gamma: float = 0.99  # discount
    tau: float = 5e-3  # target-network Polyak rate
    policy_noise: float = 0.2  # std of the target policy smoothing noise
    noise_clip: float = 0.5  # the smoothing noise is clipped to ±noise_clip
    policy_delay: int = 2  # actor and targets are updated every policy_delay critic updates
    alpha: float = 2.5  # α in λ = α / mean|Q|
    normalize_states: bool = True  # normalize states by dataset mean/std

    def __post_init__(self) -> None:
        check_config(self)
        if self.policy_delay < 1:
            raise ValueError(f"policy_delay must be >= 1, got {self.policy_delay}")
        if self.policy_noise < 0 or self.noise_clip < 0:
            raise ValueError(
                f"policy_noise and noise_clip must be >= 0, got {self.policy_noise}, {self.noise_clip}"
            )
        if self.alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha}")


def q_normalizer(q_pi: torch.Tensor, alpha: float) -> torch.Tensor:
    """λ = α / mean|Q(s, π(s))|, detached (Fujimoto & Gu 2021, Sec. 5)."""
    return alpha / q_pi.abs().mean().detach()


def td3_bc_actor_loss(q_pi: torch.Tensor, pi: torch.Tensor, a: torch.Tensor, alpha: float) -> torch.Tensor:
    """TD3+BC actor loss −λ·mean Q(s, π(s)) + mean (π(s) − a)²; q_pi (B,), pi and a (B, act_dim)."""
    lmbda = q_normalizer(q_pi, alpha)
    return -lmbda * q_pi.mean() + F.mse_loss(pi, a)  # Eq. (3)


def td3_target(
    critic_target: EnsembleMLP,
    actor_target: EnsembleMLP,
    next_obs: torch.Tensor,
    rewards: torch.Tensor,
    dones: torch.Tensor,
    noise: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """y = r + γ(1 − d)·min_j Q'_j(s', clip(π'(s') + ε, −1, 1)) with clipped noise ε given (B,)."""
    next_a = (actor_target(next_obs)[0] + noise).clamp(-1.0, 1.0)  # target policy smoothing
    q_next = critic_target(state_action(next_obs, next_a)).squeeze(-1).amin(0)  # clipped double Q
    return rewards + gamma * (1.0 - dones) * q_next


class TD3BC(Checkpointable):
    """TD3+BC update rule over given networks and optimizers."""

    MODULES = ("actor", "actor_target", "critic", "critic_target", "normalizer")
    OPTIMIZERS = ("actor_optimizer", "critic_optimizer")

    def __init__(
        self,
        config: TD3BCConfig,
        actor: EnsembleMLP,
        critic: EnsembleMLP,
        actor_optimizer: torch.optim.Optimizer,
        critic_optimizer: torch.optim.Optimizer,
        normalizer: StateNormalizer,
        generator: torch.Generator,
    ) -> None:
        self.config = config
        self.actor, self.actor_target = actor, frozen_copy(actor)
        self.critic, self.critic_target = critic, frozen_copy(critic)
        self.actor_optimizer, self.critic_optimizer = actor_optimizer, critic_optimizer
        self.normalizer = normalizer
        self.generator = generator
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
    ) -> TD3BC:
        """Default networks (tanh actor, twin-critic ensemble) and Adam optimizers, seeded by `seed`."""
        cfg = config if config is not None else cls.default_config()
        nets = build_networks(
            seed,
            device,
            actor=dict(in_dim=obs_dim, out_dim=act_dim, hidden=cfg.hidden, output="tanh"),
            critic=dict(in_dim=obs_dim + act_dim, out_dim=1, hidden=cfg.hidden, ensemble=2),
        )
        return cls(
            cfg,
            nets["actor"],
            nets["critic"],
            torch.optim.Adam(nets["actor"].parameters(), lr=cfg.actor_lr),
            torch.optim.Adam(nets["critic"].parameters(), lr=cfg.critic_lr),
            StateNormalizer(obs_dim).to(device),
            generator_for(device, seed + 1),
        )

    @staticmethod
    def default_config() -> TD3BCConfig:
        return TD3BCConfig()

    # ------------------------------------------------------------------------------------ losses

    def critic_loss(self, obs: torch.Tensor, batch: Batch, next_obs: torch.Tensor) -> torch.Tensor:
        """Σ_i E[(Q_i(s, a) − y)²] over the twin critics (TD3, Fujimoto et al. 2018, Sec. 4.2 and 5.3)."""
        cfg = self.config
        with torch.no_grad():
            eps = torch.randn(batch["actions"].shape, generator=self.generator, device=obs.device)
            noise = (eps * cfg.policy_noise).clamp(-cfg.noise_clip, cfg.noise_clip)
            y = td3_target(
                self.critic_target,
                self.actor_target,
                next_obs,
                batch["rewards"],
                batch["dones"],
                noise,
                cfg.gamma,
            )
        q = self.critic(state_action(obs, batch["actions"])).squeeze(-1)  # (2, B)
        return ((q - y) ** 2).mean(1).sum()

    def actor_objective(self, obs: torch.Tensor, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        """TD3+BC's actor loss on a normalized-state batch, and its metrics."""
        pi = self.actor(obs)[0]
        q1_pi = self.critic(state_action(obs, pi))[0, :, 0]  # Q1 only, as in TD3
        loss = td3_bc_actor_loss(q1_pi, pi, batch["actions"], self.config.alpha)
        return loss, {"actor_loss": loss.item(), "q_pi": q1_pi.mean().item()}

    # ------------------------------------------------------------------------------------ update

    def update(self, batch: Batch) -> dict[str, float]:
        """One critic step; every `policy_delay` steps also an actor step and the target updates."""
        cfg = self.config
        self.total_it += 1
        obs = self.normalizer(batch["observations"])
        next_obs = self.normalizer(batch["next_observations"])

        critic_loss = self.critic_loss(obs, batch, next_obs)
        self.critic_optimizer.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_optimizer.step()
        metrics = {"critic_loss": critic_loss.item()}

        if self.total_it % cfg.policy_delay == 0:
            actor_loss, actor_metrics = self.actor_objective(obs, batch)
            self.actor_optimizer.zero_grad(set_to_none=True)
            actor_loss.backward(inputs=list(self.actor.parameters()))  # no gradients into the critics
            self.actor_optimizer.step()
            soft_update(self.critic_target, self.critic, cfg.tau)
            soft_update(self.actor_target, self.actor, cfg.tau)
            metrics.update(actor_metrics)
        return metrics

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic action π(s) in [-1, 1] for raw (obs_dim,) or (n, obs_dim) observations."""
        return act_numpy(self.actor, self.normalizer, obs)
