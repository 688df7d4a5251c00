"""Gymnasium environments and policy evaluation for offline RL: episode returns under fixed seeds.

Policies and datasets speak actions in [-1, 1]; `to_env_action` is the one place where they are
rescaled to an environment's bounds (Pendulum-v1: ±2; the MuJoCo locomotion tasks: ±1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

EXAMPLE_ENV_IDS = ("Pendulum-v1", "HalfCheetah-v5", "Hopper-v5", "Walker2d-v5")


def make_env(env_id: str):
    """`gymnasium.make(env_id)` for a task with a bounded continuous (Box) action space."""
    import gymnasium as gym

    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"env_id must be a non-empty string such as {EXAMPLE_ENV_IDS[0]!r}, got {env_id!r}")
    try:
        env = gym.make(env_id)
    except gym.error.DependencyNotInstalled as err:
        raise ImportError(
            f"environment {env_id!r} needs a missing dependency ({err}); try pip install 'iclr26[rl]'"
        ) from err
    except gym.error.Error as err:
        raise ValueError(
            f"unknown environment id {env_id!r} ({err}); valid ids include {', '.join(EXAMPLE_ENV_IDS)}"
        ) from err
    space = env.action_space
    if not isinstance(space, gym.spaces.Box) or not (
        np.isfinite(space.low).all() and np.isfinite(space.high).all()
    ):
        env.close()
        raise ValueError(
            f"environment {env_id!r} has action space {space}; offline RL here needs a bounded Box "
            f"(e.g. {', '.join(EXAMPLE_ENV_IDS)})"
        )
    return env


def to_env_action(action: np.ndarray, space) -> np.ndarray:
    """Map an action in [-1, 1] (clipped first) affinely onto a Box space's [low, high]."""
    a = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
    if a.shape != space.shape:
        raise ValueError(f"action has shape {a.shape}, the environment expects {space.shape}")
    low, high = space.low.astype(np.float64), space.high.astype(np.float64)
    return (low + 0.5 * (a + 1.0) * (high - low)).astype(space.dtype)


def evaluate(env_id: str, act: Callable[[np.ndarray], np.ndarray], episodes: int, seed: int) -> np.ndarray:
    """Undiscounted returns (episodes,) of `act` (float32 obs -> action in [-1, 1]); episode i uses seed+i."""
    if not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an int >= 1, got {episodes!r}")
    env = make_env(env_id)
    returns = np.zeros(episodes, dtype=np.float64)
    try:
        for i in range(episodes):
            obs, _ = env.reset(seed=seed + i)
            done = False
            while not done:
                action = to_env_action(act(np.asarray(obs, dtype=np.float32)), env.action_space)
                obs, reward, terminated, truncated, _ = env.step(action)
                returns[i] += float(reward)
                done = terminated or truncated
    finally:
        env.close()
    return returns
