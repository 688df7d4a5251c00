"""Reasoning segments of a response and their selection by first-token entropy (RePro, arXiv
2512.01925: to keep the cost down, the thinking text is split into segments on blank lines and only
the top-k segments whose first token has the highest entropy are scored).

A segment is a run of text ending with (and including) the separator; runs of separators stay
with the segment before them, and a separator-only piece joins the segment after it. With a `stop`
marker the reasoning ends at the first segment that starts with it (the answer, not reasoning).

The paper splits on blank lines (`sep="\\n\\n"`). The arithmetic testbed writes one step a line and
its answer line starts with `A:`, so there `sep="\\n"`, `stop="A:"`.

Segments are found in the decoded text, then mapped to completion tokens: the token end of a
segment is the shortest token prefix whose decoded text covers the segment's last character. A
token that straddles a boundary (a BPE token such as "\\n\\nThe") goes to the earlier segment; a
segment left with no token of its own is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

Span = tuple[int, int]


def split_segments(text: str, sep: str = "\n\n", stop: str | None = None) -> list[Span]:
    """Character spans [start, end) of the reasoning segments of `text` (separator included)."""
    if not sep:
        raise ValueError("sep must be a non-empty string (the paper's is '\\n\\n'; the testbed's '\\n')")
    spans: list[Span] = []
    start = pos = 0
    while pos < len(text):
        if stop is not None and text[pos:].lstrip().startswith(stop):
            break
        i = text.find(sep, pos)
        end = len(text) if i < 0 else i + len(sep)
        while text.startswith(sep, end):  # a run of separators stays with this segment
            end += len(sep)
        if text[pos:end].strip():
            spans.append((start, end))
            start = end
        pos = end  # a blank piece joins the next segment (start stays)
    return spans


def token_cuts(decode: Callable[[list[int]], str], ids: Sequence[int], char_ends: Sequence[int]) -> list[int]:
    """For each character offset c, the smallest n with len(decode(ids[:n])) >= c (binary search)."""
    ids = list(ids)
    cache: dict[int, int] = {}

    def length(n: int) -> int:
        if n not in cache:
            cache[n] = len(decode(ids[:n]))
        return cache[n]

    cuts = []
    for c in char_ends:
        lo, hi = 0, len(ids)
        while lo < hi:
            mid = (lo + hi) // 2
            if length(mid) >= c:
                hi = mid
            else:
                lo = mid + 1
        cuts.append(lo)
    return cuts


@dataclass(frozen=True)
class Segments:
    """The reasoning segments of one completion.

    Attributes
    ----------
    text : str
        The decoded completion.
    spans : tuple of (start, end)
        Character span of each segment in `text`.
    token_spans : tuple of (start, end)
        Completion-token span of each segment; contiguous from token 0, every one non-empty.
    """

    text: str
    spans: tuple[Span, ...]
    token_spans: tuple[Span, ...]

    def __len__(self) -> int:
        return len(self.token_spans)


def segment_completion(
    decode: Callable[[list[int]], str], completion: Sequence[int], sep: str = "\n\n", stop: str | None = None
) -> Segments:
    """Segments of a completion (token ids), in characters of its decoded text and in tokens."""
    text = decode(list(completion))
    spans = split_segments(text, sep, stop)
    cuts = token_cuts(decode, completion, [e for _, e in spans])
    kept_spans, token_spans, prev = [], [], 0
    for span, cut in zip(spans, cuts, strict=True):
        if cut > prev:  # a segment without a token of its own is dropped
            kept_spans.append(span)
            token_spans.append((prev, cut))
            prev = cut
    return Segments(text, tuple(kept_spans), tuple(token_spans))


def first_token_entropy(segments: Segments, entropy: torch.Tensor) -> torch.Tensor:
    """Entropy (k,) of the predictive distribution at the first token of each segment.

    `entropy` is this completion's row of `Policy.token_logprobs`' entropies, shape (T,).
    """
    if not len(segments):
        return entropy.new_zeros(0)
    starts = torch.tensor([s for s, _ in segments.token_spans], device=entropy.device)
    if int(starts.max()) >= entropy.shape[0]:
        raise ValueError(
            f"entropy has {entropy.shape[0]} positions but a segment starts at token {int(starts.max())}: "
            "pass the entropies of this same completion"
        )
    return entropy[starts]


def select_top_k(scores: torch.Tensor | Sequence[float], k: int) -> list[int]:
    """Indices of the k highest scores (earlier index first on ties), in increasing index order."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1 (the paper uses 10-30), got {k!r}")
    s = torch.as_tensor(scores, dtype=torch.float64).flatten().cpu()
    order = sorted(range(len(s)), key=lambda i: (-float(s[i]), i))
    return sorted(order[:k])
