"""The `glow` run's config: which games (a generated TextWorld suite and the user's own Jericho game
files), which agents at which env-step budgets, and each agent's nested settings (the LLM that drives
GLoW, ReAct and Reflexion is the run's: `--llm`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.core.config import ConfigError, run_llm_renames
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.glow.agents import GLoWConfig, ReActConfig, ReflexionConfig
from iclr26.glow.drrn import QUICK, DRRNConfig
from iclr26.glow.games import SUITES

AGENTS: tuple[str, ...] = (
    "glow", "react", "reflexion", "random", "noop", "go_explore", "drrn", "oracle", "null"
)  # fmt: skip
"""GLoW and the baselines: ReAct, Reflexion (same LLM and budget), Go-Explore without an LLM, a DRRN
trained here (its own, larger budget); the floors: random over valid actions, and noop (takes no env
step: the start state's score); and the suite's reference rows: the oracle plays each game's
walkthrough (must reach every max score), null only looks (none)."""
REFERENCE_AGENTS: tuple[str, ...] = ("oracle", "null")
LLM_AGENTS: tuple[str, ...] = ("glow", "react", "reflexion")
EXPERIMENTS: tuple[str, ...] = ("agents", "structure")
"""agents: the agents above play the games (the paper's comparison); structure: GLoW's memory structure
with a scripted noisy-walkthrough policy in the LLM's place (`glow.structure`; its arms are fixed)"""
ABLATIONS: tuple[str, ...] = ("no_mar", "no_global", "no_frontier", "no_all")
"""The paper's GLoW ablations: without MAR, without W_global, without F, without all three."""


@dataclass(frozen=True)
class GlowConfig:
    """Everything the run uses; the defaults are the README's bench."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm", "llm_path")

    experiment: str = "agents"
    """which experiment (EXPERIMENTS): the agents, or the memory structure without language"""
    suite: str = "demo"
    """generated TextWorld games (games.SUITES: smoke, demo, ablation, bench); empty: only `games`"""
    games: tuple[str, ...] = ()
    """paths of Jericho game files you own (zork1.z5, ...), played after the suite"""
    agents: tuple[str, ...] = AGENTS
    """agents to run on every game"""
    ablations: tuple[str, ...] = ()
    """GLoW ablations to run too (no_mar, no_global, no_frontier, no_all)"""
    seeds: int = 3
    """runs per game and agent (seeds 0..seeds-1); the tables give mean ± sd"""
    step_budget: int = 100
    """env steps per run of GLoW, ReAct, Reflexion, random and Go-Explore (the paper: 1,000)"""
    drrn_budget: int = 5000
    """env steps the DRRN trains for (RL agents need far more interactions: the paper's 100–800×)"""
    glow: GLoWConfig = field(default_factory=GLoWConfig)
    """GLoW's settings (n = 3 rollouts, k = 5, the ablation switches)"""
    react: ReActConfig = field(default_factory=ReActConfig)
    """the ReAct baseline's settings"""
    reflexion: ReflexionConfig = field(default_factory=ReflexionConfig)
    """the Reflexion baseline's settings"""
    drrn: DRRNConfig = field(default_factory=lambda: QUICK)
    """the DRRN's network and training (default: drrn.QUICK, sized for a few thousand steps)"""
    explore_steps: int = 10
    """random steps per Go-Explore iteration (after each restore)"""
    random_episode_steps: int = 50
    """steps per episode of the random agent before it resets the game"""
    walk_p: tuple[float, ...] = (0.1, 0.3, 0.5)
    """experiment=structure: the noisy-walkthrough policy's probabilities of the walkthrough's command"""
    remap: bool = False
    """the LLM agents' generated commands mapped to the nearest valid action (off, the paper's soft
    constraint: a command off the valid list goes to the game as generated and spends its step)"""

    def __post_init__(self) -> None:
        check_in("experiment", self.experiment, EXPERIMENTS)
        if not self.walk_p:
            raise ConfigError("walk_p: name at least one probability")
        for p in self.walk_p:
            check_interval("walk_p", p, 0, 1)
        if self.suite:
            check_in("suite", self.suite, SUITES)
        if not self.suite and not self.games:
            raise ConfigError("name a suite or at least one game file (games=...)")
        if not self.agents and not self.ablations:
            raise ConfigError("name at least one agent or ablation")
        for a in self.agents:
            check_in("agents", a, AGENTS)
        for a in self.ablations:
            check_in("ablations", a, ABLATIONS)
        check_int("seeds", self.seeds, 1, 100)
        check_int("step_budget", self.step_budget, 1, unit="env steps")
        check_int("drrn_budget", self.drrn_budget, 1, unit="env steps")
        check_int("explore_steps", self.explore_steps, 1)
        check_int("random_episode_steps", self.random_episode_steps, 1)
        if not isinstance(self.remap, bool):
            raise ConfigError(f"remap must be true or false, got {self.remap!r}")
