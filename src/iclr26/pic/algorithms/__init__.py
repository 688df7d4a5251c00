"""Offline RL algorithms for PIC: the method (PIC-TD3, EPIC) and its baselines (BC, TD3+BC, IQL, EDAC).

algo = make_algorithm("pic", obs_dim, act_dim, {"delta": 2.0}, seed=0, device="cpu",
                      state_mean=mean, state_std=std)
metrics = algo.update(sampler.sample())
action = algo.act(obs)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from iclr26.pic.algorithms.bc import BC, BCConfig, bc_loss
from iclr26.pic.algorithms.common import (
    Algorithm,
    Batch,
    BatchSampler,
    StateNormalizer,
    config_with_overrides,
    return_range_reward_scale,
    state_stats,
)
from iclr26.pic.algorithms.epic import (
    EPIC,
    EPICConfig,
    epic_actor_loss,
    gradient_diversity,
    tanh_gaussian_sample,
)
from iclr26.pic.algorithms.iql import IQL, IQLConfig, awr_weights, expectile_loss
from iclr26.pic.algorithms.pic import (
    PIC,
    PICConfig,
    best_candidate,
    max_min_q_action,
    peer_candidates,
    peer_distance,
    pic_actor_loss,
)
from iclr26.pic.algorithms.td3_bc import TD3BC, TD3BCConfig, q_normalizer, td3_bc_actor_loss


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registered algorithm: its class, its config class, and defaults that differ from the config's."""

    cls: type
    config_cls: type
    defaults: Mapping[str, Any] = field(default_factory=dict)
    uses_peers: bool = False  # batches must carry "peer_actions"


ALGORITHMS: dict[str, AlgorithmSpec] = {
    "bc": AlgorithmSpec(BC, BCConfig),
    "td3_bc": AlgorithmSpec(TD3BC, TD3BCConfig),
    "iql": AlgorithmSpec(IQL, IQLConfig),
    "pic": AlgorithmSpec(PIC, PICConfig, uses_peers=True),
    "epic": AlgorithmSpec(EPIC, EPICConfig, uses_peers=True),
    "edac": AlgorithmSpec(
        EPIC, EPICConfig, {"delta": 0.0, "normalize_q": False}
    ),  # EDAC = EPIC without peers
}


def make_algorithm(
    name: str,
    obs_dim: int,
    act_dim: int,
    config_overrides: Mapping[str, Any] | None = None,
    seed: int = 0,
    device: str | torch.device = "cpu",
    *,
    state_mean: np.ndarray | None = None,
    state_std: np.ndarray | None = None,
) -> Any:
    """A freshly initialised algorithm by registry name, with config overrides and state statistics."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choices: {sorted(ALGORITHMS)}")
    if obs_dim < 1 or act_dim < 1:
        raise ValueError(f"obs_dim and act_dim must be >= 1, got {obs_dim}, {act_dim}")
    spec = ALGORITHMS[name]
    config = config_with_overrides(spec.config_cls, {**spec.defaults, **dict(config_overrides or {})})
    algo = spec.cls.create(obs_dim, act_dim, config, seed=seed, device=device)
    if (state_mean is None) != (state_std is None):
        raise ValueError("give both state_mean and state_std, or neither")
    if state_mean is not None and config.normalize_states:
        algo.normalizer.set_stats(state_mean, state_std)
    return algo


__all__ = [
    "ALGORITHMS",
    "BC",
    "EPIC",
    "IQL",
    "PIC",
    "TD3BC",
    "Algorithm",
    "AlgorithmSpec",
    "BCConfig",
    "Batch",
    "BatchSampler",
    "EPICConfig",
    "IQLConfig",
    "PICConfig",
    "StateNormalizer",
    "TD3BCConfig",
    "awr_weights",
    "bc_loss",
    "best_candidate",
    "epic_actor_loss",
    "expectile_loss",
    "gradient_diversity",
    "make_algorithm",
    "max_min_q_action",
    "peer_candidates",
    "peer_distance",
    "pic_actor_loss",
    "q_normalizer",
    "return_range_reward_scale",
    "state_stats",
    "tanh_gaussian_sample",
    "td3_bc_actor_loss",
]
