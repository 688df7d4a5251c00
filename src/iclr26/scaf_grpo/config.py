"""The `scaf_grpo` system's config: the shared RLVR experiment (`rlvr.experiment.RLVRConfig`) plus
the hinted warm start and Scaf-GRPO's guidance (`scaf`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int, check_interval
from iclr26.rlvr.experiment import RLVRConfig
from iclr26.rlvr.grpo import GRPOConfig
from iclr26.rlvr.sft import SFTConfig
from iclr26.scaf_grpo.scaffold import ScafConfig


@dataclass(frozen=True)
class ScafGRPOConfig(RLVRConfig):
    """Everything the run uses; defaults are the `bench` preset."""

    sft: SFTConfig = field(default_factory=lambda: SFTConfig(batch_size=32, mix=("addition:1-4",)))
    grpo: GRPOConfig = field(default_factory=lambda: GRPOConfig(lr=5e-5, max_new_tokens=64))
    # RL problems: each question's level is drawn from these; the claim is scored on those past the
    # cliff (pass@k = 0 after pretraining). Mixing in easy levels keeps their skills alive.
    train_levels: tuple[int, ...] = (2, 3, 4)
    eval_levels: tuple[int, ...] = (1, 2, 3, 4, 5)
    """levels evaluated after the warm start (the cliff table) and after RL; must hold train_levels"""
    # Levels above `sft_plain_max_level` appear in pretraining only with a Solution-tier hint of at
    # least `sft_hard_hint_min` (of 4) parts: the policy learns to finish such problems from a
    # partial worked solution, never to solve them unaided.
    sft_plain_max_level: int = 3
    """warm start: the highest level seen without a partial worked solution"""
    sft_hard_hint_min: int = 2
    """warm start: parts (of 4) of the Solution hint that levels above sft_plain_max_level get at least"""
    hint_prob: float = 0.5
    """warm start: share of the other examples that carry a random hint line"""
    scaf: ScafConfig = field(default_factory=lambda: ScafConfig(warmup_steps=5))
    """Scaf-GRPO's guidance (warm-up 5 steps here; the release uses 50 at its scale)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        if missing := sorted(set(self.train_levels) - set(self.eval_levels)):
            raise ConfigError(
                f"eval_levels must include every train level; missing {missing} "
                f"(eval_levels={self.eval_levels}, train_levels={self.train_levels})"
            )
        check_int("sft_plain_max_level", self.sft_plain_max_level, 0)
        check_int("sft_hard_hint_min", self.sft_hard_hint_min, 1, 4)
        check_interval("hint_prob", self.hint_prob, 0, 1)
