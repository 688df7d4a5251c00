"""Scaf-GRPO: scaffolded GRPO past the learning cliff (arXiv 2510.19807, ICLR 2026).

Public API: `Scaffold` (the GRPO guide hook), `ScafConfig`, the hint tiers (`hint_ladder`,
`hint_text`), and `SYSTEM` for `iclr26 run scaf_grpo`.
"""

from dataclasses import replace

from iclr26.catalog import implemented_system
from iclr26.scaf_grpo.hints import TIERS, Hint, hint_ladder, hint_text
from iclr26.scaf_grpo.scaffold import ScafConfig, Scaffold
from iclr26.scaf_grpo.system import ScafGRPOConfig, run

_BENCH = ScafGRPOConfig()
PRESETS = {
    "smoke": replace(
        _BENCH,
        dim=32,
        layers=1,
        heads=2,
        sft_steps=20,
        sft_batch=16,
        rl_steps=4,
        questions_per_step=2,
        group_size=4,
        warmup_steps=1,
        train_levels=(1, 4),
        eval_levels=(1, 4),
        eval_problems=4,
        eval_k=2,
        max_new_tokens=48,
    ),
    # the tour: the cliff table and GRPO vs Scaf-GRPO, with shorter pretraining and RL
    "demo": replace(
        _BENCH,
        sft_steps=400,
        rl_steps=16,
        eval_problems=24,
        eval_k=4,
    ),
    "bench": _BENCH,  # the README figures
    # The paper's scale (Qwen2.5-Math-7B on verl, 8 GPUs) with the checkpoint we ship: SmolLM2-135M-
    # Instruct, bf16 on a GPU; `--set policy=/path/to/checkpoint` takes any local causal LM.
    # Launch on several GPUs with `torchrun --nproc-per-node N -m iclr26.cli run scaf_grpo ...`.
    "paper": replace(
        _BENCH,
        seeds=3,
        policy="smollm2",
        dtype="bfloat16",
        sft_steps=2000,
        sft_batch=64,
        sft_lr=2e-5,
        sft_mix=("addition:1-6",),
        sft_plain_max_level=4,
        rl_steps=500,
        questions_per_step=32,
        lr=1e-6,
        max_new_tokens=160,
        train_levels=(3, 4, 5, 6),
        warmup_steps=50,
        eval_levels=(1, 2, 3, 4, 5, 6, 7),
        eval_problems=200,
        device="cuda",
    ),
}

SYSTEM = implemented_system("scaf_grpo", presets=PRESETS, run=run)

__all__ = ["SYSTEM", "TIERS", "Hint", "ScafConfig", "ScafGRPOConfig", "Scaffold", "hint_ladder", "hint_text"]
