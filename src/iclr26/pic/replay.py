"""Transitions in the order they happened, and the datasets cut from them.

`ReplayBuffer` holds every transition of the behaviour agent's online run (D4RL's `medium-replay` is
a slice of it) and samples TD3's minibatches in the batch layout of `algorithms.common` (`dones` = 1
on a true termination, not a time-limit cut). `collect` rolls a fixed policy out into a dataset
(D4RL's `random`, `medium` and `expert`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from iclr26.core.validation import check_int
from iclr26.pic.algorithms.common import Batch
from iclr26.pic.data import OfflineDataset
from iclr26.pic.evaluation import make_env, to_env_action


class ReplayBuffer:
    """All transitions of the online run, in order, stored as D4RL names them."""

    KEYS = ("observations", "actions", "rewards", "next_observations", "terminals", "timeouts")

    def __init__(self, obs_dim: int, act_dim: int, capacity: int) -> None:
        check_int("capacity", capacity, 1)
        self.capacity, self.size = capacity, 0
        self.data = {
            "observations": np.zeros((capacity, obs_dim), np.float32),
            "actions": np.zeros((capacity, act_dim), np.float32),
            "rewards": np.zeros(capacity, np.float32),
            "next_observations": np.zeros((capacity, obs_dim), np.float32),
            "terminals": np.zeros(capacity, bool),
            "timeouts": np.zeros(capacity, bool),
        }

    def add(self, obs, action, reward, next_obs, terminal: bool, timeout: bool) -> None:
        """Append one transition."""
        if self.size >= self.capacity:
            raise RuntimeError(f"replay buffer is full ({self.capacity} transitions)")
        i = self.size
        for key, value in zip(self.KEYS, (obs, action, reward, next_obs, terminal, timeout), strict=True):
            self.data[key][i] = value
        self.size += 1

    def sample(self, rng: np.random.Generator, batch_size: int) -> Batch:
        """A uniform minibatch (with replacement) as float32 tensors, terminals as `dones`."""
        idx = rng.integers(0, self.size, size=batch_size)
        sources = {"observations": "observations", "actions": "actions", "rewards": "rewards",
                   "next_observations": "next_observations", "dones": "terminals"}  # fmt: skip
        return {
            key: torch.from_numpy(self.data[src][idx].astype(np.float32, copy=False))
            for key, src in sources.items()
        }

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The filled part, as tensors (loadable with `torch.load(weights_only=True)`)."""
        return {key: torch.from_numpy(v[: self.size].copy()) for key, v in self.data.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore what `state_dict` saved."""
        n = len(state["rewards"])
        if n > self.capacity:
            raise ValueError(f"checkpointed buffer holds {n} transitions, capacity is {self.capacity}")
        for key in self.KEYS:
            self.data[key][:n] = state[key].numpy()
        self.size = n

    def dataset(self, start: int, stop: int, env_id: str, name: str) -> OfflineDataset:
        """Transitions [start, stop) as a dataset; an open episode at the end is marked cut (timeout)."""
        if not 0 <= start < stop <= self.size:
            raise ValueError(f"need 0 <= start < stop <= size={self.size}, got start={start}, stop={stop}")
        part = {key: v[start:stop].copy() for key, v in self.data.items()}
        part["timeouts"][-1] |= not part["terminals"][-1]
        return OfflineDataset(**part, env_id=env_id, name=name)


def collect(
    env_id: str, act: Callable[[np.ndarray], np.ndarray], size: int, seed: int, name: str
) -> OfflineDataset:
    """`size` transitions of policy `act` (obs -> action in [-1, 1]); episode i is reset with seed+i."""
    check_int("size", size, 1)
    env = make_env(env_id)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    buf = ReplayBuffer(obs_dim, act_dim, size)
    episode = 0
    try:
        obs, _ = env.reset(seed=seed)
        while buf.size < size:
            obs = np.asarray(obs, dtype=np.float32)
            a = np.asarray(act(obs), dtype=np.float32)
            next_obs, reward, terminated, truncated, _ = env.step(to_env_action(a, env.action_space))
            buf.add(obs, a, reward, next_obs, terminated, truncated)
            obs = next_obs
            if terminated or truncated:
                episode += 1
                obs, _ = env.reset(seed=seed + episode)
    finally:
        env.close()
    return buf.dataset(0, size, env_id, name)
