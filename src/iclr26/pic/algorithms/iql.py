"""IQL (Kostrikov, Nair & Levine, "Offline Reinforcement Learning with Implicit Q-Learning", ICLR 2022).

    L_V(ψ) = E_{(s,a)~D} L₂^τ( min_i Q'_i(s, a) − V_ψ(s) ),   L₂^τ(u) = |τ − 1(u < 0)|·u²      Eq. (5)
    L_Q(θ) = Σ_i E_{(s,a,s')~D} ( r + γ(1 − d)·V_ψ(s') − Q_i(s, a) )²                        Eq. (6)
    L_π(φ) = E_{(s,a)~D} min(exp(β·(min_i Q'_i(s, a) − V_ψ(s))), 100) · ‖π(s) − a‖²         Eq. (7)

Choice: the policy is deterministic (tanh MLP), so the advantage-weighted log-likelihood of Eq. (7)
becomes an advantage-weighted squared error (CORL's `DeterministicPolicy` option) — faster than the
Gaussian policy and deterministic at evaluation. τ = 0.7, β = 3, weights clipped at 100 (the paper's
MuJoCo settings). The paper's cosine decay of the actor learning rate is not used. States are
normalized by dataset mean/std. Reward scaling (1000 / return range on locomotion) is a config field
(`return_range_scaling`) that the sampler applies (`BatchSampler(reward_scale=...)`). The update
draws no random numbers, so IQL keeps no generator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from iclr26.core.validation import check_interval
from iclr26.pic.algorithms.common import (
    ActorCriticConfig,
    AlgorithmBase,
    Batch,
    StateNormalization,
    StateNormalizer,
    gradient_step,
    metric,
    state_action,
)
from iclr26.pic.networks import EnsembleMLP, critic_spec, frozen_copy, soft_update, tanh_policy_spec


@dataclass(frozen=True)
class IQLConfig(StateNormalization, ActorCriticConfig):
    """IQL hyper-parameters; defaults are the paper's MuJoCo settings (Kostrikov et al. 2022, App. B)."""

    value_lr: float = 3e-4
    """Adam learning rate of V"""
    expectile: float = 0.7
    """τ of the expectile regression for V (Eq. 5)"""
    temperature: float = 3.0
    """β, inverse temperature of the advantage weights (Eq. 7)"""
    max_weight: float = 100.0
    """advantage weights exp(β·A) are clipped at this value"""
    return_range_scaling: bool = True
    """train on rewards scaled by 1000 / (max − min episode return), IQL's locomotion setting (applied
    by whoever builds the sampler: `return_range_reward_scale`)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_interval("IQLConfig.expectile", self.expectile, 0.0, 1.0, closed=(False, False))
        check_interval("IQLConfig.value_lr", self.value_lr, 0.0, closed=(False, True))
        check_interval("IQLConfig.temperature", self.temperature, 0.0)
        check_interval("IQLConfig.max_weight", self.max_weight, 0.0, closed=(False, True))


def expectile_loss(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """Mean of L₂^τ(u) = |τ − 1(u < 0)|·u² over u = Q − V (Kostrikov et al. 2022, Eq. 5), over the
    batch (last) axis."""
    weight = torch.abs(tau - (diff < 0).to(diff.dtype))
    return (weight * diff**2).mean(-1)


def awr_weights(advantage: torch.Tensor, temperature: float, max_weight: float) -> torch.Tensor:
    """exp(β·A) clipped at `max_weight` (Kostrikov et al. 2022, Eq. 7)."""
    return torch.exp(temperature * advantage).clamp(max=max_weight)


class IQL(AlgorithmBase):
    """IQL update rule over given networks and optimizers."""

    config_cls = IQLConfig
    config: IQLConfig
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
    ) -> None:
        super().__init__(config, normalizer)
        self.actor, self.value = actor, value
        self.critic, self.critic_target = critic, frozen_copy(critic)
        self.actor_optimizer = actor_optimizer
        self.critic_optimizer = critic_optimizer
        self.value_optimizer = value_optimizer

    @classmethod
    def network_specs(cls, obs_dim: int, act_dim: int, cfg: IQLConfig) -> dict[str, dict[str, Any]]:
        """A tanh policy, the twin critics (one 2-member ensemble) and V."""
        return {
            "actor": tanh_policy_spec(obs_dim, act_dim, cfg.hidden),
            "critic": critic_spec(obs_dim, act_dim, cfg.hidden, ensemble=2),
            "value": dict(in_dim=obs_dim, out_dim=1, hidden=cfg.hidden),
        }

    def update(self, batch: Batch) -> dict[str, Any]:
        """One step of V (expectile), Q (TD onto V) and π (advantage-weighted regression), then targets."""
        cfg = self.config
        self.total_it += 1
        obs, next_obs = self.normalized_states(batch)
        a = batch["actions"]

        # V: expectile regression onto the target critics' min
        with torch.no_grad():
            q_target = self.critic_target.min_value(state_action(obs, a))  # (B,), stacked (R, B)
        v = self.value.member_value(obs)
        value_loss = expectile_loss(q_target - v, cfg.expectile)  # Eq. (5)
        gradient_step(self.value_optimizer, value_loss.sum())
        advantage = (q_target - v).detach()

        # Q: TD onto V(s'), each critic its own MSE
        with torch.no_grad():
            y = batch["rewards"] + cfg.gamma * (1.0 - batch["dones"]) * self.value.member_value(next_obs)
        q = self.critic.values(state_action(obs, a))  # (2, B), stacked (R, 2, B)
        critic_loss = ((q - y.unsqueeze(-2)) ** 2).mean(-1).sum(-1)  # Eq. (6)
        gradient_step(self.critic_optimizer, critic_loss.sum())

        # π: advantage-weighted regression (deterministic policy: weighted squared error)
        weights = awr_weights(advantage, cfg.temperature, cfg.max_weight)
        pi = self.actor.single(obs)
        actor_loss = (weights * (pi - a).pow(2).sum(-1)).mean(-1)  # Eq. (7)
        gradient_step(self.actor_optimizer, actor_loss.sum())

        soft_update(self.critic_target, self.critic, cfg.tau)
        return {
            "value_loss": metric(value_loss),
            "critic_loss": metric(critic_loss),
            "actor_loss": metric(actor_loss),
            "advantage": metric(advantage.mean(-1)),
        }
