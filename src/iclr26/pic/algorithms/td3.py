"""TD3 (Fujimoto, van Hoof & Meger 2018, "Addressing Function Approximation Error in Actor-Critic
Methods", Alg. 1): twin critics with the clipped double-Q target, target policy smoothing, and
delayed actor and target updates.

    y    = r + γ(1 − d)·min_{j=1,2} Q'_j(s', clip(π'(s') + ε, −1, 1)),   ε ~ clip(N(0, σ̃²), −c, c)
    L_Q  = Σ_j E[(Q_j(s, a) − y)²]
    L_π  = −E[Q_1(s, π(s))]                     every `policy_delay` critic updates, with the targets

This is the one TD3 of the package: the online behaviour agent that generates the datasets
(`behavior.py`) trains it from its replay buffer, and TD3+BC (`td3_bc.py`) and PIC-TD3 (`pic.py`)
subclass it and replace only `actor_objective`. The twin critics are one `EnsembleMLP` with 2
members, so each critic pass is one batched matmul per layer. States go through `normalizer`, the
identity until `set_stats` is called (TD3+BC normalizes by the dataset's statistics; the online
agent never does).

Losses reduce over the batch axis (the last) and sum over stacked runs (`AlgorithmBase.stack`), so one
update serves one run and R runs alike; metrics are per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from iclr26.core.validation import check_int, check_interval
from iclr26.pic.algorithms.common import (
    ActorCriticConfig,
    AlgorithmBase,
    Batch,
    StateNormalizer,
    generator_for,
    gradient_step,
    metric,
    state_action,
)
from iclr26.pic.networks import EnsembleMLP, critic_spec, frozen_copy, soft_update, tanh_policy_spec


@dataclass(frozen=True)
class TD3Config(ActorCriticConfig):
    """TD3's hyper-parameters; defaults are the authors' (Fujimoto et al. 2018, Sec. 6 / their code)."""

    policy_noise: float = 0.2
    """std σ̃ of the target policy smoothing noise (in [-1, 1] action units)"""
    noise_clip: float = 0.5
    """the smoothing noise is clipped to ±noise_clip"""
    policy_delay: int = 2
    """d: the actor and the targets are updated every d critic updates"""

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        check_int(f"{name}.policy_delay", self.policy_delay, 1)
        check_interval(f"{name}.policy_noise", self.policy_noise, 0.0)
        check_interval(f"{name}.noise_clip", self.noise_clip, 0.0)


def td3_target(
    critic_target: EnsembleMLP,
    actor_target: EnsembleMLP,
    next_obs: torch.Tensor,
    rewards: torch.Tensor,
    dones: torch.Tensor,
    noise: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """y = r + γ(1 − d)·min_j Q'_j(s', clip(π'(s') + ε, −1, 1)) with clipped noise ε given: (B,) or (R, B)."""
    next_a = (actor_target.single(next_obs) + noise).clamp(-1.0, 1.0)  # target policy smoothing (Eq. 14)
    q_next = critic_target.min_value(state_action(next_obs, next_a))  # clipped double Q (Eq. 10)
    return rewards + gamma * (1.0 - dones) * q_next


class TD3(AlgorithmBase):
    """TD3's update rule over given networks and optimizers; subclasses replace `actor_objective`."""

    config_cls = TD3Config
    config: TD3Config
    MODULES = ("actor", "actor_target", "critic", "critic_target", "normalizer")
    OPTIMIZERS = ("actor_optimizer", "critic_optimizer")

    def __init__(
        self,
        config: TD3Config,
        actor: EnsembleMLP,
        critic: EnsembleMLP,
        actor_optimizer: torch.optim.Optimizer,
        critic_optimizer: torch.optim.Optimizer,
        normalizer: StateNormalizer,
        generator: torch.Generator,
    ) -> None:
        super().__init__(config, normalizer, generator)
        self.actor, self.actor_target = actor, frozen_copy(actor)
        self.critic, self.critic_target = critic, frozen_copy(critic)
        self.actor_optimizer, self.critic_optimizer = actor_optimizer, critic_optimizer

    @classmethod
    def network_specs(cls, obs_dim: int, act_dim: int, cfg: TD3Config) -> dict[str, dict[str, Any]]:
        """A tanh actor and the twin critics (one 2-member ensemble)."""
        return {
            "actor": tanh_policy_spec(obs_dim, act_dim, cfg.hidden),
            "critic": critic_spec(obs_dim, act_dim, cfg.hidden, ensemble=2),
        }

    @classmethod
    def extra_parts(
        cls, cfg: TD3Config, *, seed: int, device: str | torch.device, **_: Any
    ) -> dict[str, Any]:
        """The generator of the smoothing noise, seeded by seed + 1."""
        return {"generator": generator_for(device, seed + 1)}

    # ------------------------------------------------------------------------------------ losses

    def critic_loss(self, obs: torch.Tensor, batch: Batch, next_obs: torch.Tensor) -> torch.Tensor:
        """Σ_j E[(Q_j(s, a) − y)²] over the twin critics (Fujimoto et al. 2018, Sec. 4.2 and 5.3), per run."""
        cfg = self.config
        with torch.no_grad():
            eps = self.randn(batch["actions"].shape, obs.device)
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
        q = self.critic.values(state_action(obs, batch["actions"]))  # (2, B), stacked (R, 2, B)
        return ((q - y.unsqueeze(-2)) ** 2).mean(-1).sum(-1)

    def actor_objective(self, obs: torch.Tensor, batch: Batch) -> tuple[torch.Tensor, dict[str, Any]]:
        """TD3's actor loss −E[Q1(s, π(s))] per run on a normalized-state batch, and its metrics."""
        q1_pi = self.critic.member_value(state_action(obs, self.actor.single(obs)), 0)  # Q1 only
        loss = -q1_pi.mean(-1)
        return loss, {"actor_loss": metric(loss), "q_pi": metric(q1_pi.mean(-1))}

    # ------------------------------------------------------------------------------------ update

    def update(self, batch: Batch) -> dict[str, Any]:
        """One critic step; every `policy_delay` steps also an actor step and the target updates."""
        cfg = self.config
        self.total_it += 1
        obs, next_obs = self.normalized_states(batch)

        critic_loss = self.critic_loss(obs, batch, next_obs)
        gradient_step(self.critic_optimizer, critic_loss.sum())
        metrics: dict[str, Any] = {"critic_loss": metric(critic_loss)}

        if self.total_it % cfg.policy_delay == 0:  # delayed policy updates
            actor_loss, actor_metrics = self.actor_objective(obs, batch)
            # no gradients into the critics
            gradient_step(self.actor_optimizer, actor_loss.sum(), inputs=list(self.actor.parameters()))
            soft_update(self.critic_target, self.critic, cfg.tau)
            soft_update(self.actor_target, self.actor, cfg.tau)
            metrics.update(actor_metrics)
        return metrics
