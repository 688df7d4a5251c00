"""The policy interface that GRPO, supervised warm start and Scaf-GRPO's scaffold talk to, and
its implementation for the character transformer.

A policy owns a trainable `module` and knows how to turn text into prompt/target token ids, ids
back into text, sample completions (KV-cached, left-padded, seeded by a `torch.Generator`) and
score completions token by token. `HFPolicy` (`rlvr.hf_policy`) is the same interface over a
Hugging Face causal LM.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch
from torch import nn

from iclr26.rlvr.model import CharTransformer, generate, token_logprobs
from iclr26.rlvr.tokenizer import CharTokenizer

Scores = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


@runtime_checkable
class Policy(Protocol):
    """A language-model policy over token-id lists.

    Attributes
    ----------
    module : nn.Module
        The trainable network (parameters, state_dict, train/eval).
    eos_id, pad_id : int
        End-of-sequence and padding token ids.
    """

    module: nn.Module
    eos_id: int
    pad_id: int

    def encode_prompt(self, text: str) -> list[int]:
        """Token ids of a prompt, ready for sampling (with <bos> or the chat template)."""
        ...

    def encode_target(self, text: str) -> list[int]:
        """Token ids of a supervised target, ending with <eos>."""
        ...

    def decode(self, ids: list[int]) -> str:
        """Text of completion ids, stopping at <eos>, without special tokens."""
        ...

    def sample(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
    ) -> list[list[int]]:
        """One completion per prompt (each ends at its <eos> if one was sampled); temperature 0 is
        greedy."""
        ...

    def token_logprobs(
        self, prompts: list[list[int]], completions: list[list[int]], *, module: nn.Module | None = None
    ) -> Scores:
        """(log-probs, mask, entropies), each (N, T), of the completion tokens given the prompts.

        `module`, when given, is a wrapper of `self.module` (DistributedDataParallel) that the
        forward pass runs through.
        """
        ...


class CharPolicy:
    """`Policy` over `CharTransformer` + `CharTokenizer` (prompts start with <bos>)."""

    def __init__(self, model: CharTransformer, tok: CharTokenizer) -> None:
        if model.cfg.vocab_size < tok.vocab_size:
            raise ValueError(
                f"model.cfg.vocab_size={model.cfg.vocab_size} is smaller than the tokenizer's "
                f"{tok.vocab_size}: build the model with ModelConfig(tok.vocab_size, ...)"
            )
        self.module, self.tok = model, tok
        self.eos_id, self.pad_id = tok.eos_id, tok.pad_id

    def encode_prompt(self, text: str) -> list[int]:
        """<bos> + characters of `text`."""
        return self.tok.encode(text, bos=True)

    def encode_target(self, text: str) -> list[int]:
        """Characters of `text` + <eos>."""
        return self.tok.encode(text, eos=True)

    def decode(self, ids: list[int]) -> str:
        """Characters up to the first <eos>."""
        return self.tok.decode(ids)

    def sample(
        self,
        prompts: list[list[int]],
        max_new_tokens: int,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
    ) -> list[list[int]]:
        """KV-cached sampling with `rlvr.model.generate`."""
        return generate(
            self.module,
            prompts,
            max_new_tokens=max_new_tokens,
            eos_id=self.eos_id,
            pad_id=self.pad_id,
            temperature=temperature,
            generator=generator,
        )

    def token_logprobs(
        self, prompts: list[list[int]], completions: list[list[int]], *, module: nn.Module | None = None
    ) -> Scores:
        """`rlvr.model.token_logprobs` of the completions, optionally through a wrapper `module`."""
        return token_logprobs(self.module if module is None else module, prompts, completions, self.pad_id)
