"""EPIC: an EDAC-style critic ensemble with the peer-influenced constraint ("Efficient Offline
Reinforcement Learning via Peer-Influenced Constraint", OpenReview bPWCIJyp1K).

Critics (EDAC, An et al. 2021, Sec. 4): N critics trained on the soft TD target with the minimum over
the target ensemble, plus η times the gradient-diversity penalty

    L_Q = Σ_i E[(Q_i(s, a) − y)²] + η·ES,
    y   = r + γ(1 − d)·(min_j Q'_j(s', a') − α_ent·log π(a'|s')),   a' ~ π(·|s')
    ES  = 1/(N − 1) Σ_{i≠j} cos(∇_a Q_i(s, a), ∇_a Q_j(s, a))       (ordered pairs, dataset (s, a))

Actor (the paper's EPIC objective with a SAC tanh-Gaussian policy):

    L_π = β·E[α_ent·log π(ã|s) − min_i Q_i(s, ã)] + δ·E‖tanh(μ(s)) − a*(s)‖,   ã = tanh(μ + σ·ε)
    β   = α / mean|min_i Q_i(s, ã)|   (detached; TD3+BC's normalization, α = 2.5)
    a*  = argmax_{a' ∈ {a} ∪ peers} min_i Q_i(s, a')  (max-min Q over all N current critics, as PIC)

Choices the paper leaves open, made here:
- Q term on the *sampled* action ã (reparameterised), so the entropy term has a gradient as in SAC;
- constraint on the *mean* action tanh(μ(s)), the action the policy takes at evaluation, so that the
  deterministic policy is the one kept near the best peer (the noise is not penalised);
- entropy on, with automatic temperature tuning toward target entropy −act_dim (SAC v2; EDAC does
  the same); β scales the whole SAC objective (Q and entropy) so the entropy bonus keeps the same
  units as in the critic target;
- ES uses cosine similarities (EDAC's released code), not raw inner products;
- ‖·‖ is the Euclidean norm per sample (`squared=True`: the squared norm).

`delta=0, normalize_q=False` is EDAC itself (`EDACConfig`, registered as "edac"): no peers are scored then.
All N critics are one `EnsembleMLP`; candidate scoring is one call on B·(K+1) pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch
import torch.nn.functional as F

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int, check_interval
from iclr26.pic.algorithms.common import (
    ActorCriticConfig,
    AlgorithmBase,
    Batch,
    StateNormalization,
    StateNormalizer,
    copy_generator,
    generator_for,
    gradient_step,
    metric,
    require_peers,
    state_action,
)
from iclr26.pic.algorithms.pic import (
    check_delta,
    check_scoring,
    max_min_q_action,
    peer_distance,
    resolve_score_dtype,
)
from iclr26.pic.networks import EnsembleMLP, critic_spec, frozen_copy, soft_update


@dataclass(frozen=True)
class EPICConfig(StateNormalization, ActorCriticConfig):
    """EPIC hyper-parameters; ensemble defaults follow EDAC on MuJoCo, the constraint the PIC paper."""

    temperature_lr: float = 3e-4
    """Adam learning rate of log α_ent"""
    num_critics: int = 10
    """N, critics in the ensemble (the PIC paper: 5–20; 10 on MuJoCo)"""
    eta: float = 1.0
    """η, weight of the gradient-diversity penalty (0 = SAC-N)"""
    alpha: float = 2.5
    """α in β = α / mean|min Q| (used when normalize_q)"""
    normalize_q: bool = True
    """β = α / mean|min Q|; False: β = 1 (EDAC's objective)"""
    delta: float = 1.0
    """δ, weight of the peer constraint (0 = no constraint: EDAC)"""
    squared: bool = False
    """False: ‖tanh μ − a*‖ as the paper writes it; True: the squared norm"""
    score_dtype: str = "auto"
    """candidate screen, as PIC's: "auto" (bf16 only where native), "bfloat16" or "float32" (exact)"""
    rerank_top: int = 2
    """with bf16: re-score this many top candidates in float32 (0: the bf16 argmax alone)"""
    auto_temperature: bool = True
    """tune α_ent toward target_entropy; False keeps init_temperature"""
    init_temperature: float = 1.0
    """α_ent at the start (EDAC starts at 1)"""
    target_entropy: float | None = None
    """target entropy of the temperature tuning; None: −act_dim"""
    log_std_min: float = -5.0
    """lower clamp of the policy's log-std (EDAC's)"""
    log_std_max: float = 2.0
    """upper clamp of the policy's log-std (EDAC's)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        check_int(f"{name}.num_critics", self.num_critics, 1)
        check_interval(f"{name}.eta", self.eta, 0.0)
        if self.eta > 0 and self.num_critics < 2:
            raise ConfigError(
                f"{name}.eta > 0 needs num_critics >= 2 (pairs of critics), got {self.num_critics}"
            )
        check_delta(self.delta)
        check_interval(f"{name}.temperature_lr", self.temperature_lr, 0.0)
        check_interval(f"{name}.alpha", self.alpha, 0.0, closed=(False, True))
        check_interval(f"{name}.init_temperature", self.init_temperature, 0.0, closed=(False, True))
        check_scoring(self.score_dtype, self.rerank_top)
        if self.log_std_min >= self.log_std_max:
            raise ConfigError(
                f"{name}: log_std_min must be < log_std_max, got {self.log_std_min}, {self.log_std_max}"
            )


@dataclass(frozen=True)
class EDACConfig(EPICConfig):
    """EDAC (An et al. 2021): EPIC's critic ensemble and SAC actor without the peer constraint and
    without the Q normalization of the actor loss."""

    normalize_q: bool = False
    """False: β = 1, EDAC's own actor objective (True: EPIC's β = α / mean|min Q|)"""
    delta: float = 0.0
    """δ; EDAC has no peer constraint and samples no peers, so it must stay 0 (run "epic" for δ > 0)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.delta != 0:
            raise ConfigError(f"EDACConfig.delta must be 0 (EDAC samples no peers), got {self.delta!r}")


def tanh_gaussian_sample(
    mu: torch.Tensor, log_std: torch.Tensor, eps: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """ã = tanh(μ + σ·ε) and log π(ã|s) with the tanh change of variables, for given ε ~ N(0, I):
    (..., B, act) -> (..., B, act), (..., B)."""
    u = mu + log_std.exp() * eps
    log_normal = (-0.5 * eps.pow(2) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
    log_det = (2.0 * (math.log(2.0) - u - F.softplus(-2.0 * u))).sum(-1)  # log(1 − tanh²u), stably
    return torch.tanh(u), log_normal - log_det


def gradient_diversity(grads: torch.Tensor) -> torch.Tensor:
    """EDAC's ES = 1/(N−1) Σ_{i≠j} cos(g_i, g_j), averaged over the batch; grads (N, B, act_dim), or
    (R, N, B, act_dim) for stacked runs (one ES per run)."""
    n = grads.shape[-3]
    unit = grads / (torch.linalg.vector_norm(grads, dim=-1, keepdim=True) + 1e-10)
    cos = torch.einsum("...ibd,...jbd->...bij", unit, unit)  # (..., B, N, N)
    off_diagonal = cos.sum((-2, -1)) - torch.diagonal(cos, dim1=-2, dim2=-1).sum(-1)
    return (off_diagonal / (n - 1)).mean(-1)


def epic_actor_loss(
    q_min_pi: torch.Tensor,
    log_pi: torch.Tensor,
    mean_action: torch.Tensor,
    a_star: torch.Tensor | None,
    *,
    alpha: float,
    delta: float,
    temperature: float | torch.Tensor,
    normalize_q: bool = True,
    squared: bool = False,
) -> torch.Tensor:
    """β·mean(α_ent·log π − min Q) + δ·mean ‖tanh μ − a*‖; q_min_pi, log_pi (B,), actions (B, act_dim),
    or each with a leading run axis R (then `temperature` is (R,)): one loss per run."""
    beta = alpha / q_min_pi.abs().mean(-1).detach() if normalize_q else 1.0
    temperature = torch.as_tensor(temperature, device=log_pi.device).unsqueeze(-1)  # per run
    loss = beta * (temperature * log_pi - q_min_pi).mean(-1)
    if a_star is not None and delta > 0:
        loss = loss + delta * peer_distance(mean_action, a_star, squared).mean(-1)  # EPIC actor loss
    return loss


class EPIC(AlgorithmBase):
    """EPIC (and, with delta=0 and normalize_q=False, EDAC) over given networks and optimizers."""

    config_cls = EPICConfig
    config: EPICConfig
    MODULES = ("actor", "critic", "critic_target", "normalizer")
    OPTIMIZERS = ("actor_optimizer", "critic_optimizer", "temperature_optimizer")
    EXTRA_TENSORS = ("log_temperature",)

    def __init__(
        self,
        config: EPICConfig,
        actor: EnsembleMLP,
        critic: EnsembleMLP,
        actor_optimizer: torch.optim.Optimizer,
        critic_optimizer: torch.optim.Optimizer,
        log_temperature: torch.Tensor,
        temperature_optimizer: torch.optim.Optimizer,
        normalizer: StateNormalizer,
        generator: torch.Generator,
        target_entropy: float,
    ) -> None:
        if critic.ensemble != config.num_critics:
            raise ValueError(
                f"critic has {critic.ensemble} members, config.num_critics is {config.num_critics}"
            )
        device = next(critic.parameters()).device
        config = replace(config, score_dtype=resolve_score_dtype(config.score_dtype, device))
        super().__init__(config, normalizer, generator)
        self.actor = actor
        self.critic, self.critic_target = critic, frozen_copy(critic)
        self.actor_optimizer, self.critic_optimizer = actor_optimizer, critic_optimizer
        self.log_temperature, self.temperature_optimizer = log_temperature, temperature_optimizer
        self.target_entropy = target_entropy

    @classmethod
    def network_specs(cls, obs_dim: int, act_dim: int, cfg: EPICConfig) -> dict[str, dict[str, Any]]:
        """The tanh-Gaussian policy's (μ, log σ) head and the N-critic ensemble."""
        return {
            "actor": dict(in_dim=obs_dim, out_dim=2 * act_dim, hidden=cfg.hidden),  # (μ, log σ)
            "critic": critic_spec(obs_dim, act_dim, cfg.hidden, ensemble=cfg.num_critics),
        }

    @classmethod
    def extra_parts(
        cls, cfg: EPICConfig, *, act_dim: int, seed: int, device: str | torch.device
    ) -> dict[str, Any]:
        """log α_ent with its Adam optimizer, the target entropy, and the generator of the policy's
        samples, seeded by seed + 1."""
        log_temperature = torch.tensor(math.log(cfg.init_temperature), device=device, requires_grad=True)
        return {
            "log_temperature": log_temperature,
            "temperature_optimizer": torch.optim.Adam([log_temperature], lr=cfg.temperature_lr),
            "generator": generator_for(device, seed + 1),
            "target_entropy": float(-act_dim if cfg.target_entropy is None else cfg.target_entropy),
        }

    # ------------------------------------------------------------------------------------ policy

    def policy(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, log σ) of the pre-tanh Gaussian for normalized states: (B, obs) -> (B, act) each."""
        mu, log_std = self.actor.single(obs).chunk(2, dim=-1)
        return mu, log_std.clamp(self.config.log_std_min, self.config.log_std_max)

    @property
    def temperature(self) -> torch.Tensor:
        """α_ent = exp(log α_ent), detached."""
        return self.log_temperature.detach().exp()

    # ------------------------------------------------------------------------------------ losses

    def critic_loss(
        self, obs: torch.Tensor, batch: Batch, next_obs: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(L_Q, its TD part, ES) per run: soft TD onto min of the target ensemble + η·gradient diversity."""
        cfg = self.config
        with torch.no_grad():
            mu, log_std = self.policy(next_obs)
            next_a, next_log_pi = tanh_gaussian_sample(mu, log_std, self.randn(mu.shape, mu.device))
            q_next = self.critic_target.min_value(state_action(next_obs, next_a))
            y = batch["rewards"] + cfg.gamma * (1.0 - batch["dones"]) * (
                q_next - self.temperature.unsqueeze(-1) * next_log_pi
            )
        # one copy of the dataset action per critic, so ∇_a of Σ_i Q_i gives each critic's own gradient
        actions = batch["actions"].unsqueeze(-3)  # (1, B, act_dim), stacked (R, 1, B, act_dim)
        a = actions.expand(*actions.shape[:-3], cfg.num_critics, *actions.shape[-2:])
        a = a.clone().requires_grad_(cfg.eta > 0)
        q = self.critic.values(state_action(obs.unsqueeze(-3), a))  # (N, B), stacked (R, N, B)
        td = ((q - y.unsqueeze(-2)) ** 2).mean(-1).sum(-1)
        if cfg.eta == 0:
            return td, td, torch.zeros_like(td)
        (grads,) = torch.autograd.grad(q.sum(), a, create_graph=True)  # (..., N, B, act_dim)
        diversity = gradient_diversity(grads)
        return td + cfg.eta * diversity, td, diversity  # EDAC critic loss

    # ------------------------------------------------------------------------------------ update

    def update(self, batch: Batch) -> dict[str, Any]:
        """One step of the critic ensemble, the policy (with the peer constraint), α_ent, and the targets."""
        cfg = self.config
        self.total_it += 1
        obs, next_obs = self.normalized_states(batch)

        critic_loss, td, diversity = self.critic_loss(obs, batch, next_obs)
        gradient_step(self.critic_optimizer, critic_loss.sum())

        a_star, best = None, None
        if cfg.delta > 0:
            peers = require_peers(batch, "EPIC")
            a_star, best = max_min_q_action(
                self.critic, obs, batch["actions"], peers, cfg.score_dtype, cfg.rerank_top
            )
        mu, log_std = self.policy(obs)
        a_pi, log_pi = tanh_gaussian_sample(mu, log_std, self.randn(mu.shape, mu.device))
        q_min_pi = self.critic.min_value(state_action(obs, a_pi))  # (B,), stacked (R, B)
        temperature = self.temperature
        actor_loss = epic_actor_loss(
            q_min_pi,
            log_pi,
            torch.tanh(mu),
            a_star,
            alpha=cfg.alpha,
            delta=cfg.delta,
            temperature=temperature,
            normalize_q=cfg.normalize_q,
            squared=cfg.squared,
        )
        # no gradients into the critics
        gradient_step(self.actor_optimizer, actor_loss.sum(), inputs=list(self.actor.parameters()))

        if cfg.auto_temperature:  # SAC's temperature loss −log α_ent·(log π + H̄)
            log_t = self.log_temperature.unsqueeze(-1)
            temperature_loss = -(log_t * (log_pi.detach() + self.target_entropy)).mean(-1)
            gradient_step(self.temperature_optimizer, temperature_loss.sum())

        soft_update(self.critic_target, self.critic, cfg.tau)
        metrics: dict[str, Any] = {
            "critic_loss": metric(critic_loss),
            "td_loss": metric(td),
            "diversity": metric(diversity),
            "actor_loss": metric(actor_loss),
            "q_pi": metric(q_min_pi.mean(-1)),
            "entropy": metric(-log_pi.mean(-1)),
            "temperature": metric(temperature),
        }
        if a_star is not None and best is not None:
            metrics["peer_distance"] = metric(peer_distance(torch.tanh(mu).detach(), a_star).mean(-1))
            metrics["peer_chosen"] = metric((best > 0).float().mean(-1))
        return metrics

    # ------------------------------------------------------------------------------ stacked runs

    @classmethod
    def stack_parts(cls, algos: Sequence[EPIC]) -> dict[str, Any]:
        """Each run's generator and log α_ent (one (R,) tensor with its own Adam), one target entropy."""
        log_temperature = torch.stack([a.log_temperature.detach() for a in algos]).requires_grad_()
        return {
            "log_temperature": log_temperature,
            "temperature_optimizer": torch.optim.Adam([log_temperature], lr=algos[0].config.temperature_lr),
            "generator": [copy_generator(a.generator) for a in algos],
            "target_entropy": algos[0].target_entropy,
        }

    def run_extras_from(self, stacked: EPIC, r: int) -> None:
        """Run r's log α_ent."""
        with torch.no_grad():
            self.log_temperature.copy_(stacked.log_temperature[r])

    def deterministic_action(self, obs: torch.Tensor) -> torch.Tensor:
        """tanh(μ(s)), the mean action, for normalized states: (B, obs_dim) -> (B, act_dim)."""
        return torch.tanh(self.policy(obs)[0])
