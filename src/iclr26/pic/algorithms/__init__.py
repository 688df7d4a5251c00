"""Offline RL algorithms for PIC: the method (PIC-TD3, EPIC) and its baselines (BC, TD3+BC, IQL, EDAC),
and the online behaviour agents that generate the datasets: TD3 (TD3+BC and PIC-TD3 extend it) and SAC
(EDAC's update with two critics, as D4RL used).

algo = make_algorithm("pic", obs_dim, act_dim, {"delta": 2.0}, seed=0, device="cpu",
                      state_mean=mean, state_std=std)          # or a PICConfig(...) instead of the dict
metrics = algo.update(sampler.sample())
action = algo.act(obs)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int
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
    EDACConfig,
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
from iclr26.pic.algorithms.sac import SAC, SACConfig
from iclr26.pic.algorithms.td3 import TD3, TD3Config, td3_target
from iclr26.pic.algorithms.td3_bc import TD3BC, TD3BCConfig, q_normalizer, td3_bc_actor_loss

AlgorithmConfig = BCConfig | TD3Config | IQLConfig | EPICConfig  # TD3+BC, PIC, EDAC: subclasses


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registered offline algorithm: its class (with `create`) and its config class."""

    cls: type[BC | TD3 | IQL | EPIC]
    config_cls: type
    uses_peers: bool = False  # batches must carry "peer_actions"


ALGORITHMS: dict[str, AlgorithmSpec] = {
    "bc": AlgorithmSpec(BC, BCConfig),
    "td3_bc": AlgorithmSpec(TD3BC, TD3BCConfig),
    "iql": AlgorithmSpec(IQL, IQLConfig),
    "pic": AlgorithmSpec(PIC, PICConfig, uses_peers=True),
    "epic": AlgorithmSpec(EPIC, EPICConfig, uses_peers=True),
    "edac": AlgorithmSpec(EPIC, EDACConfig),  # EDAC = EPIC without peers
}


def make_algorithm(
    name: str,
    obs_dim: int,
    act_dim: int,
    config: AlgorithmConfig | Mapping[str, Any] | None = None,
    seed: int = 0,
    device: str | torch.device = "cpu",
    *,
    state_mean: np.ndarray | None = None,
    state_std: np.ndarray | None = None,
) -> Algorithm:
    """A freshly initialised algorithm by registry name, with state statistics. `config` is the
    algorithm's config instance, or a mapping of changes to its defaults (None: the defaults)."""
    if name not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {name!r}; choices: {sorted(ALGORITHMS)}")
    check_int("obs_dim", obs_dim, 1)
    check_int("act_dim", act_dim, 1)
    spec = ALGORITHMS[name]
    if config is None or isinstance(config, Mapping):
        config = config_with_overrides(spec.config_cls, config)
    elif not isinstance(config, spec.config_cls):
        raise TypeError(f"{name!r} needs a {spec.config_cls.__name__}, got {type(config).__name__}")
    if (state_mean is None) != (state_std is None):
        raise ValueError("give both state_mean and state_std, or neither")
    algo: Algorithm = spec.cls.create(obs_dim, act_dim, config, seed=seed, device=device)
    if state_mean is not None and getattr(config, "normalize_states", False):
        algo.normalizer.set_stats(state_mean, state_std)
    return algo


__all__ = [
    "ALGORITHMS",
    "BC",
    "EPIC",
    "IQL",
    "PIC",
    "SAC",
    "TD3",
    "TD3BC",
    "Algorithm",
    "AlgorithmConfig",
    "AlgorithmSpec",
    "BCConfig",
    "Batch",
    "BatchSampler",
    "EDACConfig",
    "EPICConfig",
    "IQLConfig",
    "PICConfig",
    "SACConfig",
    "StateNormalizer",
    "TD3BCConfig",
    "TD3Config",
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
    "td3_target",
]
