"""Behaviour policies and D4RL-style datasets generated locally with an online TD3 agent.

TD3 (Fujimoto, van Hoof & Meger 2018, "Addressing Function Approximation Error in Actor-Critic
Methods", Alg. 1): twin critics with the clipped double-Q target, target policy smoothing, and
delayed actor/target updates. D4RL (Fu et al. 2020) built its locomotion datasets from one online
run: `random` (a uniform-random policy), `expert` (the final/best policy), `medium` (a policy at
about a third of expert performance), `medium-replay` (the replay buffer until that policy) and
`medium-expert` (medium ∪ expert). D4RL used SAC; we use TD3 (cheaper on CPU), which is a
deviation recorded in every manifest.

Generation is resumable: `out_dir/checkpoint.pt` holds the agent, optimizers, replay buffer, RNG
states, step and policy snapshots, written at an episode boundary at least every
`checkpoint_every` steps (every episode reset is seeded from (seed, episode index), so an episode
boundary is a complete state); finished datasets are kept and never recomputed.
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from iclr26.core.checkpoint import save_checkpoint, write_text_atomic
from iclr26.pic.algorithms.td3_bc import td3_target
from iclr26.pic.data import (
    OfflineDataset,
    d4rl_reference,
    jsonable,
    library_versions,
    load_dataset,
    manifest_path,
    save_dataset,
)
from iclr26.pic.evaluation import evaluate, make_env, to_env_action
from iclr26.pic.networks import EnsembleMLP, soft_update

DATASET_NAMES = ("random", "medium", "medium-replay", "expert", "medium-expert")
CHECKPOINT_FORMAT = 1
ProgressCallback = Callable[[int, int, dict[str, Any]], None]


# ---------------------------------------------------------------------------------------- configs


@dataclass(frozen=True)
class TD3Config:
    """TD3's hyper-parameters; defaults are the authors' (Fujimoto et al. 2018, Sec. 6 / their code)."""

    hidden: tuple[int, ...] = (256, 256)  # actor and critic MLP widths
    actor_lr: float = 3e-4  # Adam
    critic_lr: float = 3e-4  # Adam
    batch_size: int = 256
    gamma: float = 0.99  # discount γ
    tau: float = 0.005  # Polyak rate τ of the target networks
    policy_noise: float = 0.2  # target policy smoothing σ̃ (in [-1, 1] action units)
    noise_clip: float = 0.5  # smoothing noise clipped to ±c
    policy_freq: int = 2  # d: actor and targets updated every d critic updates

    def __post_init__(self) -> None:
        if not self.hidden or any(int(h) < 1 for h in self.hidden):
            raise ValueError(f"TD3Config.hidden must be non-empty positive widths, got {self.hidden!r}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))
        for name in ("actor_lr", "critic_lr", "policy_noise", "noise_clip"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"TD3Config.{name} must be >= 0, got {getattr(self, name)!r}")
        if not 0 < self.gamma <= 1:
            raise ValueError(f"TD3Config.gamma must lie in (0, 1], got {self.gamma!r}")
        if not 0 < self.tau <= 1:
            raise ValueError(f"TD3Config.tau must lie in (0, 1], got {self.tau!r}")
        for name in ("batch_size", "policy_freq"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"TD3Config.{name} must be >= 1, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class GenerationConfig:
    """One online TD3 run and the five D4RL-style datasets cut from it (defaults: a Pendulum-v1 demo)."""

    seed: int = 0
    total_steps: int = 15_000  # online env steps of TD3
    start_steps: int = 1_000  # uniform-random actions first, no updates (TD3: 10^4 on MuJoCo)
    expl_noise: float = 0.1  # N(0, σ²) exploration noise on TD3's action while training
    eval_every: int = 1_000  # evaluate and snapshot the policy every this many env steps
    eval_episodes: int = 10  # episodes per evaluation, and for the reference returns
    dataset_size: int = 100_000  # transitions per dataset (medium-replay: at most this many)
    expert_noise: float = 0.1  # N(0, σ²) action noise while collecting `expert` (D4RL's was stochastic SAC)
    medium_noise: float = 0.1  # N(0, σ²) action noise while collecting `medium`
    medium_fraction: float = 1 / 3  # medium = first snapshot ≥ random + fraction·(best − random)
    checkpoint_every: int = 5_000  # env steps between checkpoints (taken at the next episode end)
    num_threads: int = 1  # torch CPU threads while generating (1 was fastest on 2 cores)
    td3: TD3Config = field(default_factory=TD3Config)

    def __post_init__(self) -> None:
        if isinstance(self.td3, dict):  # from JSON / --set
            object.__setattr__(self, "td3", TD3Config(**self.td3))
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"GenerationConfig.seed must be a non-negative int, got {self.seed!r}")
        for name in (
            "total_steps",
            "eval_every",
            "eval_episodes",
            "dataset_size",
            "checkpoint_every",
            "num_threads",
        ):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"GenerationConfig.{name} must be an int >= 1, got {getattr(self, name)!r}")
        if not isinstance(self.start_steps, int) or not 0 <= self.start_steps < self.total_steps:
            raise ValueError(
                f"GenerationConfig.start_steps must lie in [0, total_steps={self.total_steps}), "
                f"got {self.start_steps!r}"
            )
        if self.eval_every > self.total_steps:
            raise ValueError(
                f"GenerationConfig.eval_every={self.eval_every} exceeds total_steps={self.total_steps}: "
                "no policy snapshot would be taken"
            )
        for name in ("expl_noise", "expert_noise", "medium_noise"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"GenerationConfig.{name} must be >= 0, got {getattr(self, name)!r}")
        if not 0 < self.medium_fraction < 1:
            raise ValueError(
                f"GenerationConfig.medium_fraction must lie in (0, 1), got {self.medium_fraction!r}"
            )

    def identity(self) -> dict[str, Any]:
        """The fields that determine the generated data (not how often it checkpoints or how many threads)."""
        return {
            k: v for k, v in jsonable(asdict(self)).items() if k not in ("checkpoint_every", "num_threads")
        }


# Named sizes. `smoke`: seconds (tests). `pendulum`: the demo (the defaults). `mujoco`: HalfCheetah/
# Hopper/Walker2d-v5 at the scale that fits hours of CPU (D4RL used 1M SAC steps and 1M transitions).
GENERATION_PRESETS: dict[str, GenerationConfig] = {
    "smoke": GenerationConfig(
        total_steps=600,
        start_steps=100,
        eval_every=200,
        eval_episodes=2,
        dataset_size=300,
        checkpoint_every=200,
        td3=TD3Config(hidden=(32, 32), batch_size=32),
    ),
    "pendulum": GenerationConfig(),
    "mujoco": GenerationConfig(
        total_steps=300_000,
        start_steps=25_000,
        eval_every=5_000,
        eval_episodes=10,
        dataset_size=200_000,
        checkpoint_every=10_000,
    ),
}


# ------------------------------------------------------------------------------------------ TD3


class TD3:
    """TD3's update rule over given networks and optimizers; `update(batch)` returns scalar losses.

    actor: (B, obs_dim) -> (1, B, act_dim) in (-1, 1); critic: (B, obs_dim + act_dim) -> (2, B, 1),
    the twin critics Q1, Q2 as one batched ensemble.
    """

    def __init__(
        self,
        actor: nn.Module,
        critic: nn.Module,
        actor_optimizer: torch.optim.Optimizer,
        critic_optimizer: torch.optim.Optimizer,
        cfg: TD3Config,
        generator: torch.Generator,
    ) -> None:
        self.actor, self.critic = actor, critic
        self.actor_target = copy.deepcopy(actor).requires_grad_(False)
        self.critic_target = copy.deepcopy(critic).requires_grad_(False)
        self.actor_optimizer, self.critic_optimizer = actor_optimizer, critic_optimizer
        self.cfg, self.generator = cfg, generator
        self.total_it = 0

    @classmethod
    def build(cls, obs_dim: int, act_dim: int, cfg: TD3Config, seed: int) -> TD3:
        """Fresh actor/critic MLPs (initialised from `seed`, global RNG untouched) and Adam optimizers."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            actor = EnsembleMLP(obs_dim, act_dim, cfg.hidden, ensemble=1, output="tanh")
            critic = EnsembleMLP(obs_dim + act_dim, 1, cfg.hidden, ensemble=2)
        generator = torch.Generator().manual_seed(seed + 1)
        return cls(
            actor,
            critic,
            torch.optim.Adam(actor.parameters(), lr=cfg.actor_lr),
            torch.optim.Adam(critic.parameters(), lr=cfg.critic_lr),
            cfg,
            generator,
        )

    @torch.no_grad()
    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic action μ(s) in [-1, 1] for one observation (obs_dim,) or a batch (B, obs_dim)."""
        return _actor_act(self.actor, obs)

    def update(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        """One critic step, and every `policy_freq` steps one actor step and target update (Alg. 1)."""
        cfg = self.cfg
        s, a, r = batch["observations"], batch["actions"], batch["rewards"]
        s2, done = batch["next_observations"], batch["terminals"]
        self.total_it += 1
        with torch.no_grad():
            # target policy smoothing (Eq. 14) and clipped double Q-learning (Eq. 10), as TD3+BC's critics
            eps = torch.randn(a.shape, generator=self.generator, dtype=a.dtype) * cfg.policy_noise
            noise = eps.clamp(-cfg.noise_clip, cfg.noise_clip)
            y = td3_target(self.critic_target, self.actor_target, s2, r, done, noise, cfg.gamma)
        q = self.critic(torch.cat([s, a], dim=-1)).squeeze(-1)  # (2, B)
        critic_loss = ((q - y) ** 2).mean(dim=1).sum()  # MSE of Q1 plus MSE of Q2
        self.critic_optimizer.zero_grad(set_to_none=True)
        critic_loss.backward()
        self.critic_optimizer.step()
        out = {"critic_loss": critic_loss.item(), "q": q.detach().mean().item()}
        if self.total_it % cfg.policy_freq == 0:  # delayed policy updates
            actor_loss = -self.critic(torch.cat([s, self.actor(s)[0]], dim=-1))[0].mean()  # −Q1(s, μ(s))
            self.actor_optimizer.zero_grad(set_to_none=True)
            actor_loss.backward(inputs=list(self.actor.parameters()))  # no gradients into the critics
            self.actor_optimizer.step()
            soft_update(self.critic_target, self.critic, cfg.tau)
            soft_update(self.actor_target, self.actor, cfg.tau)
            out["actor_loss"] = actor_loss.item()
        return out

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue training bit for bit: networks, targets, optimizers, counters."""
        return {
            "actor": self.actor.state_dict(),
            "critic": self.critic.state_dict(),
            "actor_target": self.actor_target.state_dict(),
            "critic_target": self.critic_target.state_dict(),
            "actor_optimizer": self.actor_optimizer.state_dict(),
            "critic_optimizer": self.critic_optimizer.state_dict(),
            "total_it": self.total_it,
            "generator": self.generator.get_state(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` saved."""
        for key in (
            "actor",
            "critic",
            "actor_target",
            "critic_target",
            "actor_optimizer",
            "critic_optimizer",
        ):
            getattr(self, key).load_state_dict(state[key])
        self.total_it = int(state["total_it"])
        self.generator.set_state(state["generator"])


def _actor_act(actor: nn.Module, obs: np.ndarray) -> np.ndarray:
    x = torch.as_tensor(np.asarray(obs, dtype=np.float32))
    with torch.no_grad():
        out = actor(x.reshape(1, -1) if x.dim() == 1 else x)[0]
    return out[0].numpy() if x.dim() == 1 else out.numpy()


# -------------------------------------------------------------------------------- replay buffer


class ReplayBuffer:
    """All transitions of the online run, in order (D4RL's medium-replay is a prefix of it)."""

    KEYS = ("observations", "actions", "rewards", "next_observations", "terminals", "timeouts")

    def __init__(self, obs_dim: int, act_dim: int, capacity: int) -> None:
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

    def sample(self, rng: np.random.Generator, batch_size: int) -> dict[str, torch.Tensor]:
        """A uniform minibatch (with replacement) as float32 tensors."""
        idx = rng.integers(0, self.size, size=batch_size)
        return {
            key: torch.from_numpy(self.data[key][idx].astype(np.float32, copy=False))
            for key in ("observations", "actions", "rewards", "next_observations", "terminals")
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
        part = {key: v[start:stop].copy() for key, v in self.data.items()}
        part["timeouts"][-1] |= not part["terminals"][-1]
        return OfflineDataset(**part, env_id=env_id, name=name)


# -------------------------------------------------------------------------------------- helpers


def _derive_seed(seed: int, stream: str, index: int = 0) -> int:
    """A 31-bit seed for one named stream of randomness of run `seed` (independent across streams)."""
    words = [seed, index, *stream.encode()]
    return int(np.random.SeedSequence(words).generate_state(1, dtype=np.uint32)[0] >> 1)


@contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    prev = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(prev)


def _uniform_policy(act_dim: int, seed: int) -> Callable[[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    return lambda obs: rng.uniform(-1.0, 1.0, act_dim)


def _snapshot_policy(
    actor_state: dict[str, torch.Tensor], obs_dim: int, act_dim: int, cfg: TD3Config, noise: float, seed: int
) -> Callable[[np.ndarray], np.ndarray]:
    actor = EnsembleMLP(obs_dim, act_dim, cfg.hidden, ensemble=1, output="tanh")
    actor.load_state_dict(actor_state)
    rng = np.random.default_rng(seed)

    def act(obs: np.ndarray) -> np.ndarray:
        a = _actor_act(actor, obs)
        if noise > 0:
            a = np.clip(a + rng.normal(0.0, noise, a.shape), -1.0, 1.0)
        return a

    return act


def collect(
    env_id: str, act: Callable[[np.ndarray], np.ndarray], size: int, seed: int, name: str
) -> OfflineDataset:
    """`size` transitions of policy `act` (obs -> action in [-1, 1]); episode i is reset with seed+i."""
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


def _check_same_run(stored: dict[str, Any], env_id: str, cfg: GenerationConfig, where: Path) -> None:
    if stored.get("env_id") != env_id:
        raise ValueError(
            f"{where} belongs to env {stored.get('env_id')!r}, not {env_id!r}: use another out_dir"
        )
    old, new = stored.get("config", {}), json.loads(json.dumps(cfg.identity()))
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if diff:
        changes = ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in diff)
        raise ValueError(
            f"{where} was made with a different GenerationConfig ({changes}); "
            "use another out_dir, or delete it to start over"
        )


# ----------------------------------------------------------------------------------- the recipe


@dataclass
class _Run:
    """The state of one online run, as checkpointed."""

    step: int = 0
    episode: int = 0
    train_done: bool = False
    train_seconds: float = 0.0
    snapshots: list[dict[str, Any]] = field(default_factory=list)  # step, eval_return, eval_returns, actor
    episode_returns: list[float] = field(default_factory=list)


def _train(
    env_id: str, out: Path, cfg: GenerationConfig, on_progress: ProgressCallback | None
) -> tuple[_Run, ReplayBuffer, int, int]:
    """Run (or resume, or reload) the online TD3 run; return its state, buffer and (obs_dim, act_dim)."""
    env = make_env(env_id)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    agent = TD3.build(obs_dim, act_dim, cfg.td3, seed=_derive_seed(cfg.seed, "init"))
    buffer = ReplayBuffer(obs_dim, act_dim, cfg.total_steps)
    rng = np.random.default_rng(_derive_seed(cfg.seed, "train"))
    run = _Run()
    ckpt = out / "checkpoint.pt"
    if ckpt.is_file():
        state = torch.load(ckpt, weights_only=True)
        if state.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(
                f"{ckpt} has checkpoint format {state.get('format')}, expected {CHECKPOINT_FORMAT}"
            )
        _check_same_run(state, env_id, cfg, ckpt)
        agent.load_state_dict(state["agent"])
        buffer.load_state_dict(state["buffer"])
        rng.bit_generator.state = state["rng"]
        run = _Run(**state["run"])

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
    eval_seed = _derive_seed(cfg.seed, "eval")
    # a checkpoint is a complete state only at an episode boundary: each reset is seeded by episode index
    obs, _ = env.reset(seed=_derive_seed(cfg.seed, "train-episode", run.episode))
    obs = np.asarray(obs, dtype=np.float32)
    episode_return, next_checkpoint = 0.0, (run.step // cfg.checkpoint_every + 1) * cfg.checkpoint_every
    started = time.perf_counter() - run.train_seconds
    try:
        while run.step < cfg.total_steps:
            if run.step < cfg.start_steps:
                action = rng.uniform(-1.0, 1.0, act_dim).astype(np.float32)
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
                info |= agent.update(buffer.sample(rng, cfg.td3.batch_size))
            if run.step % cfg.eval_every == 0:
                returns = evaluate(env_id, agent.act, cfg.eval_episodes, eval_seed)
                actor_state = {k: v.clone() for k, v in agent.actor.state_dict().items()}
                run.snapshots.append(
                    {
                        "step": run.step,
                        "eval_return": float(returns.mean()),
                        "eval_returns": returns.tolist(),
                        "actor": actor_state,
                    }
                )
                info["eval_return"] = float(returns.mean())
            if terminated or truncated:
                run.episode += 1
                run.episode_returns.append(episode_return)
                info["episode_return"] = episode_return
                obs, _ = env.reset(seed=_derive_seed(cfg.seed, "train-episode", run.episode))
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


def generate_datasets(
    env_id: str,
    out_dir: str | os.PathLike,
    cfg: GenerationConfig | None = None,
    on_progress: ProgressCallback | None = None,
) -> dict[str, Path]:
    """D4RL's recipe on `env_id`: train TD3 online, then write the five datasets of `DATASET_NAMES`.

    Returns the `.npz` path of each dataset (a JSON manifest lies beside each). Resumes from
    `out_dir/checkpoint.pt`; returns at once when every dataset and `out_dir/generation.json` exist.
    `on_progress(step, total_steps, info)` is called after every training step (info: phase, losses,
    eval_return, episode_return) and after each dataset is written (info: phase="dataset", name, path).
    """
    cfg = GenerationConfig() if cfg is None else cfg
    if not isinstance(cfg, GenerationConfig):
        raise TypeError(f"cfg must be a GenerationConfig, got {type(cfg).__name__}")
    out = Path(out_dir)
    paths = {name: out / f"{name}.npz" for name in DATASET_NAMES}
    summary_path = out / "generation.json"
    if summary_path.is_file() and all(p.is_file() and manifest_path(p).is_file() for p in paths.values()):
        _check_same_run(json.loads(summary_path.read_text()), env_id, cfg, summary_path)
        return paths
    make_env(env_id).close()  # fail early on an unknown env id, before creating out_dir
    out.mkdir(parents=True, exist_ok=True)
    with _torch_threads(cfg.num_threads):
        run, buffer, obs_dim, act_dim = _train(env_id, out, cfg, on_progress)
        summary = _write_datasets(env_id, cfg, run, buffer, obs_dim, act_dim, paths, on_progress)
    write_text_atomic(summary_path, json.dumps(summary, indent=2))  # last: its presence means complete
    return paths


def _write_datasets(
    env_id: str,
    cfg: GenerationConfig,
    run: _Run,
    buffer: ReplayBuffer,
    obs_dim: int,
    act_dim: int,
    paths: dict[str, Path],
    on_progress: ProgressCallback | None,
) -> dict[str, Any]:
    """Choose the behaviour policies from the snapshots and write each missing dataset."""
    snaps = run.snapshots
    best = max(range(len(snaps)), key=lambda i: (snaps[i]["eval_return"], -i))
    # reference returns on held-out seeds (not the ones the snapshots were selected on)
    ref_seed = _derive_seed(cfg.seed, "reference")
    random_returns = evaluate(
        env_id,
        _uniform_policy(act_dim, _derive_seed(cfg.seed, "reference-random")),
        cfg.eval_episodes,
        ref_seed,
    )
    best_policy = _snapshot_policy(snaps[best]["actor"], obs_dim, act_dim, cfg.td3, 0.0, 0)
    expert_returns = evaluate(env_id, best_policy, cfg.eval_episodes, ref_seed)
    random_return, expert_return = float(random_returns.mean()), float(expert_returns.mean())
    # D4RL's medium: "a policy trained to ~1/3 of expert performance" — the first snapshot whose
    # eval return reaches random + fraction·(best − random), best = the best snapshot's eval return
    threshold = random_return + cfg.medium_fraction * (snaps[best]["eval_return"] - random_return)
    reached = [i for i, s in enumerate(snaps) if s["eval_return"] >= threshold]
    if reached:
        medium, medium_rule = reached[0], f"first snapshot with eval return >= {threshold:.4g}"
    else:  # the run never beat the random policy: no snapshot is "a third of the way"
        medium = min(range(len(snaps)), key=lambda i: abs(snaps[i]["eval_return"] - threshold))
        medium_rule = f"no snapshot reached {threshold:.4g} (best <= random); took the closest"

    def behaviour(i: int, noise: float, role: str) -> dict[str, Any]:
        return {
            "policy": f"TD3 snapshot ({role}) + N(0, {noise}²) action noise, clipped to [-1, 1]",
            "step": snaps[i]["step"],
            "eval_return": snaps[i]["eval_return"],
            "eval_episodes": cfg.eval_episodes,
            "action_noise": noise,
        }

    replay_stop = snaps[medium]["step"]
    replay_start = max(0, replay_stop - cfg.dataset_size)
    common = {
        "generator": "iclr26.pic.behavior.generate_datasets (online TD3; D4RL used SAC)",
        "reference_returns": {
            "random": random_return,
            "expert": expert_return,
            "episodes": cfg.eval_episodes,
            "random_policy": "uniform in [-1, 1]",
            "expert_policy": f"best TD3 snapshot (step {snaps[best]['step']}), no noise, held-out seeds",
            "d4rl": d4rl_reference(env_id),
        },
        "config": cfg.identity(),
    }
    medium_info = behaviour(medium, cfg.medium_noise, "medium") | {
        "rule": medium_rule,
        "threshold": threshold,
    }
    specs: dict[str, dict[str, Any]] = {
        "random": {
            "behavior": {"policy": "uniform random in [-1, 1]", "step": 0, "eval_return": random_return}
        },
        "medium": {"behavior": medium_info},
        "medium-replay": {
            "behavior": {
                "policy": "TD3's online replay buffer (random warm-up, exploration noise) to medium",
                "step": replay_stop,
                "eval_return": snaps[medium]["eval_return"],
                "transitions": [replay_start, replay_stop],
                "rule": "all of it"
                if replay_start == 0
                else f"the {cfg.dataset_size} most recent (dataset_size)",
            }
        },
        "expert": {"behavior": behaviour(best, cfg.expert_noise, "best eval return")},
        "medium-expert": {
            "behavior": {
                "parts": ["medium", "expert"],
                "medium": medium_info,
                "expert": behaviour(best, cfg.expert_noise, "best eval return"),
            }
        },
    }

    def build(name: str) -> OfflineDataset:
        full = f"{env_id}/{name}"
        if name == "random":
            act = _uniform_policy(act_dim, _derive_seed(cfg.seed, "collect-random"))
            return collect(
                env_id, act, cfg.dataset_size, _derive_seed(cfg.seed, "collect-random-episode"), full
            )
        if name in ("medium", "expert"):
            i, noise = (medium, cfg.medium_noise) if name == "medium" else (best, cfg.expert_noise)
            act = _snapshot_policy(
                snaps[i]["actor"], obs_dim, act_dim, cfg.td3, noise, _derive_seed(cfg.seed, f"collect-{name}")
            )
            return collect(
                env_id, act, cfg.dataset_size, _derive_seed(cfg.seed, f"collect-{name}-episode"), full
            )
        if name == "medium-replay":
            return buffer.dataset(replay_start, replay_stop, env_id, full)
        return load_dataset(paths["medium"]).concat(load_dataset(paths["expert"]), full)

    datasets: dict[str, Any] = {}
    for name in DATASET_NAMES:
        path = paths[name]
        if not (path.is_file() and manifest_path(path).is_file()):
            ds = build(name)
            returns = ds.episode_returns()
            stats = {"mean_episode_return": float(returns.mean())}
            save_dataset(ds, path, seed=cfg.seed, manifest=common | specs[name] | {"dataset": name} | stats)
            if on_progress is not None:
                on_progress(
                    cfg.total_steps, cfg.total_steps, {"phase": "dataset", "name": name, "path": str(path)}
                )
        datasets[name] = path.name
    return {
        "env_id": env_id,
        "config": cfg.identity(),
        "versions": library_versions(),
        "train_seconds": run.train_seconds,
        "snapshots": [{"step": s["step"], "eval_return": s["eval_return"]} for s in snaps],
        "best_snapshot": best,
        "medium_snapshot": medium,
        "medium_rule": medium_rule,
        "reference_returns": common["reference_returns"],
        "training_episode_returns": run.episode_returns,
        "datasets": datasets,
    }


def preset(name: str, **overrides: Any) -> GenerationConfig:
    """A named `GenerationConfig` ("smoke", "pendulum", "mujoco") with fields replaced by `overrides`."""
    if name not in GENERATION_PRESETS:
        raise ValueError(f"unknown generation preset {name!r}; choose one of {sorted(GENERATION_PRESETS)}")
    valid = {f.name for f in fields(GenerationConfig)}
    unknown = sorted(set(overrides) - valid)
    if unknown:
        raise ValueError(f"unknown GenerationConfig fields {unknown}; valid: {sorted(valid)}")
    return replace(GENERATION_PRESETS[name], **overrides)


__all__ = [
    "DATASET_NAMES",
    "GENERATION_PRESETS",
    "TD3",
    "GenerationConfig",
    "ReplayBuffer",
    "TD3Config",
    "collect",
    "generate_datasets",
    "preset",
]
