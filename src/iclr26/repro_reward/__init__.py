"""RePro: process-level reward from the optimization view of chain-of-thought ("Rectifying LLM
Thought from Lens of Optimization", arXiv 2512.01925, ICLR 2026).

Public API: the surrogate objective J̃ (`surrogate_objective`, `answer_ids`), reasoning segments
and their top-k selection by first-token entropy (`split_segments`, `segment_completion`,
`first_token_entropy`, `select_top_k`), the magnitude / stability / composite scores
(`magnitude_score`, `stability_score`, `trajectory_scores`), and the process reward in GRPO
(`ReProConfig`, `process_rewards`, `normalize_process_rewards`, `combine_advantages`,
`repro_advantages`, `ReProAdvantage` — the `token_advantages` hook of `rlvr.GRPOTrainer`), the
system's config `ReProSystemConfig`, and `SYSTEM` / `PRESETS` for `iclr26 run repro_reward`
(loaded from `repro_reward.system` on first use).
"""

from iclr26.core.system import system_attributes
from iclr26.repro_reward.config import ReProSystemConfig
from iclr26.repro_reward.process_reward import (
    ReProAdvantage,
    ReProConfig,
    combine_advantages,
    normalize_process_rewards,
    process_rewards,
    repro_advantages,
)
from iclr26.repro_reward.scores import (
    ema,
    kendall_tau,
    magnitude_score,
    spearman_rho,
    stability_score,
    trajectory_scores,
)
from iclr26.repro_reward.segments import (
    Segments,
    first_token_entropy,
    segment_completion,
    select_top_k,
    split_segments,
    token_cuts,
)
from iclr26.repro_reward.surrogate import answer_ids, surrogate_objective

__all__ = [
    "SYSTEM",
    "ReProAdvantage",
    "ReProConfig",
    "ReProSystemConfig",
    "Segments",
    "answer_ids",
    "combine_advantages",
    "ema",
    "first_token_entropy",
    "kendall_tau",
    "magnitude_score",
    "normalize_process_rewards",
    "process_rewards",
    "repro_advantages",
    "segment_completion",
    "select_top_k",
    "spearman_rho",
    "split_segments",
    "stability_score",
    "surrogate_objective",
    "token_cuts",
    "trajectory_scores",
]

__getattr__ = system_attributes(__name__)  # SYSTEM and PRESETS, loaded from .system on first use
