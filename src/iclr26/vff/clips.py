"""Real video as training data for continuous space-time SR: random crops of a clip's frames at a random
spatial scale and time stride, degraded by the same antialiased bicubic as at evaluation, with targets at
the clip's own pixels and frames.

A real clip has ground truth only on its pixel grid and at its frames, so the queries of one example are
HR pixel centres of the frames between (and at) the input frames: frame f of the crop is at time f/τ in
input-frame units and pixel (i, j) of the H×H crop at (y, x) = ((i + ½)·h/H, (j + ½)·h/H) in LR pixels.
Each clip's frames are split in time: the first part trains, the last `validation_fraction` is held out
for validation (`validation_cases`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int, check_interval
from iclr26.vff.data import degrade, frames_to_clip, read_frames


@functools.lru_cache(maxsize=4)
def clip_frames(source: str) -> np.ndarray:
    """All frames of a clip as uint8 (T, H, W, 3), decoded once per process (bigbuckbunny: 365 MB)."""
    frames = read_frames(source)
    frames.setflags(write=False)
    return frames


def split_frames(n: int, validation_fraction: float) -> tuple[range, range]:
    """(training frames, held-out validation frames): the last ⌈n·fraction⌉ frames are held out."""
    held = int(np.ceil(n * validation_fraction))
    return range(0, n - held), range(n - held, n)


@dataclass
class Example:
    """One training clip: LR frames (T, 3, h, w), queries (M, 3) as (t, y, x) in LR units, targets
    (M, 3), the scale H/h the HR crop was degraded by, and the time stride between input frames (1
    for photo views, whose time is continuous)."""

    lr: Tensor
    queries: Tensor
    targets: Tensor
    scale: float
    tau: int = 1


class RealClips:
    """Training examples cut from the training frames of real clips (`split_frames`)."""

    def __init__(
        self, sources: Sequence[str], validation_fraction: float = 0.25, max_time_factor: int = 8
    ) -> None:
        if not sources:
            raise ConfigError("train_clips: name at least one clip to train on real video")
        check_interval("validation_fraction", validation_fraction, 0, 1, closed=(True, False))
        check_int("max_time_factor", max_time_factor, 1)
        self.sources = tuple(str(s) for s in sources)
        self.max_time_factor = max_time_factor
        self.frames = [clip_frames(s) for s in self.sources]
        self.train_frames = [split_frames(len(f), validation_fraction)[0] for f in self.frames]

    def check_fits(self, lr_frames: int, hr_side: int) -> None:
        """Raise ConfigError if a clip's training frames cannot hold T input frames at the largest
        time stride, or its frames are smaller than the largest HR crop."""
        span = (lr_frames - 1) * self.max_time_factor + 1
        for source, frames, usable in zip(self.sources, self.frames, self.train_frames, strict=True):
            if len(usable) < span:
                raise ConfigError(
                    f"train_clips: {source!r} has {len(usable)} training frames, fewer than the {span} that "
                    f"{lr_frames} input frames at time factor {self.max_time_factor} span"
                )
            if min(frames.shape[1:3]) < hr_side:
                raise ConfigError(
                    f"train_clips: {source!r} is {frames.shape[1]}×{frames.shape[2]}, smaller than the "
                    f"{hr_side}² HR crop of the largest training scale"
                )

    def example(
        self, rng: np.random.Generator, lr_frames: int, lr_size: int, scale: float, queries: int
    ) -> Example:
        """A random crop at spatial scale `scale` and a random time stride τ ∈ 1..max_time_factor, flipped
        left-right and reversed in time with probability ½ each, with `queries` random pixel targets."""
        k = int(rng.integers(len(self.sources)))
        frames, usable = self.frames[k], self.train_frames[k]
        tau = int(rng.integers(1, self.max_time_factor + 1))
        span = (lr_frames - 1) * tau + 1
        start = usable.start + int(rng.integers(len(usable) - span + 1))
        side = round(lr_size * scale)
        top = int(rng.integers(frames.shape[1] - side + 1))
        left = int(rng.integers(frames.shape[2] - side + 1))
        crop = frames[start : start + span, top : top + side, left : left + side]
        if rng.random() < 0.5:
            crop = crop[:, :, ::-1]
        if rng.random() < 0.5:
            crop = crop[::-1]
        hr = frames_to_clip(crop)
        lr = degrade(hr[::tau], scale)  # input frame k is crop frame k·τ
        h = lr.shape[-1]
        f = rng.integers(0, span, queries)
        i, j = rng.integers(0, side, (2, queries))
        q = np.stack([f / tau, (i + 0.5) * h / side, (j + 0.5) * h / side], -1)
        targets = hr[torch.from_numpy(f), :, torch.from_numpy(i), torch.from_numpy(j)]  # (M, 3)
        return Example(lr, torch.from_numpy(q).float(), targets, side / h, tau)
