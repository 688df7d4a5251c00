"""Reward models (the paper's fourth family, §4.1): any local Hugging Face sequence-classification
model, by path, scores each (question, response); the pair's preference is the higher reward.

The input is the model's chat template applied to a user turn (the question) and an assistant turn
(the response) when its tokenizer has one (how Skywork-Reward and most RMs expect it), else the
tokenizer's text pair (question, response). The reward is the single logit of a one-label head,
or logit(last) − logit(first) for a classifier. A model trained here (`evaluator.py`) saves itself
in this format and says which text goes first in `iclr26_input.json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from iclr26.core.errors import UserError
from iclr26.core.validation import check_int
from iclr26.lfqa_e.data import Comparison

INPUT_FILE = "iclr26_input.json"  # {"first": "question" | "reference"} for models trained here
FIRST_TEXTS = ("question", "reference")


class RewardModel:
    """A local sequence-classification model used as a pointwise reward; `score` is batched and
    runs under `torch.inference_mode`."""

    def __init__(self, path: str | Path, *, max_length: int = 512, batch_size: int = 8, device: str = "cpu"):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from iclr26.core.embed import quiet_transformers

        path = Path(path)
        if not (path / "config.json").is_file():
            raise UserError(f"reward model {path} is not a Hugging Face model folder (no config.json)")
        check_int("max_length", max_length, 8)
        check_int("batch_size", batch_size, 1)
        self.path, self.max_length, self.batch_size, self.device = path, max_length, batch_size, device
        with quiet_transformers():
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModelForSequenceClassification.from_pretrained(path).to(device).eval()
        spec = path / INPUT_FILE
        self.first = json.loads(spec.read_text())["first"] if spec.is_file() else "question"
        if self.first not in FIRST_TEXTS:
            raise UserError(f"{spec}: 'first' must be one of {', '.join(FIRST_TEXTS)}, got {self.first!r}")
        self.chat = bool(getattr(self.tokenizer, "chat_template", None))

    def _encode(self, prompts: Sequence[str], responses: Sequence[str]) -> dict:
        if self.chat:
            texts = [
                self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": p}, {"role": "assistant", "content": r}], tokenize=False
                )
                for p, r in zip(prompts, responses, strict=True)
            ]
            return self.tokenizer(
                texts, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt"
            )
        return self.tokenizer(
            list(prompts), list(responses), truncation="longest_first", max_length=self.max_length,
            padding=True, return_tensors="pt",
        )  # fmt: skip

    def score(self, prompts: Sequence[str], responses: Sequence[str]) -> np.ndarray:
        """The reward of each (prompt, response)."""
        import torch

        out = []
        with torch.inference_mode():
            for i in range(0, len(prompts), self.batch_size):
                batch = self._encode(prompts[i : i + self.batch_size], responses[i : i + self.batch_size])
                logits = self.model(**{k: v.to(self.device) for k, v in batch.items()}).logits.float()
                out.append((logits[:, 0] if logits.shape[1] == 1 else logits[:, -1] - logits[:, 0]).cpu())
        return torch.cat(out).numpy().astype(np.float64) if out else np.zeros(0)

    def score_pairs(self, comparisons: Sequence[Comparison]) -> np.ndarray:
        """(n, 2) rewards of each comparison's (response_a, response_b)."""
        return self.score(*pair_texts(comparisons, self.first)).reshape(len(comparisons), 2)


def pair_texts(comparisons: Sequence[Comparison], first: str) -> tuple[list[str], list[str]]:
    """The (first text, response) inputs of each comparison's two sides, a then b: `first` is the
    question or the reference."""
    firsts = [c.question if first == "question" else c.reference for c in comparisons for _ in (0, 1)]
    return firsts, [r for c in comparisons for r in (c.response_a, c.response_b)]


__all__ = ["FIRST_TEXTS", "INPUT_FILE", "RewardModel", "pair_texts"]
