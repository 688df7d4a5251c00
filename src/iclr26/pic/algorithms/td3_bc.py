"""TD3+BC (Fujimoto & Gu, "A Minimalist Approach to Offline Reinforcement Learning", NeurIPS 2021).

TD3 (`td3.py`) with a behaviour-cloning term in the actor objective (Eq. 3):

    π = argmax_π E_{(s,a)~D} [ λ·Q(s, π(s)) − (π(s) − a)² ],   λ = α / ((1/N) Σ |Q(s_i, a_i)|)

with λ computed on the minibatch and not differentiated. (π(s) − a)² is the mean over batch and
action dimensions, as in the authors' code (`F.mse_loss`), per run. States are normalized by the dataset's
mean and std (Sec. 5); the statistics live in the algorithm's `normalizer` and its checkpoints.

The critics, target smoothing and delays are TD3's, unchanged. PIC-TD3 (`pic.py`) subclasses this
class and replaces only `actor_objective`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from iclr26.core.validation import check_interval
from iclr26.pic.algorithms.common import Batch, StateNormalization, metric, state_action
from iclr26.pic.algorithms.td3 import TD3, TD3Config


@dataclass(frozen=True)
class TD3BCConfig(StateNormalization, TD3Config):
    """TD3+BC hyper-parameters: TD3's plus α and the state normalization; defaults are the paper's
    (Fujimoto & Gu 2021, Table 3)."""

    alpha: float = 2.5
    """α in λ = α / mean|Q|"""

    def __post_init__(self) -> None:
        super().__post_init__()
        check_interval(f"{type(self).__name__}.alpha", self.alpha, 0.0, closed=(False, True))


def q_normalizer(q_pi: torch.Tensor, alpha: float) -> torch.Tensor:
    """λ = α / mean|Q(s, π(s))| over the batch (last) axis, detached (Fujimoto & Gu 2021, Sec. 5)."""
    return alpha / q_pi.abs().mean(-1).detach()


def td3_bc_actor_loss(q_pi: torch.Tensor, pi: torch.Tensor, a: torch.Tensor, alpha: float) -> torch.Tensor:
    """TD3+BC actor loss −λ·mean Q(s, π(s)) + mean (π(s) − a)²; q_pi (B,), pi and a (B, act_dim), or
    with a leading run axis (one loss per run)."""
    lmbda = q_normalizer(q_pi, alpha)
    return -lmbda * q_pi.mean(-1) + (pi - a).pow(2).mean((-2, -1))  # Eq. (3)


class TD3BC(TD3):
    """TD3 with TD3+BC's actor objective (TD3 plus the BC term)."""

    config_cls = TD3BCConfig
    config: TD3BCConfig

    def actor_objective(self, obs: torch.Tensor, batch: Batch) -> tuple[torch.Tensor, dict[str, Any]]:
        """TD3+BC's actor loss per run on a normalized-state batch, and its metrics."""
        pi = self.actor.single(obs)
        q1_pi = self.critic.member_value(state_action(obs, pi), 0)  # Q1 only, as in TD3
        loss = td3_bc_actor_loss(q1_pi, pi, batch["actions"], self.config.alpha)
        return loss, {"actor_loss": metric(loss), "q_pi": metric(q1_pi.mean(-1))}
