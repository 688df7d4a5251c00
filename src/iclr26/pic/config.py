"""The pic system's configs: the run (`PICSystemConfig`, with one nested config per algorithm, so that
`--set pic.delta=2` reaches PIC alone) and the dataset generation (`GenerationConfig` and its named
presets in `GENERATION_PRESETS`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.pic.algorithms import (
    ALGORITHMS,
    AlgorithmConfig,
    BCConfig,
    EDACConfig,
    EPICConfig,
    IQLConfig,
    PICConfig,
    SACConfig,
    TD3BCConfig,
    TD3Config,
)
from iclr26.pic.data import jsonable
from iclr26.pic.peers import METHODS

DATASET_NAMES = ("random", "medium", "medium-replay", "expert", "medium-expert")

# ------------------------------------------------------------------------------------ generation


BEHAVIOR_AGENTS = ("td3", "sac")  # the online agents `behavior.py` trains (`GenerationConfig.agent`)


@dataclass(frozen=True)
class GenerationConfig:
    """One online run of a behaviour agent (TD3 or SAC) and the five D4RL-style datasets cut from it
    (defaults: a Pendulum-v1 demo with TD3)."""

    seed: int = 0
    """seed of every random stream of the run (network init, exploration, episode resets, collection)"""
    agent: str = "td3"
    """the behaviour agent: "td3" (Fujimoto et al. 2018) or "sac" (Haarnoja et al. 2018; D4RL's)"""
    total_steps: int = 15_000
    """online env steps of the agent"""
    start_steps: int = 1_000
    """uniform-random actions first, no updates (TD3: 10^4 on MuJoCo)"""
    expl_noise: float = 0.1
    """N(0, σ²) exploration noise on TD3's action while training (SAC samples its own policy)"""
    eval_every: int = 1_000
    """evaluate and snapshot the policy every this many env steps"""
    eval_episodes: int = 10
    """episodes per evaluation, and for the reference returns"""
    dataset_size: int = 100_000
    """transitions per dataset (medium-replay: at most this many)"""
    expert_noise: float = 0.1
    """N(0, σ²) action noise on a TD3 snapshot collecting `expert` (a SAC snapshot samples its policy)"""
    medium_noise: float = 0.1
    """N(0, σ²) action noise on a TD3 snapshot collecting `medium` (a SAC snapshot samples its policy)"""
    medium_fraction: float = 1 / 3
    """medium: of the snapshots up to the first with eval return >= random + fraction·(best − random),
    the one closest to that threshold"""
    checkpoint_every: int = 5_000
    """env steps between checkpoints (taken at the next episode end)"""
    num_threads: int = 1
    """torch CPU threads while generating (1 was fastest on 2 cores)"""
    td3: TD3Config = field(default_factory=TD3Config)
    """the TD3 behaviour agent's hyper-parameters (agent="td3")"""
    sac: SACConfig = field(default_factory=SACConfig)
    """the SAC behaviour agent's hyper-parameters (agent="sac")"""

    def __post_init__(self) -> None:
        check_in("GenerationConfig.agent", self.agent, BEHAVIOR_AGENTS)
        for name, cls in (("td3", TD3Config), ("sac", SACConfig)):
            if isinstance(getattr(self, name), dict):  # from JSON / --set
                object.__setattr__(self, name, cls(**getattr(self, name)))
            if not isinstance(getattr(self, name), cls):
                got = type(getattr(self, name)).__name__
                raise ConfigError(f"GenerationConfig.{name} must be a {cls.__name__}, got {got}")
        check_int("GenerationConfig.seed", self.seed, 0)
        for name in ("total_steps", "eval_every", "eval_episodes", "dataset_size", "checkpoint_every"):
            check_int(f"GenerationConfig.{name}", getattr(self, name), 1)
        check_int("GenerationConfig.num_threads", self.num_threads, 1)
        if not isinstance(self.start_steps, int) or not 0 <= self.start_steps < self.total_steps:
            raise ConfigError(
                f"GenerationConfig.start_steps must lie in [0, total_steps={self.total_steps}), "
                f"got {self.start_steps!r}"
            )
        if self.eval_every > self.total_steps:
            raise ConfigError(
                f"GenerationConfig.eval_every={self.eval_every} exceeds total_steps={self.total_steps}: "
                "no policy snapshot would be taken"
            )
        for name in ("expl_noise", "expert_noise", "medium_noise"):
            check_interval(f"GenerationConfig.{name}", getattr(self, name), 0.0)
        check_interval(
            "GenerationConfig.medium_fraction", self.medium_fraction, 0.0, 1.0, closed=(False, False)
        )

    def agent_config(self) -> TD3Config | SACConfig:
        """The chosen behaviour agent's hyper-parameters (`td3` or `sac`)."""
        return self.td3 if self.agent == "td3" else self.sac

    def identity(self) -> dict[str, Any]:
        """The fields that determine the generated data: not how often it checkpoints, how many threads,
        nor the config of the agent that was not chosen."""
        unused = "sac" if self.agent == "td3" else "td3"
        skip = ("checkpoint_every", "num_threads", unused)
        return {k: v for k, v in jsonable(asdict(self)).items() if k not in skip}


# Named sizes. `smoke`: seconds (tests). `pendulum`: the demo (the defaults, TD3). `mujoco`: HalfCheetah/
# Hopper/Walker2d-v5 with SAC at the scale that fits hours of CPU (D4RL used 1M SAC steps and 1M
# transitions); `PICSystemConfig.gen_agent` or `generation_preset("mujoco", agent="td3")` picks TD3.
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
        agent="sac",
        total_steps=300_000,
        start_steps=25_000,
        eval_every=5_000,
        eval_episodes=10,
        dataset_size=200_000,
        checkpoint_every=10_000,
    ),
}


def generation_preset(name: str, **overrides: Any) -> GenerationConfig:
    """A named `GenerationConfig` ("smoke", "pendulum", "mujoco") with fields replaced by `overrides`."""
    if name not in GENERATION_PRESETS:
        raise ConfigError(f"unknown generation preset {name!r}; choose one of {sorted(GENERATION_PRESETS)}")
    valid = {f.name for f in fields(GenerationConfig)}
    unknown = sorted(set(overrides) - valid)
    if unknown:
        raise ConfigError(f"unknown GenerationConfig fields {unknown}; valid: {sorted(valid)}")
    return replace(GENERATION_PRESETS[name], **overrides)


# ------------------------------------------------------------------------------------------ the run

BENCH_HIDDEN = (64, 64)  # the bench preset's width of every network (the paper: 256)
BENCH_CRITICS = 5  # the bench preset's EPIC/EDAC ensemble size (the paper: 5–20; 10 on MuJoCo)


def every_algorithm(**changes: Any) -> dict[str, Any]:
    """One change for the nested config of every algorithm that has the field, as dotted keys:
    `every_algorithm(hidden=(32, 32))` is `{"bc.hidden": (32, 32), "td3_bc.hidden": (32, 32), ...}`."""
    out: dict[str, Any] = {}
    for name, spec in ALGORITHMS.items():
        names = {f.name for f in dataclasses.fields(spec.config_cls)}
        out |= {f"{name}.{key}": value for key, value in changes.items() if key in names}
    return out


@dataclass(frozen=True)
class PICSystemConfig:
    """Everything the run uses; defaults are the `bench` preset (Pendulum-v1, CPU). Each algorithm's
    settings are its own nested config, named as the algorithm (`--set epic.num_critics=10`)."""

    env_id: str = "Pendulum-v1"
    """Gymnasium task with a bounded Box action space (Pendulum-v1, HalfCheetah/Hopper/Walker2d-v5)"""
    generation: str = "pendulum"
    """dataset generation preset: "smoke", "pendulum" or "mujoco" (`config.GENERATION_PRESETS`)"""
    gen_agent: str = ""
    """the behaviour agent, "td3" or "sac"; "": the generation preset's (mujoco: SAC, D4RL's)"""
    gen_total_steps: int = 0
    """online env steps of the behaviour agent; 0: the generation preset's"""
    gen_dataset_size: int = 20_000
    """transitions per generated dataset; 0: the generation preset's"""
    data_dir: str = ""
    """where datasets are generated and cached; "": <run dir>/data (a path shares them between runs)"""
    datasets: tuple[str, ...] = ("medium", "medium-replay")
    """datasets to train on, of random, medium, medium-replay, expert, medium-expert"""
    algorithms: tuple[str, ...] = ("bc", "td3_bc", "pic", "epic")
    """algorithms to train, of bc, td3_bc, iql, pic, epic, edac"""
    seeds: int = 2
    """training seeds per (algorithm, dataset)"""
    seed: int = 0
    """first seed (then seed + 1, ...); the data generation uses it too"""
    steps: int = 3000
    """gradient steps per (algorithm, dataset, seed)"""
    k: int = 10
    """peers per state: its K nearest dataset states"""
    peer_method: str = "auto"
    """nearest-neighbour search of the peer table: "auto", "exact", "hnsw" or "ivf" (`peers.peer_table`)"""
    eval_every: int = 500
    """gradient steps between evaluations"""
    eval_episodes: int = 5
    """episodes per evaluation"""
    checkpoint_every: int = 1000
    """gradient steps between training checkpoints"""
    threads: int = 1
    """torch CPU threads (1 was fastest on 2 cores for 256-wide MLPs)"""
    device: str = "cpu"
    """torch device: "cpu", "cuda", "auto", ..."""
    bc: BCConfig = field(default_factory=lambda: BCConfig(hidden=BENCH_HIDDEN))
    """behaviour cloning ("bc")"""
    td3_bc: TD3BCConfig = field(default_factory=lambda: TD3BCConfig(hidden=BENCH_HIDDEN))
    """TD3+BC ("td3_bc"), the baseline of the claim"""
    iql: IQLConfig = field(default_factory=lambda: IQLConfig(hidden=BENCH_HIDDEN))
    """IQL ("iql")"""
    pic: PICConfig = field(default_factory=lambda: PICConfig(hidden=BENCH_HIDDEN))
    """PIC-TD3 ("pic"), the method"""
    epic: EPICConfig = field(
        default_factory=lambda: EPICConfig(hidden=BENCH_HIDDEN, num_critics=BENCH_CRITICS)
    )
    """EPIC ("epic"), the method with a critic ensemble"""
    edac: EDACConfig = field(
        default_factory=lambda: EDACConfig(hidden=BENCH_HIDDEN, num_critics=BENCH_CRITICS)
    )
    """EDAC ("edac"): EPIC without peers"""

    def __post_init__(self) -> None:
        check_in("generation", self.generation, GENERATION_PRESETS)
        bad = [d for d in self.datasets if d not in DATASET_NAMES]
        if bad or not self.datasets:
            raise ConfigError(f"datasets: unknown {bad}; choose from {DATASET_NAMES}")
        bad = [a for a in self.algorithms if a not in ALGORITHMS]
        if bad or not self.algorithms:
            raise ConfigError(f"algorithms: unknown {bad}; choose from {sorted(ALGORITHMS)}")
        check_in("peer_method", self.peer_method, METHODS)
        for name in ("seeds", "steps", "k", "eval_every", "eval_episodes", "checkpoint_every", "threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be >= 1 (an int), got {value!r}")
        check_int("seed", self.seed, 0)
        if self.gen_agent:
            check_in("gen_agent", self.gen_agent, BEHAVIOR_AGENTS)
        check_int("gen_total_steps", self.gen_total_steps, 0, unit="0: the generation preset's")
        check_int("gen_dataset_size", self.gen_dataset_size, 0, unit="0: the generation preset's")
        for name, spec in ALGORITHMS.items():
            if not isinstance(getattr(self, name), spec.config_cls):
                raise ConfigError(
                    f"{name} must be a {spec.config_cls.__name__}, got {type(getattr(self, name)).__name__}"
                )

    def algorithm_config(self, name: str) -> AlgorithmConfig:
        """The nested config of algorithm `name` (a key of `ALGORITHMS`)."""
        check_in("algorithm", name, ALGORITHMS)
        return getattr(self, name)

    def generation_config(self) -> GenerationConfig:
        """The generation preset with this run's seed and size overrides."""
        over: dict[str, Any] = {"seed": self.seed}
        if self.gen_agent:
            over["agent"] = self.gen_agent
        if self.gen_total_steps:
            over["total_steps"] = self.gen_total_steps
        if self.gen_dataset_size:
            over["dataset_size"] = self.gen_dataset_size
        return generation_preset(self.generation, **over)
