"""Scaf-GRPO's guidance: hinted attempts for questions past the learning cliff.

After a guidance-exemption warm-up of `warmup_steps` updates, every group whose G rollouts all
score 0 (zero variance, so zero GRPO gradient) gets hinted attempts along the hint ladder
(Knowledge 1..4 → Planning 1..4 → Solution 1..4). The lowest rung whose attempt earns reward
replaces one failed rollout, so the group's advantage becomes non-zero. The replacement's
log-probs are taken under the hinted prompt, or — `graft=True` — the hinted response is grafted
onto the plain prompt.

We sample one attempt at every rung in a single batch and keep the lowest rung that succeeded,
which has the outcome of trying the rungs in order (one attempt each) at a twelfth of the
sequential generation calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import torch

from iclr26.core.validation import check_int
from iclr26.rlvr.grpo import Rollout
from iclr26.rlvr.policy import Policy
from iclr26.rlvr.tasks import verify
from iclr26.scaf_grpo.hints import TIERS, check_tiers, hint_ladder

Sampler = Callable[[list[list[int]], torch.Generator], list[list[int]]]


@dataclass(frozen=True)
class ScafConfig:
    """Scaf-GRPO's guidance settings (defaults: the released 50-step warm-up, all three tiers)."""

    warmup_steps: int = 50
    """guidance exemption: updates before any hinted replacement (the release: 50)"""
    tiers: tuple[str, ...] = TIERS
    """hint tiers on the ladder, in order (the release comments planning out)"""
    graft: bool = False
    """score a replacement under the plain prompt (grafted) instead of its hinted prompt"""

    def __post_init__(self) -> None:
        check_tiers(self.tiers)
        check_int("warmup_steps", self.warmup_steps, 0)


class Scaffold:
    """The `guide` hook of `GRPOTrainer` that implements Scaf-GRPO's hinted replacement.

    `policy` encodes hinted prompts and decodes attempts; `sampler(prompts, generator)` draws the
    attempts (normally `GRPOTrainer.sample`: the trainer's length and temperature).
    """

    def __init__(self, policy: Policy, sampler: Sampler, cfg: ScafConfig) -> None:
        self.policy, self.sampler, self.cfg = policy, sampler, cfg
        self.rungs_used: Counter[str] = Counter()
        self.failed_ladders = 0

    def __call__(self, groups: list[list[Rollout]], step: int, gen: torch.Generator) -> list[list[Rollout]]:
        """Replace one failed rollout in each all-zero group by the lowest successful hinted one."""
        if step < self.cfg.warmup_steps:
            return groups
        stuck = [i for i, g in enumerate(groups) if all(r.reward == 0 for r in g)]
        if not stuck:
            return groups
        ladders = [hint_ladder(groups[i][0].problem, self.cfg.tiers) for i in stuck]
        prompts = [
            self.policy.encode_prompt(groups[i][0].problem.hinted_prompt(h.text))
            for i, ladder in zip(stuck, ladders, strict=True)
            for h in ladder
        ]
        outs = self.sampler(prompts, gen)
        k = 0
        for i, ladder in zip(stuck, ladders, strict=True):
            problem = groups[i][0].problem
            chosen = None
            for j, hint in enumerate(ladder):
                if chosen is None and verify(problem, self.policy.decode(outs[k + j])).reward > 0:
                    chosen = (j, hint)
            if chosen is None:
                self.failed_ladders += 1
            else:
                j, hint = chosen
                prompt = groups[i][0].prompt_ids if self.cfg.graft else prompts[k + j]
                groups[i] = [
                    Rollout(
                        problem,
                        prompt,
                        outs[k + j],
                        1.0,
                        True,
                        hint=hint.text,
                        hint_level=hint.rank,
                        text=self.policy.decode(outs[k + j]),
                    ),
                    *groups[i][1:],
                ]
                self.rungs_used[f"{hint.tier}-{hint.level}"] += 1
            k += len(ladder)
        return groups
