"""Supervisory signals from prior explanations: deduplicating, then faithfulness-based filtering.

DeepFaith §4 (and the released code's `dedup_saliency.py` / `filter.py`):
1. deduplicate, per input: two methods whose maps have cosine similarity ≥ τ are duplicates; the
   methods are visited in a fixed order and the first of each duplicate group is kept;
2. filter, per input: score every remaining map on every metric; for each metric take the
   p-quantile of the scores across methods (the (1−p)-quantile for lower-is-better metrics);
   a map survives only if it is at least as good as that quantile on every metric;
3. every surviving (input, map) pair is one training pair of the pattern-consistency loss
   (no averaging of maps).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from iclr26.core.validation import check_interval


def deduplicate(maps: dict[str, Tensor], threshold: float = 0.9, order: Tensor | None = None) -> Tensor:
    """(B, M) bool: which of the M methods (in `maps` order) are kept for each input.

    Methods are visited in `order` (B, M) — a permutation per input, e.g. `quality_order` — or in
    `maps` order; each kept method removes its later-visited duplicates.
    """
    if not maps:
        raise ValueError("deduplicate needs at least one method's maps")
    check_interval("threshold", threshold, 0, 1, closed=(False, True))
    stack = torch.stack(list(maps.values()), 1).double()  # (B, M, d)
    b, m = stack.shape[:2]
    if order is None:
        order = torch.arange(m, device=stack.device).expand(b, m)
    if order.shape != (b, m):
        raise ValueError(f"order must have shape ({b}, {m}), got {tuple(order.shape)}")
    order = order.to(stack.device)
    unit = stack / stack.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    cosine = unit @ unit.transpose(1, 2)  # (B, M, M)
    removed = torch.zeros(b, m, dtype=torch.bool, device=stack.device)
    rows = torch.arange(b, device=stack.device)
    visited = torch.zeros(b, m, dtype=torch.bool, device=stack.device)
    for step in range(m):  # greedy: a kept method removes the duplicates not yet visited
        j = order[:, step]
        visited[rows, j] = True
        dup = (cosine[rows, j] >= threshold) & ~visited & ~removed[rows, j][:, None]
        removed |= dup
    return ~removed


def quality_order(scores: dict[str, Tensor], higher_is_better: dict[str, bool]) -> Tensor:
    """(B, M) per-input visiting order for `deduplicate`: best average rank over the metrics first."""
    from scipy.stats import rankdata

    ranks = []
    for name, s in scores.items():
        signed = -s.double() if higher_is_better[name] else s.double()
        ranks.append(torch.from_numpy(rankdata(signed.cpu().numpy(), axis=1)))
    return torch.stack(ranks).mean(0).argsort(dim=1, stable=True)


def faithfulness_filter(
    scores: dict[str, Tensor], higher_is_better: dict[str, bool], candidates: Tensor, p: float = 0.2
) -> Tensor:
    """(B, M) bool: candidates that pass the p-quantile on every metric.

    `scores[metric]` is (B, M): each method's score for each input; `candidates` (B, M) marks the
    methods that take part (the deduplicated ones). Quantiles are taken over each input's candidates.
    """
    check_interval("p", p, 0, 1, closed=(True, False))
    missing = set(scores) - set(higher_is_better)
    if missing:
        raise ValueError(f"no direction given for metrics {sorted(missing)}")
    cand = candidates.cpu()
    keep = cand.clone()
    for name, s in scores.items():
        if s.shape != cand.shape:
            raise ValueError(
                f"scores[{name!r}] has shape {tuple(s.shape)}, expected {tuple(candidates.shape)}"
            )
        s = s.double().cpu()
        for i in range(len(s)):
            pool = s[i][cand[i]]
            if pool.numel() == 0:
                continue
            if higher_is_better[name]:
                keep[i] &= s[i] >= torch.quantile(pool, p)
            else:
                keep[i] &= s[i] <= torch.quantile(pool, 1 - p)
    return keep


@dataclass
class SupervisedPairs:
    """The training pairs Z = ∪_i {(x_i, c_i, a_ik)}: input index, method index and map."""

    index: Tensor  # (N,) long: which input
    method: Tensor  # (N,) long: which prior method
    maps: Tensor  # (N, d)
    methods: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        """How many pairs each method contributed."""
        return {m: int((self.method == k).sum()) for k, m in enumerate(self.methods)}


def supervised_pairs(maps: dict[str, Tensor], keep: Tensor) -> SupervisedPairs:
    """Collect the kept (input, map) pairs."""
    stack = torch.stack(list(maps.values()), 1)
    idx, meth = keep.nonzero(as_tuple=True)
    return SupervisedPairs(idx, meth, stack[idx, meth], tuple(maps))
