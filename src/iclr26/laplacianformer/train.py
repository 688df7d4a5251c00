"""Train and evaluate a classifier with AdamW + cosine schedule; checkpoints every epoch, resumes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.schedule import warmup_cosine
from iclr26.core.validation import check_int, check_interval
from iclr26.laplacianformer.data import ImageTask


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings shared by every attention type."""

    epochs: int = 30
    """passes over the training images"""
    batch_size: int = 64
    """images per AdamW step"""
    lr: float = 2e-3
    """AdamW peak learning rate"""
    weight_decay: float = 0.05
    """AdamW weight decay"""
    warmup_epochs: int = 2
    """linear warm-up before the cosine decay (epochs)"""
    augment_shift: int = 1
    """random translation by up to this many pixels (0: off)"""

    def __post_init__(self) -> None:
        check_int("epochs", self.epochs, 1)
        check_int("batch_size", self.batch_size, 1)
        check_interval("lr", self.lr, 0, closed=(False, True))
        check_interval("weight_decay", self.weight_decay, 0)
        check_int("warmup_epochs", self.warmup_epochs, 0)
        check_int("augment_shift", self.augment_shift, 0)


def _schedule(cfg: TrainConfig, steps_per_epoch: int) -> Callable[[int], float]:
    total = cfg.epochs * steps_per_epoch
    warm = cfg.warmup_epochs * steps_per_epoch
    return lambda step: warmup_cosine(step, warm, total)


def _shift(x: torch.Tensor, max_shift: int, gen: torch.Generator) -> torch.Tensor:
    if max_shift == 0:
        return x
    dx, dy = (int(v) for v in torch.randint(-max_shift, max_shift + 1, (2,), generator=gen))
    return torch.roll(x, shifts=(dy, dx), dims=(-2, -1))


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 256) -> float:
    """Top-1 accuracy of `model` on (x, y)."""
    model.eval()
    correct = 0
    for i in range(0, len(x), batch_size):
        logits = model(x[i : i + batch_size])
        correct += int((logits.argmax(-1) == y[i : i + batch_size]).sum())
    return correct / len(x)


def train_classifier(
    model: nn.Module,
    task: ImageTask,
    cfg: TrainConfig,
    *,
    seed: int,
    device: torch.device | None = None,
    checkpoint: Path | None = None,
    on_epoch: Callable[[int], None] | None = None,
) -> dict[str, float]:
    """Train `model` on `task`; return test accuracy, final train loss and wall time.

    With `checkpoint`, state (model, optimiser, schedule, RNG, epoch) is saved after every epoch
    and a later call with the same path continues from the last finished epoch.
    """
    device = device or torch.device("cpu")
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps_per_epoch = -(-len(task.x_train) // cfg.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _schedule(cfg, steps_per_epoch))
    gen = torch.Generator().manual_seed(seed)
    start_epoch, elapsed, loss_value = 0, 0.0, float("nan")
    if checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint, device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        gen.set_state(state["gen"])
        start_epoch, elapsed, loss_value = state["epoch"], state["elapsed"], state["loss"]
        if on_epoch and start_epoch:
            on_epoch(start_epoch)  # progress already made before the interruption
    x, y = task.x_train.to(device), task.y_train.to(device)
    for epoch in range(start_epoch, cfg.epochs):
        t0 = time.perf_counter()
        model.train()
        order = torch.randperm(len(x), generator=gen).to(device)
        total = 0.0
        for i in range(0, len(x), cfg.batch_size):
            idx = order[i : i + cfg.batch_size]
            xb = _shift(x[idx], cfg.augment_shift, gen)
            loss = F.cross_entropy(model(xb), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        loss_value = total / len(x)
        elapsed += time.perf_counter() - t0
        if checkpoint is not None:
            save_checkpoint(
                checkpoint,
                {
                    "model": model.state_dict(),
                    "opt": opt.state_dict(),
                    "sched": sched.state_dict(),
                    "gen": gen.get_state(),
                    "epoch": epoch + 1,
                    "elapsed": elapsed,
                    "loss": loss_value,
                },
            )
        if on_epoch:
            on_epoch(1)
    acc = evaluate(model, task.x_test.to(device), task.y_test.to(device))
    return {"test_acc": acc, "train_loss": loss_value, "train_s": elapsed}
