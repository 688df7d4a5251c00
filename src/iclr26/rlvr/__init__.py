"""Shared RL-from-verifiable-rewards testbed: arithmetic tasks with worked solutions and
verifiers, the `Policy` interface (a character transformer, or any local Hugging Face causal LM)
with KV-cached seeded sampling, supervised warm start, GRPO (data-parallel under torchrun), and
the experiment harness that warm-starts a policy and trains GRPO arms from it with named seed
streams (`rlvr.experiment`).

Used by `scaf_grpo` and `repro_reward`.
"""

from iclr26.rlvr.experiment import SEED_STREAMS, Arm, Experiment, RLVRConfig, stream_seed
from iclr26.rlvr.grpo import GRPOConfig, GRPOTrainer, Rollout, group_advantages, grpo_loss, pass_at_k
from iclr26.rlvr.hf_policy import HFPolicy, smollm2_policy
from iclr26.rlvr.model import CharTransformer, ModelConfig, generate, token_logprobs
from iclr26.rlvr.policies import PolicyConfig, build_policy
from iclr26.rlvr.policy import CharPolicy, Policy
from iclr26.rlvr.sft import SFTConfig, pretrain
from iclr26.rlvr.tasks import GENERATORS, Problem, make_problems, verify
from iclr26.rlvr.tokenizer import CharTokenizer

__all__ = [
    "GENERATORS",
    "SEED_STREAMS",
    "Arm",
    "CharPolicy",
    "CharTokenizer",
    "CharTransformer",
    "Experiment",
    "GRPOConfig",
    "GRPOTrainer",
    "HFPolicy",
    "ModelConfig",
    "Policy",
    "PolicyConfig",
    "Problem",
    "RLVRConfig",
    "Rollout",
    "SFTConfig",
    "build_policy",
    "generate",
    "group_advantages",
    "grpo_loss",
    "make_problems",
    "pass_at_k",
    "pretrain",
    "smollm2_policy",
    "stream_seed",
    "token_logprobs",
    "verify",
]
