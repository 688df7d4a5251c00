"""Shared pieces of the offline RL algorithms: batches, the sampler, state normalization, configs.

A batch is a `dict[str, Tensor]`:

    observations        (B, obs_dim)   float32
    actions             (B, act_dim)   float32 in [-1, 1]
    rewards             (B,)           float32
    next_observations   (B, obs_dim)   float32
    dones               (B,)           float32, 1 = true termination (not a time-limit cut)
    peer_actions        (B, K, act_dim) float32, only with a peer table: the dataset actions of the
                                        K nearest dataset states of each state (PIC / EPIC)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, Self, TypeVar, runtime_checkable

import numpy as np
import torch
from torch import nn

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int, check_interval
from iclr26.pic.networks import EnsembleMLP

Batch = dict[str, torch.Tensor]
BATCH_KEYS = ("observations", "actions", "rewards", "next_observations", "dones")


@runtime_checkable
class Algorithm(Protocol):
    """What `train_offline` and evaluation need from an offline RL algorithm."""

    config: Any
    total_it: int
    normalizer: StateNormalizer

    def update(self, batch: Batch) -> dict[str, torch.Tensor]:
        """One gradient step on a batch; returns its metrics as detached tensors, 0-d for one run and
        (R,) for R stacked runs (read them with `float`/`tolist` when needed: that waits for the device)."""
        ...

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic action(s) in [-1, 1] for (obs_dim,) or (n, obs_dim) raw observations."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume: networks, optimizers, RNG, step counter."""
        ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        ...


# ----------------------------------------------------------------------------------------- configs

C = TypeVar("C")


@dataclass(frozen=True)
class ActorConfig:
    """The fields every algorithm's config has (BC's are these and `normalize_states`); errors of the
    checks name `<Config>.<field>`, the value and what is accepted."""

    actor_lr: float = 3e-4
    """Adam learning rate of the actor (the policy)"""
    hidden: tuple[int, ...] = (256, 256)
    """hidden widths of every network of the algorithm"""
    batch_size: int = 256
    """minibatch size (used by whoever samples the batches)"""

    def __post_init__(self) -> None:
        name = type(self).__name__
        try:
            hidden = tuple(int(h) for h in self.hidden)  # CLI overrides and JSON arrive as lists
        except (TypeError, ValueError):
            hidden = ()
        if not hidden or min(hidden) < 1:
            raise ConfigError(
                f"{name}.hidden must be a non-empty sequence of positive ints, got {self.hidden!r}"
            )
        object.__setattr__(self, "hidden", hidden)
        check_interval(f"{name}.actor_lr", self.actor_lr, 0.0, closed=(False, True))
        check_int(f"{name}.batch_size", self.batch_size, 1)


@dataclass(frozen=True)
class ActorCriticConfig(ActorConfig):
    """`ActorConfig` plus the critics' fields, shared by TD3 (and TD3+BC, PIC), IQL and EPIC (EDAC)."""

    critic_lr: float = 3e-4
    """Adam learning rate of the critics"""
    gamma: float = 0.99
    """discount γ, in (0, 1)"""
    tau: float = 5e-3
    """Polyak rate τ of the target networks"""

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        check_interval(f"{name}.critic_lr", self.critic_lr, 0.0, closed=(False, True))
        # γ = 0 is a reward regressor, γ = 1 has no fixed point at time-limit cuts
        check_interval(f"{name}.gamma", self.gamma, 0.0, 1.0, closed=(False, False))
        check_interval(f"{name}.tau", self.tau, 0.0, 1.0, closed=(False, True))


@dataclass(frozen=True)
class StateNormalization:
    """The state-normalization switch of the offline algorithms' configs (the online TD3 agent never
    normalizes, so `TD3Config` lacks it). Listed first among a config's bases, its field follows the
    shared ones."""

    normalize_states: bool = True
    """normalize states by the dataset's mean and std"""


def config_with_overrides(config_cls: type[C], overrides: Mapping[str, Any] | None) -> C:
    """`config_cls()` with `overrides` applied; unknown keys raise a ConfigError listing the fields."""
    overrides = dict(overrides or {})
    fields = {f.name for f in dataclasses.fields(config_cls)}  # type: ignore[arg-type]
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ConfigError(f"unknown {config_cls.__name__} field(s) {unknown}; valid fields: {sorted(fields)}")
    return config_cls(**overrides)


# ------------------------------------------------------------------------------ state normalization


def state_stats(observations: np.ndarray, eps: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Dataset mean and std of the states (TD3+BC, Fujimoto & Gu 2021, Sec. 5: std + ε, ε = 1e-3)."""
    obs = np.asarray(observations, dtype=np.float64)
    return obs.mean(0).astype(np.float32), (obs.std(0) + eps).astype(np.float32)


def return_range_reward_scale(rewards: np.ndarray, episode_ends: np.ndarray) -> float:
    """1000 / (max − min episode return): IQL's reward scaling on locomotion (Kostrikov et al. 2021)."""
    ends = np.flatnonzero(np.asarray(episode_ends, dtype=bool))
    if ends.size == 0 or ends[-1] != len(rewards) - 1:
        ends = np.append(ends, len(rewards) - 1)
    returns = np.add.reduceat(np.asarray(rewards, dtype=np.float64), np.r_[0, ends[:-1] + 1])
    spread = float(returns.max() - returns.min())
    if spread <= 0:
        raise ValueError("all episode returns are equal; reward scaling by the return range is undefined")
    return 1000.0 / spread


class StateNormalizer(nn.Module):
    """(s − mean) / std with the dataset's statistics kept as buffers (saved in checkpoints)."""

    def __init__(self, obs_dim: int) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(obs_dim))
        self.register_buffer("std", torch.ones(obs_dim))

    def set_stats(self, mean: np.ndarray | torch.Tensor, std: np.ndarray | torch.Tensor) -> None:
        """Use `mean`, `std` (each (obs_dim,)) from now on."""
        mean_t = torch.as_tensor(np.asarray(mean, dtype=np.float32)).to(self.mean.device)
        std_t = torch.as_tensor(np.asarray(std, dtype=np.float32)).to(self.std.device)
        if mean_t.shape != self.mean.shape or std_t.shape != self.std.shape:
            raise ValueError(
                f"state_mean/state_std must have shape {tuple(self.mean.shape)}, "
                f"got {tuple(mean_t.shape)} and {tuple(std_t.shape)}"
            )
        if bool((std_t <= 0).any()):
            raise ValueError("state_std must be positive everywhere")
        self.mean.copy_(mean_t)
        self.std.copy_(std_t)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return (obs - self.mean) / self.std

    @classmethod
    def stack(cls, normalizers: list[StateNormalizer]) -> StateNormalizer:
        """R runs' statistics as (R, 1, obs_dim) buffers, for (R, B, obs_dim) stacked batches."""
        out = cls(normalizers[0].mean.shape[-1]).to(normalizers[0].mean.device)
        out.mean = torch.stack([n.mean for n in normalizers]).unsqueeze(1)
        out.std = torch.stack([n.std for n in normalizers]).unsqueeze(1)
        return out

    def run(self, r: int) -> StateNormalizer:
        """Run r of a stacked normalizer as a one-run normalizer."""
        out = StateNormalizer(self.mean.shape[-1]).to(self.mean.device)
        out.set_stats(self.mean[r].reshape(-1), self.std[r].reshape(-1))
        return out


# -------------------------------------------------------------------------------------- networks


def build_networks(seed: int, device: str | torch.device, **specs: dict[str, Any]) -> dict[str, EnsembleMLP]:
    """EnsembleMLPs built from `specs` (name -> EnsembleMLP kwargs), initialised from `seed` alone."""
    with torch.random.fork_rng(devices=[]):  # no global RNG state is touched
        torch.manual_seed(seed)
        return {name: EnsembleMLP(**kw).to(device) for name, kw in specs.items()}


def state_action(obs: torch.Tensor, act: torch.Tensor) -> torch.Tensor:
    """Critic input [s, a] along the last dim; `obs` is broadcast over the leading dims of `act`."""
    return torch.cat([obs.expand(*act.shape[:-1], obs.shape[-1]), act], dim=-1)


def act_numpy(
    policy: Callable[[torch.Tensor], torch.Tensor], normalizer: StateNormalizer, obs: np.ndarray
) -> np.ndarray:
    """Run a deterministic policy (normalized obs (n, obs_dim) -> action (n, act_dim)) on raw (obs_dim,)
    or (n, obs_dim) observations; actions are clamped to [-1, 1]."""
    x = np.asarray(obs, dtype=np.float32)
    single = x.ndim == 1
    device = normalizer.mean.device
    with torch.no_grad():
        a = policy(normalizer(torch.as_tensor(x, device=device).reshape(-1, x.shape[-1])))
    a = a.clamp(-1.0, 1.0).cpu().numpy()
    return a[0] if single else a


def gradient_step(
    optimizer: torch.optim.Optimizer, loss: torch.Tensor, inputs: list[torch.Tensor] | None = None
) -> None:
    """One step of `optimizer` on `loss`; `inputs`: the only tensors that receive gradients (None: all)."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward(inputs=inputs)
    optimizer.step()


def generator_for(device: str | torch.device, seed: int) -> torch.Generator:
    """A torch.Generator on `device` seeded with `seed` (the algorithm's private RNG)."""
    return torch.Generator(device=torch.device(device)).manual_seed(int(seed))


def copy_generator(g: torch.Generator) -> torch.Generator:
    """A new generator at `g`'s state: a stack's streams start where its runs' do, but are its own."""
    out = torch.Generator(device=g.device)
    out.set_state(g.get_state())
    return out


def metric(x: torch.Tensor) -> torch.Tensor:
    """A metric of an update: detached and left on its device (0-d for one run, (R,) for a stack), so
    that a GPU update never waits for the host; `train_offline` reads it at its logging steps."""
    return x.detach()


def require_peers(batch: Batch, who: str) -> torch.Tensor:
    """`batch["peer_actions"]`, with an error that says how to get it when it is missing."""
    if "peer_actions" not in batch:
        raise KeyError(f"{who} needs batch['peer_actions']: give BatchSampler a peer table (peers=...)")
    return batch["peer_actions"]


# -------------------------------------------------------------------------------------- sampler


class BatchSampler:
    """Uniform minibatches from an in-memory transition dataset, with peer actions gathered by table.

    `peers` is an (N, K) int64 table of dataset indices: row i lists the K nearest dataset states of
    state i (computed once per dataset). Sampling only gathers `actions[peers[idx]]`; it never searches.
    """

    def __init__(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        dones: np.ndarray,
        *,
        peers: np.ndarray | None = None,
        batch_size: int = 256,
        seed: int = 0,
        device: str | torch.device = "cpu",
        reward_scale: float = 1.0,
        reward_shift: float = 0.0,
    ) -> None:
        n = len(observations)
        arrays = {
            "observations": observations,
            "actions": actions,
            "rewards": rewards,
            "next_observations": next_observations,
            "dones": dones,
        }
        for name, arr in arrays.items():
            if len(arr) != n:
                raise ValueError(f"{name} has {len(arr)} rows, observations has {n}")
        if n == 0:
            raise ValueError("the dataset is empty")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        act = np.asarray(actions, dtype=np.float32)
        if act.ndim != 2:
            raise ValueError(f"actions must be (N, act_dim), got shape {act.shape}")
        if np.abs(act).max() > 1.0 + 1e-5:
            raise ValueError(f"actions must lie in [-1, 1], found |a| up to {np.abs(act).max():.4g}")
        self.device = torch.device(device)
        self.batch_size = int(batch_size)
        self.size = n
        self.data: dict[str, torch.Tensor] = {
            k: torch.as_tensor(np.asarray(v, dtype=np.float32), device=self.device) for k, v in arrays.items()
        }
        self.data["actions"] = self.data["actions"].clamp(-1.0, 1.0)
        self.data["rewards"] = self.data["rewards"].reshape(n) * reward_scale + reward_shift
        self.data["dones"] = self.data["dones"].reshape(n)
        self.peers: torch.Tensor | None = None
        if peers is not None:
            table = np.asarray(peers)
            if table.ndim != 2 or table.shape[0] != n or not np.issubdtype(table.dtype, np.integer):
                raise ValueError(
                    f"peers must be an integer table of shape ({n}, K), got {table.dtype} {table.shape}"
                )
            if table.size and (table.min() < 0 or table.max() >= n):
                raise ValueError(f"peers holds indices outside [0, {n})")
            self.peers = torch.as_tensor(table.astype(np.int64), device=self.device)
        self.generator = torch.Generator().manual_seed(int(seed))  # CPU: same stream on any device

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray], **kwargs: Any) -> BatchSampler:
        """Sampler over a mapping with the five batch keys (e.g. an `np.load`ed .npz); kwargs as __init__."""
        missing = [k for k in BATCH_KEYS if k not in data]
        if missing:
            raise KeyError(f"dataset lacks {missing}; it needs {list(BATCH_KEYS)}")
        return cls(**{k: data[k] for k in BATCH_KEYS}, **kwargs)

    @property
    def obs_dim(self) -> int:
        return int(self.data["observations"].shape[1])

    @property
    def act_dim(self) -> int:
        return int(self.data["actions"].shape[1])

    def sample(self) -> Batch:
        """A batch of `batch_size` transitions drawn uniformly with replacement."""
        idx = torch.randint(self.size, (self.batch_size,), generator=self.generator).to(self.device)
        batch = {k: v[idx] for k, v in self.data.items()}
        if self.peers is not None:
            batch["peer_actions"] = self.data["actions"][self.peers[idx]]  # (B, K, act_dim)
        return batch

    def state_dict(self) -> dict[str, Any]:
        """The RNG state (the data itself is not saved)."""
        return {"generator": self.generator.get_state(), "size": self.size, "batch_size": self.batch_size}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore the RNG state saved by `state_dict`."""
        if state["size"] != self.size:
            raise ValueError(
                f"checkpoint was made on a dataset of {state['size']} rows, this one has {self.size}"
            )
        self.generator.set_state(state["generator"])


# ---------------------------------------------------------------------------------- checkpoints


class Checkpointable:
    """`state_dict`/`load_state_dict` over the attributes named in MODULES and OPTIMIZERS, plus the
    private RNG (`generator`, for the algorithms that draw random numbers) and the step counter
    (`total_it`). `config_cls` is the algorithm's config dataclass (`create(config=None)` uses its
    defaults)."""

    MODULES: tuple[str, ...] = ()
    OPTIMIZERS: tuple[str, ...] = ()
    EXTRA_TENSORS: tuple[str, ...] = ()  # plain tensors such as SAC's log-temperature
    config_cls: ClassVar[type]

    config: Any
    # None: the update draws no random numbers; a list: one generator per stacked run
    generator: torch.Generator | list[torch.Generator] | None = None
    total_it: int

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume: networks, optimizers, tensors, RNG, step counter, config."""
        state: dict[str, Any] = {name: getattr(self, name).state_dict() for name in self.MODULES}
        state.update({name: getattr(self, name).state_dict() for name in self.OPTIMIZERS})
        state.update({name: getattr(self, name).detach().clone() for name in self.EXTRA_TENSORS})
        if isinstance(self.generator, list):
            state["generator"] = [g.get_state() for g in self.generator]
        elif self.generator is not None:
            state["generator"] = self.generator.get_state()
        state["total_it"] = self.total_it
        state["config"] = dataclasses.asdict(self.config)
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what `state_dict` returned (the config is checked, not replaced)."""
        saved = dict(state["config"])
        mine = dataclasses.asdict(self.config)
        if {k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()} != mine:
            raise ValueError(f"checkpoint config {saved} differs from this algorithm's config {mine}")
        for name in self.MODULES:
            getattr(self, name).load_state_dict(state[name])
        for name in self.OPTIMIZERS:
            getattr(self, name).load_state_dict(state[name])
        with torch.no_grad():
            for name in self.EXTRA_TENSORS:
                getattr(self, name).copy_(state[name])
        if isinstance(self.generator, list):
            for g, g_state in zip(self.generator, state["generator"], strict=True):
                g.set_state(g_state)
        elif self.generator is not None:
            self.generator.set_state(state["generator"])
        self.total_it = int(state["total_it"])


# ----------------------------------------------------------------------------------- algorithms


def _adam_for(nets: Mapping[str, nn.Module], cfg: Any) -> dict[str, torch.optim.Optimizer]:
    """Adam for each network `x` at `cfg.x_lr`, named `x_optimizer` (Adam is elementwise, so one Adam
    over stacked weights is R independent ones)."""
    return {
        f"{name}_optimizer": torch.optim.Adam(net.parameters(), lr=getattr(cfg, f"{name}_lr"))
        for name, net in nets.items()
    }


class AlgorithmBase(Checkpointable):
    """What the algorithms share: the run state (`config`, `normalizer`, `generator`, `total_it`),
    `create` (default networks and optimizers from the config, seeded), `act` (the deterministic
    policy on raw states) and the normalized states of a batch. A subclass names its networks
    (`network_specs`) and anything else its `__init__` takes (`extra_parts`)."""

    config_cls: ClassVar[type[ActorConfig]]
    actor: EnsembleMLP

    def __init__(
        self, config: ActorConfig, normalizer: StateNormalizer, generator: torch.Generator | None = None
    ) -> None:
        self.config = config
        self.normalizer = normalizer
        self.generator = generator
        self.total_it = 0

    @classmethod
    def create(
        cls,
        obs_dim: int,
        act_dim: int,
        config: ActorConfig | None = None,
        *,
        seed: int = 0,
        device: str | torch.device = "cpu",
    ) -> Self:
        """Default networks for `config` (None: `config_cls()`), initialised from `seed` alone (the global
        RNG is untouched), each network `x` trained by Adam at `config.x_lr`. They are passed to
        `__init__` by name: network `x` as `x`, its optimizer as `x_optimizer`, the state normalizer as
        `normalizer`, and `extra_parts` by their names."""
        cfg = cls.config_cls() if config is None else config
        if not isinstance(cfg, cls.config_cls):
            raise TypeError(f"{cls.__name__} needs a {cls.config_cls.__name__}, got {type(cfg).__name__}")
        nets = build_networks(seed, device, **cls.network_specs(obs_dim, act_dim, cfg))
        normalizer = StateNormalizer(obs_dim).to(device)
        extra = cls.extra_parts(cfg, act_dim=act_dim, seed=seed, device=device)
        return cls(cfg, **nets, **_adam_for(nets, cfg), normalizer=normalizer, **extra)

    # ---------------------------------------------------------------------------- stacked runs

    @classmethod
    def network_names(cls) -> list[str]:
        """The trained networks `__init__` takes (its MODULES less the targets and the normalizer)."""
        return [n for n in cls.MODULES if n != "normalizer" and not n.endswith("_target")]

    @classmethod
    def stack(cls, algos: Sequence[Self]) -> Self:
        """R freshly created runs of one config (seeds, datasets' statistics) as one algorithm whose
        networks hold all R runs (`EnsembleMLP.stack`), trained on (R, B, ...) batches: run r of the
        stack draws from run r's generator and its update equals run r's alone (tested)."""
        first = algos[0]
        for a in algos:
            if type(a) is not cls or a.config != first.config:
                raise ValueError(f"stack() needs {cls.__name__} runs of one config")
            if a.total_it != 0:
                raise ValueError("stack() needs freshly created runs (their optimizers hold no state yet)")
        nets = {n: EnsembleMLP.stack([getattr(a, n) for a in algos]) for n in cls.network_names()}
        normalizer = StateNormalizer.stack([a.normalizer for a in algos])
        return cls(first.config, **nets, **_adam_for(nets, first.config), normalizer=normalizer,
                   **cls.stack_parts(algos))  # fmt: skip

    @classmethod
    def stack_parts(cls, algos: Sequence[Self]) -> dict[str, Any]:
        """`extra_parts` for a stack of `algos`: a copy of each run's generator, in a list (none: no
        generator); the runs stacked keep theirs."""
        if algos[0].generator is None:
            return {}
        return {"generator": [copy_generator(a.generator) for a in algos]}

    @property
    def runs(self) -> int:
        """How many runs this algorithm trains at once (1 unless built by `stack`)."""
        return self.actor.runs

    def run(self, r: int) -> Self:
        """Run r of a stack as a one-run algorithm with its networks and state statistics (for
        evaluation: optimizer states and generators are fresh)."""
        obs_dim = int(self.normalizer.mean.shape[-1])
        critic = getattr(self, "critic", None)
        act_dim = critic.in_dim - obs_dim if critic is not None else self.actor.out_dim
        device = self.normalizer.mean.device
        single = type(self).create(obs_dim, act_dim, self.config, device=device)
        for name in self.MODULES:
            part = getattr(self, name).run(r)
            getattr(single, name).load_state_dict(part.state_dict())
        single.run_extras_from(self, r)
        single.total_it = self.total_it
        return single

    def run_extras_from(self, stacked: Self, r: int) -> None:
        """Copy run r's non-network state of `stacked` into this one-run algorithm (none here)."""

    def randn(self, shape: Sequence[int], device: torch.device) -> torch.Tensor:
        """N(0, I) noise of `shape` from the algorithm's generator. For a stack, `shape` leads with the
        run axis and run r's slice is drawn from run r's generator, as that run would draw it alone."""
        if isinstance(self.generator, list):
            return torch.stack([torch.randn(shape[1:], generator=g, device=device) for g in self.generator])
        return torch.randn(shape, generator=self.generator, device=device)

    @classmethod
    def network_specs(cls, obs_dim: int, act_dim: int, cfg: Any) -> dict[str, dict[str, Any]]:
        """The `EnsembleMLP` kwargs of each network `create` builds, by name."""
        raise NotImplementedError

    @classmethod
    def extra_parts(cls, cfg: Any, *, act_dim: int, seed: int, device: str | torch.device) -> dict[str, Any]:
        """What `__init__` takes besides the networks, their optimizers and the normalizer (none here);
        an update that draws random numbers gets its `generator` here, seeded by seed + 1."""
        return {}

    def deterministic_action(self, obs: torch.Tensor) -> torch.Tensor:
        """The action taken at evaluation for normalized states: (B, obs_dim) -> (B, act_dim)."""
        return self.actor.single(obs)

    def act(self, obs: np.ndarray) -> np.ndarray:
        """Deterministic action in [-1, 1] for raw (obs_dim,) or (n, obs_dim) observations."""
        return act_numpy(self.deterministic_action, self.normalizer, obs)

    def normalized_states(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """The batch's states and next states, normalized."""
        return self.normalizer(batch["observations"]), self.normalizer(batch["next_observations"])
