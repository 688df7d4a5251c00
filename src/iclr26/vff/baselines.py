"""Baselines for space-time video super-resolution: for now the classical one, linear interpolation
in time followed by bicubic resizing in space.

A clip is a float tensor (T, 3, H, W), RGB in [0, 1]; frame times lie in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from iclr26.core.validation import check_finite_tensor, check_int

# Output times may overshoot the clip's range by this much (float round-off in k/(T−1)); they are
# then clamped onto the range.
TIME_TOLERANCE = 1e-6


def _as_times(times: Tensor | Sequence[float], name: str) -> Tensor:
    """A 1-D, finite float64 CPU tensor of times, or ValueError naming `name`."""
    t = torch.as_tensor(times, dtype=torch.float64).detach().to("cpu")
    if t.dim() != 1 or t.numel() == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of times, got shape {tuple(t.shape)}")
    check_finite_tensor(name, t)
    return t


def bicubic_linear(
    lr: Tensor,
    lr_times: Tensor | Sequence[float],
    out_times: Tensor | Sequence[float],
    out_size: tuple[int, int],
    *,
    chunk: int = 16,
) -> Tensor:
    """Linear interpolation in time between the bracketing LR frames, then antialiased bicubic resizing."""
    if not isinstance(lr, Tensor):
        raise ValueError(f"lr must be a torch.Tensor, got {type(lr).__name__}")
    if lr.dim() != 4 or lr.shape[1] != 3 or lr.shape[0] < 1:
        raise ValueError(f"lr must be a clip of shape (T, 3, h, w) with T >= 1, got {tuple(lr.shape)}")
    if not lr.is_floating_point():
        raise ValueError(f"lr must be a floating-point tensor, got dtype {lr.dtype}")
    t_lr = _as_times(lr_times, "lr_times")
    t_out = _as_times(out_times, "out_times")
    n = lr.shape[0]
    if t_lr.numel() != n:
        raise ValueError(f"lr_times must hold one time per LR frame ({n}), got {t_lr.numel()}")
    if n > 1 and not bool((t_lr[1:] > t_lr[:-1]).all()):
        raise ValueError(f"lr_times must be strictly increasing, got {t_lr.tolist()}")
    if t_lr[0] < 0 or t_lr[-1] > 1:
        raise ValueError(f"lr_times must lie in [0, 1], got range [{t_lr[0].item()}, {t_lr[-1].item()}]")
    lo, hi = t_lr[0].item(), t_lr[-1].item()
    outside = (t_out < lo - TIME_TOLERANCE) | (t_out > hi + TIME_TOLERANCE)
    if bool(outside.any()):
        bad = t_out[outside][0].item()
        raise ValueError(f"out_times contains t = {bad}, outside the clip's time range [{lo}, {hi}]")
    if (
        not isinstance(out_size, Sequence)
        or len(out_size) != 2
        or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in out_size)
    ):
        raise ValueError(f"out_size must be a pair (H, W) of positive ints, got {out_size!r}")
    check_int("chunk", chunk, 1)

    t_out = t_out.clamp(lo, hi)
    # bracketing pair (i, i+1) with t_i <= t <= t_{i+1}; the last segment also covers t = t_{T−1}
    if n == 1:
        left = torch.zeros_like(t_out, dtype=torch.long)
        weight = torch.zeros_like(t_out)
    else:
        left = (torch.searchsorted(t_lr, t_out, right=True) - 1).clamp(0, n - 2)
        # w = (t − t_i) / (t_{i+1} − t_i), in [0, 1]
        weight = ((t_out - t_lr[left]) / (t_lr[left + 1] - t_lr[left])).clamp(0.0, 1.0)
    right = (left + 1).clamp(max=n - 1)

    height, width = out_size
    same_size = (height, width) == tuple(lr.shape[-2:])
    out = torch.empty((t_out.numel(), 3, height, width), dtype=lr.dtype, device=lr.device)
    for start in range(0, t_out.numel(), chunk):
        sl = slice(start, start + chunk)
        w = weight[sl].to(device=lr.device, dtype=lr.dtype).view(-1, 1, 1, 1)
        # I(t) = (1 − w) I_i + w I_{i+1}; torch.lerp is exact at w = 0 and w = 1 (the LR times)
        frames = torch.lerp(lr[left[sl].to(lr.device)], lr[right[sl].to(lr.device)], w)
        if not same_size:
            frames = F.interpolate(
                frames, size=(height, width), mode="bicubic", align_corners=False, antialias=True
            )
        out[sl] = frames.clamp_(0.0, 1.0)
    return out
