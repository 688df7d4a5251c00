"""The behaviour agent: TD3 or SAC trained online, whose policy snapshots and replay buffer become the
datasets.

The agent (`GenerationConfig.agent`) is the package's TD3 (`algorithms.td3`, Fujimoto et al. 2018,
Alg. 1; exploration: μ(s) + Gaussian noise) or SAC (`algorithms.sac`, Haarnoja et al. 2018, D4RL's
choice; exploration: a sample of its policy). Either trains from its `ReplayBuffer` after `start_steps`
uniform-random actions, and is evaluated deterministically (and its actor snapshotted, with the kind
of policy it is) every `eval_every` env steps. `generation.py` turns the snapshots and the buffer
into D4RL's five datasets.

The run is resumable: `out_dir/checkpoint.pt` holds the agent, its optimizers, the replay buffer,
the RNG states, the step and the snapshots, written at an episode boundary at least every
`checkpoint_every` steps (every episode reset is seeded from (seed, episode index), so an episode
boundary is a complete state).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.seeding import derive_seed
from iclr26.pic.algorithms.sac import SAC, SACConfig
from iclr26.pic.algorithms.td3 import TD3
from iclr26.pic.config import GenerationConfig
from iclr26.pic.evaluation import evaluate, make_env, to_env_action
from iclr26.pic.networks import EnsembleMLP
from iclr26.pic.replay import ReplayBuffer

# 2: the agent's state is the shared TD3's (with its normalizer and config); 1 (before) is upgraded
CHECKPOINT_FORMAT = 2
ProgressCallback = Callable[[int, int, dict[str, Any]], None]
AGENTS: dict[str, type[TD3] | type[SAC]] = {"td3": TD3, "sac": SAC}  # GenerationConfig.agent -> class
# what a snapshot's actor outputs: TD3's tanh μ(s), or SAC's (μ, log σ) of a tanh-Gaussian
POLICY_KINDS = {"td3": "deterministic", "sac": "tanh_gaussian"}


@dataclass
class BehaviorRun:
    """The state of one online run, as checkpointed."""

    step: int = 0
    episode: int = 0
    train_done: bool = False
    train_seconds: float = 0.0
    # step, eval_return, eval_returns, actor, kind (POLICY_KINDS; absent: "deterministic"), normalizer
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    episode_returns: list[float] = field(default_factory=list)


def train_behavior(
    env_id: str, out: Path, cfg: GenerationConfig, on_progress: ProgressCallback | None = None
) -> tuple[BehaviorRun, ReplayBuffer, int, int]:
    """Run (or resume, or reload) the online run; return its state, buffer and (obs_dim, act_dim).

    `on_progress(step, total_steps, info)` is called after every env step (info: phase="train", the
    update's losses, eval_return, episode_return)."""
    env = make_env(env_id)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    agent = AGENTS[cfg.agent].create(
        obs_dim, act_dim, cfg.agent_config(), seed=derive_seed(cfg.seed, 0, "init")
    )
    buffer = ReplayBuffer(obs_dim, act_dim, cfg.total_steps)
    rng = np.random.default_rng(derive_seed(cfg.seed, 0, "train"))
    run = BehaviorRun()
    ckpt = out / "checkpoint.pt"
    if ckpt.is_file():
        state = load_checkpoint(ckpt)
        if state.get("format") not in (1, CHECKPOINT_FORMAT):
            raise ValueError(
                f"{ckpt} has checkpoint format {state.get('format')}, expected {CHECKPOINT_FORMAT}"
            )
        check_same_run(state, env_id, cfg, ckpt)
        if state["format"] == 1:  # the old agent had no state normalizer (the identity) nor config
            state["agent"] = agent.state_dict() | state["agent"]
        agent.load_state_dict(state["agent"])
        buffer.load_state_dict(state["buffer"])
        rng.bit_generator.state = state["rng"]
        run = BehaviorRun(**state["run"])

    def checkpoint() -> None:
        save_checkpoint(
            ckpt,
            {
                "format": CHECKPOINT_FORMAT,
                "env_id": env_id,
                "config": cfg.identity(),
                "agent": agent.state_dict(),
                "buffer": buffer.state_dict(),
                "rng": rng.bit_generator.state,
                "run": asdict(run),
            },
        )

    if run.train_done:
        env.close()
        return run, buffer, obs_dim, act_dim
    eval_seed = derive_seed(cfg.seed, 0, "eval")
    # a checkpoint is a complete state only at an episode boundary: each reset is seeded by episode index
    obs, _ = env.reset(seed=derive_seed(cfg.seed, run.episode, "train-episode"))
    obs = np.asarray(obs, dtype=np.float32)
    episode_return, next_checkpoint = 0.0, (run.step // cfg.checkpoint_every + 1) * cfg.checkpoint_every
    started = time.perf_counter() - run.train_seconds
    try:
        while run.step < cfg.total_steps:
            if run.step < cfg.start_steps:
                action = rng.uniform(-1.0, 1.0, act_dim).astype(np.float32)
            elif isinstance(agent, SAC):  # a ~ π(·|s)
                action = agent.explore(obs, rng)
            else:  # a = clip(μ(s) + ε, −1, 1), ε ~ N(0, σ²)
                noise = rng.normal(0.0, cfg.expl_noise, act_dim)
                action = np.clip(agent.act(obs) + noise, -1.0, 1.0).astype(np.float32)
            next_obs, reward, terminated, truncated, _ = env.step(to_env_action(action, env.action_space))
            next_obs = np.asarray(next_obs, dtype=np.float32)
            buffer.add(obs, action, reward, next_obs, terminated, truncated)
            obs, episode_return = next_obs, episode_return + float(reward)
            run.step += 1
            info: dict[str, Any] = {"phase": "train"}
            if run.step > cfg.start_steps:  # the authors' code trains from t = start_steps on
                info |= agent.update(buffer.sample(rng, cfg.agent_config().batch_size))
            if run.step % cfg.eval_every == 0:
                returns = evaluate(env_id, agent.act, cfg.eval_episodes, eval_seed)
                run.snapshots.append(
                    {
                        "step": run.step,
                        "eval_return": float(returns.mean()),
                        "eval_returns": returns.tolist(),
                        "actor": {k: v.clone() for k, v in agent.actor.state_dict().items()},
                        "kind": POLICY_KINDS[cfg.agent],
                        "normalizer": {k: v.clone() for k, v in agent.normalizer.state_dict().items()},
                    }
                )
                info["eval_return"] = float(returns.mean())
            if terminated or truncated:
                run.episode += 1
                run.episode_returns.append(episode_return)
                info["episode_return"] = episode_return
                obs, _ = env.reset(seed=derive_seed(cfg.seed, run.episode, "train-episode"))
                obs, episode_return = np.asarray(obs, dtype=np.float32), 0.0
                if next_checkpoint <= run.step < cfg.total_steps:
                    run.train_seconds = time.perf_counter() - started
                    checkpoint()
                    next_checkpoint = (run.step // cfg.checkpoint_every + 1) * cfg.checkpoint_every
            if on_progress is not None:
                on_progress(run.step, cfg.total_steps, info)
    finally:
        env.close()
    run.train_done, run.train_seconds = True, time.perf_counter() - started
    checkpoint()
    return run, buffer, obs_dim, act_dim


def _upgrade_identity(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored `GenerationConfig.identity()` in today's names: the behaviour agent's TD3 called its
    `policy_delay` `policy_freq` before the algorithms and the agent shared one TD3, and data made
    before SAC was an option has no `agent` (it was TD3's)."""
    stored = {"agent": "td3"} | stored
    td3 = stored.get("td3")
    if isinstance(td3, dict) and "policy_freq" in td3:
        return stored | {"td3": {("policy_delay" if k == "policy_freq" else k): v for k, v in td3.items()}}
    return stored


def check_same_run(stored: dict[str, Any], env_id: str, cfg: GenerationConfig, where: Path) -> None:
    """Raise unless `stored` (a checkpoint or `generation.json`) was made for `env_id` with `cfg`."""
    if stored.get("env_id") != env_id:
        raise ValueError(
            f"{where} belongs to env {stored.get('env_id')!r}, not {env_id!r}: use another out_dir"
        )
    old, new = _upgrade_identity(stored.get("config", {})), json.loads(json.dumps(cfg.identity()))
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if diff:
        changes = ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in diff)
        raise ValueError(
            f"{where} was made with a different GenerationConfig ({changes}); "
            "use another out_dir, or delete it to start over"
        )


# ------------------------------------------------------------------------------------ policies


def uniform_policy(act_dim: int, seed: int) -> Callable[[np.ndarray], np.ndarray]:
    """Actions uniform in [-1, 1] from their own generator (D4RL's `random` policy)."""
    rng = np.random.default_rng(seed)
    return lambda obs: rng.uniform(-1.0, 1.0, act_dim)


def snapshot_policy(
    snapshot: dict[str, Any],
    obs_dim: int,
    act_dim: int,
    hidden: tuple[int, ...],
    noise: float,
    seed: int,
    *,
    stochastic: bool = False,
) -> Callable[[np.ndarray], np.ndarray]:
    """A snapshotted actor as a policy, with its own generator seeded by `seed`.

    A "deterministic" (TD3) snapshot acts μ(s) plus clipped N(0, noise²) noise. A "tanh_gaussian"
    (SAC) snapshot acts tanh(μ(s)), or with `stochastic` samples tanh(μ + σ·ε) as SAC explores
    (D4RL's behaviour policy); `noise` applies to TD3 snapshots only. States pass through the
    snapshot's normalizer when it has one (both agents' is the identity today)."""
    kind = snapshot.get("kind", "deterministic")
    if kind not in POLICY_KINDS.values():
        raise ValueError(f"unknown snapshot kind {kind!r}; expected one of {sorted(POLICY_KINDS.values())}")
    gaussian = kind == "tanh_gaussian"
    actor = EnsembleMLP(
        obs_dim,
        2 * act_dim if gaussian else act_dim,
        hidden,
        ensemble=1,
        output="none" if gaussian else "tanh",
    )
    actor.load_state_dict(snapshot["actor"])
    norm = snapshot.get("normalizer", {})
    mean, std = (norm["mean"], norm["std"]) if norm else (torch.zeros(obs_dim), torch.ones(obs_dim))
    log_std_range = (SACConfig.log_std_min, SACConfig.log_std_max)
    rng = np.random.default_rng(seed)

    def act(obs: np.ndarray) -> np.ndarray:
        x = torch.as_tensor(np.asarray(obs, dtype=np.float32))
        with torch.no_grad():
            out = actor.single((x.reshape(-1, x.shape[-1]) - mean) / std).numpy()
        if gaussian:
            mu, log_std = np.split(out, 2, axis=-1)
            if stochastic:  # ã = tanh(μ + σ·ε), as `SAC.explore`
                mu = mu + np.exp(np.clip(log_std, *log_std_range)) * rng.standard_normal(mu.shape)
            a = np.tanh(mu)
        else:
            a = out
            if noise > 0:
                a = np.clip(a + rng.normal(0.0, noise, a.shape), -1.0, 1.0)
        return a[0] if x.dim() == 1 else a

    return act


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Use `n` torch CPU threads inside the block, the previous number after it."""
    prev = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(prev)
