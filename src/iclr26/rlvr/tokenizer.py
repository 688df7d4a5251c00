"""A character tokenizer for the arithmetic testbed (and any printable-ASCII text)."""

from __future__ import annotations

import string

import torch

SPECIALS = ("<pad>", "<bos>", "<eos>")


class CharTokenizer:
    """Printable ASCII characters plus <pad>, <bos>, <eos>; unknown characters raise."""

    def __init__(self) -> None:
        chars = [c for c in string.printable if c not in "\t\r\x0b\x0c"]
        self.itos = [*SPECIALS, *chars]
        self.stoi = {c: i for i, c in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        """Token ids of `text` (optionally with <bos>/<eos>)."""
        try:
            ids = [self.stoi[c] for c in text]
        except KeyError as e:
            raise ValueError(f"character {e.args[0]!r} is not in the tokenizer's alphabet") from None
        return ([self.bos_id] if bos else []) + ids + ([self.eos_id] if eos else [])

    def decode(self, ids: list[int] | torch.Tensor) -> str:
        """Text of `ids`, stopping at <eos> and skipping <pad>/<bos>."""
        out = []
        for i in ids.tolist() if isinstance(ids, torch.Tensor) else ids:
            if i == self.eos_id:
                break
            if i >= len(SPECIALS):
                out.append(self.itos[i])
        return "".join(out)
