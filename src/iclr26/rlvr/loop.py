"""A resumable RL run: `GRPOTrainer` updates on a stream of fresh problems, checkpointed so that an
interrupted run continues from its last checkpoint with the same problems and samples."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.rlvr.grpo import GRPOTrainer
from iclr26.rlvr.tasks import GENERATORS

CHECKPOINT_EVERY = 10


def train_steps(
    trainer: GRPOTrainer,
    task: str,
    train_levels: tuple[int, ...],
    steps: int,
    seed: int,
    checkpoint: Path,
    advance: Callable[[int], None],
    *,
    record: Callable[[], dict[str, float]] | None = None,
    save_extra: Callable[[], dict[str, Any]] | None = None,
    load_extra: Callable[[dict[str, Any]], None] | None = None,
    style: str = "scratchpad",
    checkpoint_every: int = CHECKPOINT_EVERY,
) -> list[dict]:
    """Run `trainer` to `steps` updates and return one metrics dict per step.

    Each question's level is drawn from `train_levels`; its prompt is in `style` (`rlvr.tasks`).
    `record()` adds to each step's metrics.
    `save_extra()` / `load_extra(state)` carry a caller's own state in the checkpoint, which is
    written every `checkpoint_every` steps and at the end.
    """
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    history: list[dict] = []
    if checkpoint.exists():
        state = load_checkpoint(checkpoint)
        trainer.load_state_dict(state["trainer"])
        gen.set_state(state["gen"])
        rng.bit_generator.state = state["rng"]
        history = state["history"]
        if load_extra is not None:
            load_extra(state)
        advance(len(history))
    while trainer.step_idx < steps:
        levels = rng.choice(train_levels, size=trainer.cfg.questions_per_step)
        problems = [replace(GENERATORS[task](int(lv), rng), style=style) for lv in levels]
        metrics = trainer.step(problems, gen)
        history.append({**metrics, **(record() if record else {})})
        if trainer.step_idx % checkpoint_every == 0 or trainer.step_idx == steps:
            state = {"trainer": trainer.state_dict(), "gen": gen.get_state(), "rng": rng.bit_generator.state}
            save_checkpoint(checkpoint, {**state, "history": history, **(save_extra() if save_extra else {})})
        advance(1)  # after the checkpoint: a step reported done is a step kept
    return history
