"""SAC (Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications", Alg. 1 with the
automatic temperature of Sec. 5): the online behaviour agent D4RL used for its locomotion datasets.

    y    = r + γ(1 − d)·(min_{j=1,2} Q'_j(s', a') − α·log π(a'|s')),   a' ~ π(·|s')      (Eq. 3, 7)
    L_Q  = Σ_j E[(Q_j(s, a) − y)²]
    L_π  = E[α·log π(ã|s) − min_j Q_j(s, ã)],   ã = tanh(μ(s) + σ(s)·ε)             (Eq. 7, 11)
    L_α  = −E[log α·(log π(ã|s) + H̄)],          H̄ = −dim(A)                          (Eq. 18)

These are exactly EDAC's losses (`epic.py`) with N = 2 critics, no gradient-diversity term (η = 0),
no Q normalization of the actor loss, no peer constraint and no state normalization, so `SAC` is the
package's `EPIC` class under `SACConfig`; what it adds is acting online: `explore` draws the
exploration action from the policy with a numpy generator, the behaviour run's checkpointed stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from iclr26.core.config import ConfigError
from iclr26.pic.algorithms.epic import EPIC, EDACConfig


@dataclass(frozen=True)
class SACConfig(EDACConfig):
    """SAC's hyper-parameters (the authors' MuJoCo defaults: Adam 3e-4, batch 256, two 256-wide
    layers, γ = 0.99, τ = 0.005, α learned toward −dim(A) from α = 1); EDAC's extra terms are off."""

    num_critics: int = 2
    """twin critics with the clipped double-Q target (SAC v2)"""
    eta: float = 0.0
    """no gradient-diversity penalty: must stay 0 (EDAC's term)"""
    normalize_states: bool = False
    """an online agent sees raw states (no dataset to take statistics from)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.eta != 0 or self.normalize_q:
            raise ConfigError(
                f"SACConfig: eta and normalize_q must stay 0/False (EDAC's and EPIC's terms), "
                f"got eta={self.eta!r}, normalize_q={self.normalize_q!r}"
            )


class SAC(EPIC):
    """SAC as an online agent: EPIC's update under `SACConfig`, plus stochastic exploration."""

    config_cls = SACConfig
    config: SACConfig

    def explore(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """ã = tanh(μ(s) + σ(s)·ε), ε ~ N(0, I) from `rng`: one (act_dim,) exploration action."""
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32)).reshape(1, -1)
        with torch.no_grad():
            mu, log_std = self.policy(self.normalizer(x.to(self.normalizer.mean.device)))
        mu_np, std_np = mu[0].cpu().numpy(), log_std[0].exp().cpu().numpy()
        return np.tanh(mu_np + std_np * rng.standard_normal(mu_np.shape)).astype(np.float32)
