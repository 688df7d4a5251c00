"""Shared RL-from-verifiable-rewards testbed: arithmetic tasks with worked solutions and
verifiers, a character-level policy with KV-cached sampling, supervised warm start, and GRPO.

Used by `scaf_grpo` and `repro_reward`.
"""

from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer, Rollout, group_advantages, grpo_loss, pass_at_k
from iclr26.rlvr.model import CharTransformer, ModelConfig, generate, token_logprobs
from iclr26.rlvr.sft import SFTConfig, pretrain
from iclr26.rlvr.tasks import GENERATORS, Problem, make_problems, verify
from iclr26.rlvr.tokenizer import CharTokenizer

__all__ = [
    "GENERATORS",
    "CharTokenizer",
    "CharTransformer",
    "GRPOConfig",
    "GRPOTrainer",
    "ModelConfig",
    "Problem",
    "Rollout",
    "SFTConfig",
    "generate",
    "group_advantages",
    "grpo_loss",
    "make_problems",
    "pass_at_k",
    "pretrain",
    "token_logprobs",
    "verify",
]
