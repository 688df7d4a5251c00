"""The optimiser settings the training loops share: AdamW with a linear warm-up then cosine decay,
and the gradient-norm clip. A system's training config inherits `OptimConfig` (redeclaring a field
to change its default), so `train.lr`, `train.weight_decay`, `train.warmup` and `train.grad_clip`
mean the same thing in every system that has them (vff and vincie). The other trainers keep their
own fields because theirs mean something else: laplacianformer warms up in epochs, slt_reliability
uses Adam with an inverse-square-root schedule (the Transformer's), deepfaith Adam with L2 decay."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from iclr26.core.schedule import warmup_cosine
from iclr26.core.validation import check_int, check_interval


@dataclass(frozen=True)
class OptimConfig:
    """AdamW, warm-up then cosine decay, gradient clipping."""

    lr: float = 1e-3
    """AdamW peak learning rate"""
    weight_decay: float = 0.0
    """AdamW (decoupled) weight decay"""
    warmup: int = 0
    """linear warm-up steps before the cosine decay"""
    grad_clip: float = 1.0
    """largest gradient norm (clip_grad_norm_); 0: no clipping"""

    def __post_init__(self) -> None:
        check_interval("lr", self.lr, 0, closed=(False, True))
        check_interval("weight_decay", self.weight_decay, 0)
        check_int("warmup", self.warmup, 0)
        check_interval("grad_clip", self.grad_clip, 0)


def adamw_warmup_cosine(
    params: Iterable[torch.nn.Parameter], cfg: OptimConfig, total_steps: int, floor: float = 0.0
) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW at `cfg.lr` and its schedule: `cfg.warmup` linear steps, then cosine decay to
    `floor` x lr at `total_steps` (step the scheduler once per optimiser step)."""
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, cfg.warmup, total_steps, floor))
    return opt, sched


def clip_gradients(params: Iterable[torch.nn.Parameter], cfg: OptimConfig) -> None:
    """Clip the gradients' total norm to `cfg.grad_clip` (nothing when it is 0)."""
    if cfg.grad_clip > 0:
        torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
