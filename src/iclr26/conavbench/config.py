"""The `conavbench` run's config: the split to generate (the paper's 4,048 episodes over
generated houses), which agents run under which protocol, the executor's actuation noise, and the
LLM agent's budget (its model is the run's: `--llm`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.conavbench.agents import EvalConfig
from iclr26.conavbench.executor import ExecutorConfig
from iclr26.conavbench.missions import RULES
from iclr26.conavbench.sim import SimConfig
from iclr26.conavbench.splits import N_COLLAB, N_SCENES, N_SINGLE
from iclr26.core.config import ConfigError, run_llm_renames
from iclr26.core.validation import check_in, check_int

AGENTS = ("oracle", "null", "stay", "random", "greedy", "collaborative", "llm")
"""oracle: shortest paths, the reference schedule, no noise (must pass every episode); null: stops
at once, noise-free (must pass none); stay: stays in place under the planners' noise (the floor);
random: uniform random actions (a floor); greedy: the primary does the whole mission alone;
collaborative: allocates per the episode's type and hands off at the relay; llm: a chat model picks
sub-goals."""
PROTOCOLS = ("high", "step")
EXPERIMENTS = ("planners", "learned")
"""planners: every planner on the whole split (the default run); learned: single-robot vs
collaborative trained executors on one common trial set (`learned.py`)"""
SPLITS = ("all", "train", "val", "test")


def _noisy() -> EvalConfig:
    return EvalConfig(sim=SimConfig(forward_noise=0.15, turn_noise=2.0))


@dataclass(frozen=True)
class NavConfig:
    """Everything the run uses; the defaults are the README's bench (the full split, every planner)."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm", "llm_path")

    n_single: int = N_SINGLE
    """NavCraft-S episodes (the paper: 2,436)"""
    n_collab: int = N_COLLAB
    """NavCraft-C episodes (the paper: 1,612)"""
    n_scenes: int = N_SCENES
    """generated houses (the paper uses 216 HM3D scenes); train / val / test by scene, 70 / 10 / 20"""
    acceptance: str = "paper"
    """NavCraft-C's acceptance rule: paper (min(J_A1, J_A2) < C_solo: the primary's distance only) or
    makespan (ours: also a schedule that places the object sooner than the primary alone)"""
    data_dir: str = ""
    """folder for the generated split (empty: the run folder's data/); a re-run resumes it"""
    jobs: int = 2
    """worker processes generating scenes (the study's cells run `iclr26 run --jobs N` at once)"""
    eval_split: str = "all"
    """which episodes the agents run on: all, or the train / val / test part"""
    agents: tuple[str, ...] = ("oracle", "null", "stay", "random", "greedy", "collaborative")
    """agents to evaluate (llm is slow on a CPU: see llm_episodes)"""
    protocols: tuple[str, ...] = PROTOCOLS
    """high: one instruction, the whole mission; step: each move_to leg alone from its reference start"""
    evaluation: EvalConfig = field(default_factory=_noisy)
    """the executor: step budgets, the success rule, the simulator and its actuation noise (the
    planners, random and llm run under it; the oracle always runs noise-free)"""
    llm_episodes: int = 12
    """collaborative episodes the llm agent runs (0: all)"""
    experiment: str = "planners"
    """planners (every planner on the split) or learned (single-robot vs collaborative trained
    executors on one common trial set, `learned.py`)"""
    executor: ExecutorConfig = field(default_factory=ExecutorConfig)
    """the learned experiment's executor: observation, network, behaviour-cloning budget"""
    seeds: int = 6
    """the learned experiment's training seeds (each trains both executors; the claims pair over them)"""
    eval_per_house: int = 3
    """the learned experiment's test collaborative episodes per test house, the first of each (0: all)"""
    seed: int = 0
    """seeds the scenes (derive_seed(seed, "scene", i)), the episodes and the random agent"""

    def __post_init__(self) -> None:
        for name in ("n_single", "n_collab", "llm_episodes"):
            check_int(name, getattr(self, name), 0)
        check_int("n_scenes", self.n_scenes, 3)
        check_int("jobs", self.jobs, 1, 64)
        check_int("seed", self.seed, 0)
        check_in("eval_split", self.eval_split, SPLITS)
        check_in("experiment", self.experiment, EXPERIMENTS)
        check_int("seeds", self.seeds, 1, 100)
        check_int("eval_per_house", self.eval_per_house, 0)
        check_in("acceptance", self.acceptance, RULES)
        for a in self.agents:
            check_in("agents", a, AGENTS)
        for p in self.protocols:
            check_in("protocols", p, PROTOCOLS)
        if not self.agents or not self.protocols:
            raise ConfigError("agents and protocols must each name at least one")
        if self.n_single + self.n_collab == 0:
            raise ConfigError("n_single + n_collab must be > 0")
