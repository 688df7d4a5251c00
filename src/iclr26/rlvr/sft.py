"""Supervised pretraining of the policy on worked solutions of easy levels (the warm start
before RL); optionally with hint lines, so that a from-scratch model learns to read hints."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.schedule import warmup_cosine
from iclr26.core.validation import check_int, check_interval
from iclr26.rlvr.policy import Policy
from iclr26.rlvr.tasks import GENERATORS, MAX_LEVELS, Problem

HintSampler = Callable[[Problem, np.random.Generator], str | None]
Transform = Callable[[Problem, np.random.Generator], Problem]


@dataclass(frozen=True)
class SFTConfig:
    """Pretraining settings (the seed of its batches is `pretrain`'s `seed`)."""

    steps: int = 1500
    """supervised steps of the warm start (linear warm-up over 5%, then cosine decay to 10%);
    0: no warm start (a pretrained model as it is)"""
    batch_size: int = 64
    """worked solutions per step"""
    lr: float = 2e-3
    """peak AdamW learning rate"""
    mix: tuple[str, ...] = ("addition:1-3",)
    """the problems seen: "task:lo-hi" (or "task:level") entries, a (task, level) pair drawn uniformly"""

    def __post_init__(self) -> None:
        parse_mix(self.mix)
        check_int("steps", self.steps, 0)
        check_int("batch_size", self.batch_size, 1)
        check_interval("lr", self.lr, 0, None, closed=(False, True))


def parse_mix(mix: tuple[str, ...]) -> list[tuple[str, int]]:
    """("addition:1-3", "multiplication:2") → [(task, level), ...]; errors name the entry."""
    pairs = []
    for entry in mix:
        task, _, levels = entry.partition(":")
        if task not in GENERATORS:
            raise ValueError(f"mix entry {entry!r}: task must be one of {tuple(GENERATORS)}")
        try:
            lo, _, hi = levels.partition("-")
            lo_i, hi_i = int(lo), int(hi or lo)
        except ValueError:
            raise ValueError(f"mix entry {entry!r}: write task:level or task:lo-hi") from None
        if not 1 <= lo_i <= hi_i <= MAX_LEVELS[task]:
            raise ValueError(f"mix entry {entry!r}: levels must satisfy 1 <= lo <= hi <= {MAX_LEVELS[task]}")
        pairs += [(task, lv) for lv in range(lo_i, hi_i + 1)]
    if not pairs:
        raise ValueError("mix is empty: give at least one task:levels entry")
    return pairs


def sft_pair(problem: Problem, policy: Policy, hint: str | None = None) -> tuple[list[int], list[int]]:
    """(prompt ids, target ids ending in <eos>) for one problem, encoded by `policy`."""
    prompt = problem.prompt if hint is None else problem.hinted_prompt(hint)
    return policy.encode_prompt(prompt), policy.encode_target(problem.solution)


def pretrain(
    policy: Policy,
    cfg: SFTConfig,
    *,
    seed: int = 0,
    hint_sampler: HintSampler | None = None,
    transform: Transform | None = None,
    checkpoint: Path | None = None,
    on_step: Callable[[int], None] | None = None,
) -> dict[str, float]:
    """Train on random easy problems drawn from `seed`; returns the final loss and wall time.
    Resumable from `checkpoint`."""
    model = policy.module
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    warm = max(1, cfg.steps // 20)

    # linear warm-up, then cosine decay to 10%
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: warmup_cosine(step, warm, cfg.steps, floor=0.1)
    )
    rng = np.random.default_rng(seed)
    pairs = parse_mix(cfg.mix)
    start, elapsed, loss_v = 0, 0.0, float("nan")
    if checkpoint is not None and checkpoint.exists():
        st = load_checkpoint(checkpoint)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        sched.load_state_dict(st["sched"])
        rng.bit_generator.state = st["rng"]
        start, elapsed, loss_v = st["step"], st["elapsed"], st["loss"]
        if on_step and start:
            on_step(start)  # progress already made before the interruption
    model.train()
    for step in range(start, cfg.steps):
        t0 = time.perf_counter()
        prompts, targets = [], []
        for _ in range(cfg.batch_size):
            task, level = pairs[int(rng.integers(len(pairs)))]
            prob = GENERATORS[task](level, rng)
            if transform is not None:  # e.g. RePro's testbed appends re-check lines to the solution
                prob = transform(prob, rng)
            hint = hint_sampler(prob, rng) if hint_sampler else None
            p, t = sft_pair(prob, policy, hint)
            prompts.append(p)
            targets.append(t)
        logp, mask, _ = policy.token_logprobs(prompts, targets)
        loss = -(logp * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        loss_v = float(loss.detach())
        elapsed += time.perf_counter() - t0
        last = step + 1 == cfg.steps
        if checkpoint is not None and ((step + 1) % 200 == 0 or last):
            save_checkpoint(
                checkpoint,
                {
                    "model": model.state_dict(),
                    "opt": opt.state_dict(),
                    "sched": sched.state_dict(),
                    "rng": rng.bit_generator.state,
                    "step": step + 1,
                    "elapsed": elapsed,
                    "loss": loss_v,
                },
            )
        if on_step:
            on_step(1)
    return {"loss": loss_v, "seconds": elapsed}
