"""The `repro_reward` system's config: the shared RLVR experiment (`rlvr.experiment.RLVRConfig`)
plus the re-check warm start of the overthinking testbed and RePro's process reward (`repro`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int, check_interval
from iclr26.repro_reward.process_reward import ReProConfig
from iclr26.rlvr.experiment import RLVRConfig
from iclr26.rlvr.grpo import GRPOConfig

COLUMN_TASKS = ("addition", "multiplication")  # tasks with column scratchpads, which the testbed re-checks
NATURAL_TASKS = ("addition", "multiplication", "gsm")  # numeric answers: overthinking is readable in prose


@dataclass(frozen=True)
class ReProSystemConfig(RLVRConfig):
    """Everything the run uses; defaults are the `bench` preset."""

    grpo: GRPOConfig = field(default_factory=lambda: GRPOConfig(lr=1e-4, max_new_tokens=96))
    rl_steps: int = 60
    eval_k: int = 4
    recheck_p: float = 0.6
    """warm start: share of worked solutions that re-check lines after the answer is fixed"""
    max_rechecks: int = 3
    """warm start: the most re-check lines one solution gets"""
    repro: ReProConfig = field(default_factory=ReProConfig.arithmetic)
    """RePro's process reward, in the testbed's format (one step a line, A:<answer>); for the
    natural style use ReProConfig.natural()'s separators (the paper preset does)"""

    def __post_init__(self) -> None:
        if self.style == "scratchpad" and self.task not in COLUMN_TASKS:
            raise ConfigError(
                f"task must be addition or multiplication (column scratchpads), got {self.task!r}"
            )
        if self.style == "natural" and self.task not in NATURAL_TASKS:
            raise ConfigError(f"task must be one of {NATURAL_TASKS} in the natural style, got {self.task!r}")
        super().__post_init__()
        check_interval("recheck_p", self.recheck_p, 0, 1)
        check_int("max_rechecks", self.max_rechecks, 1)
