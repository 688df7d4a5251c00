"""RePro: process-level reward from the optimization view of chain-of-thought ("Rectifying LLM
Thought from Lens of Optimization", arXiv 2512.01925, ICLR 2026).

Public API: the surrogate objective J̃ (`surrogate_objective`, `answer_ids`), reasoning segments
and their top-k selection by first-token entropy (`split_segments`, `segment_completion`,
`first_token_entropy`, `select_top_k`), the magnitude / stability / composite scores
(`magnitude_score`, `stability_score`, `trajectory_scores`), and the process reward in GRPO
(`ReProConfig`, `process_rewards`, `normalize_process_rewards`, `combine_advantages`,
`repro_advantages`, `ReProAdvantage` — the `token_advantages` hook of `rlvr.GRPOTrainer`).
"""

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
    "ReProAdvantage",
    "ReProConfig",
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

from dataclasses import replace as _replace

from iclr26.catalog import implemented_system
from iclr26.repro_reward.system import ReProSystemConfig, run

_BENCH = ReProSystemConfig()
PRESETS = {
    "smoke": _replace(
        _BENCH,
        dim=32,
        layers=1,
        heads=2,
        sft_steps=20,
        sft_batch=16,
        rl_steps=3,
        questions_per_step=2,
        group_size=4,
        max_new_tokens=48,
        eval_levels=(1, 2),
        train_levels=(1, 2),
        eval_problems=4,
        eval_k=2,
    ),
    # the tour: GRPO vs GRPO + RePro with shorter pretraining and RL
    "demo": _replace(
        _BENCH,
        sft_steps=600,
        rl_steps=20,
        eval_problems=24,
    ),
    "bench": _BENCH,  # the README figures
    # The paper's setting with the checkpoint we ship: SmolLM2-135M-Instruct, bf16 on a GPU, warm-
    # started on the re-check data; `--set policy=/path/to/checkpoint` takes any local causal LM.
    "paper": _replace(
        _BENCH,
        seeds=3,
        policy="smollm2",
        dtype="bfloat16",
        sft_steps=2000,
        sft_batch=64,
        sft_lr=2e-5,
        sft_mix=("addition:1-5",),
        rl_steps=500,
        questions_per_step=32,
        lr=1e-6,
        train_levels=(2, 3, 4, 5),
        eval_levels=(1, 2, 3, 4, 5),
        eval_problems=200,
        max_new_tokens=160,
        device="cuda",
    ),
}
SYSTEM = implemented_system("repro_reward", presets=PRESETS, run=run)
