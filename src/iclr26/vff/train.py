"""Training a continuous space-time SR model (V³ or the implicit baseline): random spatial scale
s ~ U(1.2, 4), L1 loss, AdamW with warm-up and cosine decay, gradient clipping at 1 (V³ §4 and the
authors' code). Each clip of a batch is a moving view over a photo (exact targets at random continuous
(x, y, t)) or, with probability `real_fraction`, a crop of a real clip (`clips.RealClips`: targets at its
pixels and frames). With a validation score, the weights scoring best on it are kept, step 0 (the
classical interpolant) included. A checkpoint every `checkpoint_every` steps, resumed exactly
(weights, optimiser, schedule, RNG, the best weights so far).
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.config import ConfigError
from iclr26.core.optim import OptimConfig, adamw_warmup_cosine, clip_gradients
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.vff.clips import Example, RealClips
from iclr26.vff.data import PHOTO_NAMES, ContinuousVideo, Motion, degrade, load_photo, random_motion


@dataclass(frozen=True)
class TrainConfig(OptimConfig):
    """Optimisation (AdamW, warm-up then cosine, clip: `core.optim`) and sampling of training clips."""

    steps: int = 400
    """optimiser steps"""
    batch: int = 4
    """clips per step"""
    lr_frames: int = 4
    """input frames per clip"""
    lr_size: int = 32
    """LR crop side (pixels)"""
    min_scale: float = 1.2
    """smallest spatial scale s drawn per training clip, s ~ U(min_scale, max_scale)"""
    max_scale: float = 4.0
    """largest spatial scale drawn per training clip"""
    queries: int = 2048
    """target points per clip, at random continuous (x, y, t)"""
    weight_decay: float = 1e-4
    """AdamW (decoupled) weight decay"""
    warmup: int = 20
    """linear warm-up steps before the cosine decay"""
    checkpoint_every: int = 50
    """steps between checkpoints"""
    real_fraction: float = 0.0
    """probability that a training clip is a crop of a real clip instead of a moving view over a photo"""
    max_time_factor: int = 8
    """real clips: the time stride τ between input frames is drawn from 1..max_time_factor"""
    validate_every: int = 0
    """steps between validation scores (0: none); with them, the best-scoring weights (step 0 too) are kept"""

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("steps", "batch", "queries", "checkpoint_every", "max_time_factor"):
            check_int(name, getattr(self, name), 1)
        check_int("validate_every", self.validate_every, 0)
        check_interval("real_fraction", self.real_fraction, 0, 1)
        check_int("lr_frames", self.lr_frames, 2)
        check_int("lr_size", self.lr_size, 4)
        check_interval("min_scale", self.min_scale, 1)
        if not self.min_scale <= self.max_scale:
            raise ConfigError(f"need 1 <= min_scale <= max_scale, got {self.min_scale}, {self.max_scale}")


@dataclass
class Batch:
    """Clips (B, T, 3, h, w); queries (B, M, 3) as (t, y, x) in LR units; targets (B, M, 3); scales (B,)."""

    lr: Tensor
    queries: Tensor
    targets: Tensor
    scale: Tensor


def moving_view(photo: ContinuousVideo, rng: np.random.Generator, hr_size: int) -> ContinuousVideo:
    """A random moving view over `photo`, sized so one HR pixel covers about one photo pixel.

    HR targets then carry the photo's own detail instead of aliased point samples of a much finer
    image. `random_motion` draws pans for a view of half the photo; they are scaled to this view so
    the motion per frame stays video-like (a few LR pixels) whatever the view size.
    """
    view = min(0.9, hr_size / min(photo.photo_size))
    m = random_motion(rng)
    m = Motion(m.pan_x * view / 0.5, m.pan_y * view / 0.5, m.zoom, m.rotation)
    return photo.moved(m, view=view, aspect=1.0)


def moving_view_clip(
    rng: np.random.Generator, photo: ContinuousVideo, lr_frames: int, lr_size: int, scale: float
) -> tuple[ContinuousVideo, Tensor]:
    """A random moving view (`moving_view`) and its LR input frames at t = 0..T−1."""
    hr = round(lr_size * scale)
    video = moving_view(photo, rng, hr)
    times = np.arange(lr_frames) / (lr_frames - 1)
    return video, degrade(video.clip(times, hr, hr), scale)


@functools.cache
def photo_video(name: str) -> ContinuousVideo:
    """A still ContinuousVideo of a bundled photo: its spline coefficients, computed once per process."""
    return ContinuousVideo(load_photo(name), Motion())


def photo_example(rng: np.random.Generator, photos: Sequence[str], cfg: TrainConfig, scale: float) -> Example:
    """A moving view over a random photo at spatial scale `scale`, with M random continuous queries and
    their exact targets."""
    photo = photo_video(photos[int(rng.integers(len(photos)))])
    video, lr = moving_view_clip(rng, photo, cfg.lr_frames, cfg.lr_size, scale)
    h = lr.shape[-1]
    t = rng.uniform(0, cfg.lr_frames - 1, cfg.queries)
    y, x = rng.uniform(0, h, (2, cfg.queries))
    # exact targets: the continuous video at (x/w, y/h, t/(T−1))
    rgb = video.sample(x / h, y / h, t / (cfg.lr_frames - 1))
    queries = torch.from_numpy(np.stack([t, y, x], -1)).float()
    # the scale the HR frames were actually rendered at
    return Example(lr, queries, torch.from_numpy(np.clip(rgb, 0, 1)).float(), round(h * scale) / h)


def sample_batch(
    rng: np.random.Generator, photos: Sequence[str], cfg: TrainConfig, clips: RealClips | None = None
) -> Batch:
    """B clips at random scales: real-clip crops with probability `real_fraction`, else photo views."""
    examples = []
    for _ in range(cfg.batch):
        scale = float(rng.uniform(cfg.min_scale, cfg.max_scale))
        if cfg.real_fraction > 0 and rng.random() < cfg.real_fraction:
            examples.append(clips.example(rng, cfg.lr_frames, cfg.lr_size, scale, cfg.queries))
        else:
            examples.append(photo_example(rng, photos, cfg, scale))
    return Batch(
        torch.stack([e.lr for e in examples]),
        torch.stack([e.queries for e in examples]),
        torch.stack([e.targets for e in examples]),
        torch.tensor([e.scale for e in examples]),
    )


@dataclass
class TrainLog:
    """The L1 loss of every step, the validation scores as (step, score), and the step whose weights
    were kept (the best-scoring one; the last step without validation)."""

    losses: list[float]
    validation: list[tuple[int, float]]
    kept_step: int


def train_model(
    model: nn.Module,
    photos: Sequence[str],
    cfg: TrainConfig,
    *,
    clips: RealClips | None = None,
    validate: Callable[[nn.Module], float] | None = None,
    seed: int = 0,
    checkpoint: Path | None = None,
    on_step: Callable[[int, float], None] | None = None,
) -> TrainLog:
    """Train `model` in place on photo views and (`cfg.real_fraction` > 0) crops of `clips`. With
    `cfg.validate_every` > 0, `validate(model)` (higher is better) is scored at step 0 and every
    `validate_every` steps, and the model ends with the best-scoring weights."""
    if cfg.real_fraction < 1 and not photos:
        raise ConfigError("photos: need at least one training photo name (or real_fraction = 1)")
    for name in photos:
        check_in("photos", name, PHOTO_NAMES)
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a vff TrainConfig, got {type(cfg).__name__}")
    if cfg.real_fraction > 0:
        if clips is None:
            raise ConfigError("train.real_fraction > 0 needs real clips to train on (train_clips)")
        clips.check_fits(cfg.lr_frames, round(cfg.lr_size * cfg.max_scale))
    if cfg.validate_every and validate is None:
        raise ConfigError("train.validate_every > 0 needs a validation score (validate=...)")
    opt, sched = adamw_warmup_cosine(model.parameters(), cfg, cfg.steps)
    rng = np.random.default_rng(seed)
    losses: list[float] = []
    scores: list[tuple[int, float]] = []
    best: dict | None = None  # {"step", "score", "model"}: the best-scoring weights so far
    start = 0
    if checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint, next(model.parameters()).device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        losses, start = state["losses"], state["step"]
        scores, best = state.get("validation", []), state.get("best")

    def score(step: int) -> None:
        nonlocal best
        value = float(validate(model))
        scores.append((step, value))
        if best is None or value > best["score"]:
            best = {"step": step, "score": value, "model": copy.deepcopy(model.state_dict())}

    if cfg.validate_every and start == 0:
        score(0)
    for step in range(start, cfg.steps):
        model.train()
        t0 = time.perf_counter()
        batch = sample_batch(rng, photos, cfg, clips)
        dev = next(model.parameters()).device
        pred = model(batch.lr.to(dev), batch.queries.to(dev), batch.scale.to(dev))
        loss = F.l1_loss(pred, batch.targets.to(dev))
        opt.zero_grad()
        loss.backward()
        clip_gradients(model.parameters(), cfg)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if cfg.validate_every and ((step + 1) % cfg.validate_every == 0 or step + 1 == cfg.steps):
            score(step + 1)
        if checkpoint is not None and ((step + 1) % cfg.checkpoint_every == 0 or step + 1 == cfg.steps):
            save_checkpoint(
                checkpoint,
                {
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(),
                    "rng": rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(),
                    "losses": losses,
                    "step": step + 1,
                    "validation": scores,
                    "best": best,
                },
            )
        if on_step is not None:
            on_step(step + 1, time.perf_counter() - t0)
    if best is not None:
        model.load_state_dict(best["model"])
    model.eval()
    return TrainLog(losses, scores, best["step"] if best is not None else cfg.steps)
