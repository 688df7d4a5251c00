"""Rectified flow (VINCIE §3.2, as SD3): the path x_t = (1 − t)·x₀ + t·ε from data (t = 0) to
noise (t = 1), the velocity target v = ε − x₀, logit-normal training timesteps, the timestep shift,
and an Euler sampler with classifier-free guidance.

Target frames carry x_t in their noisy channels, with zero condition channels and flag 0; context
frames are clean (their noisy channels hold the frame at t = 0, their condition channels the frame,
flag 1). The loss is on the target frames only.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from iclr26.vincie.sequence import Batch


def interpolate(x0: Tensor, noise: Tensor, t: Tensor) -> Tensor:
    """x_t = (1 − t)·x₀ + t·ε, t broadcast from (B,) over the trailing dimensions."""
    tt = t.view(-1, *([1] * (x0.dim() - 1)))
    return (1 - tt) * x0 + tt * noise


def velocity(x0: Tensor, noise: Tensor) -> Tensor:
    """The rectified-flow velocity dx_t/dt = ε − x₀."""
    return noise - x0


def logit_normal(
    n: int, generator: torch.Generator | None = None, mean: float = 0.0, std: float = 1.0
) -> Tensor:
    """t = sigmoid(u), u ~ N(mean, std²) (SD3's logit-normal timestep sampling)."""
    return torch.sigmoid(mean + std * torch.randn(n, generator=generator))


def shift_time(t: Tensor | float, shift: float) -> Tensor | float:
    """SD3's resolution shift t' = s·t / (1 + (s − 1)·t): more steps spent near the noise."""
    return shift * t / (1 + (shift - 1) * t)


def model_input(batch: Batch, x_t: Tensor) -> Tensor:
    """(B, F, 7, H, W): x_t on targets and the clean frame on context frames, the condition
    channels (the clean frame on context frames, 0 on targets), and the clean flag."""
    ctx = (~batch.target & (batch.block >= 0)).float()[..., None, None, None]
    cond = batch.frames * ctx
    noisy = torch.where(batch.target[..., None, None, None], x_t, cond)
    flag = ctx.expand(-1, -1, 1, *batch.frames.shape[-2:])
    return torch.cat([noisy, cond, flag], dim=2)


def flow_loss(model: Callable[..., Tensor], batch: Batch, t: Tensor, noise: Tensor) -> Tensor:
    """Mean squared velocity error over the target frames: ‖v_θ(x_t, t) − (ε − x₀)‖²."""
    x_t = interpolate(batch.frames, noise, t)
    pred = model(model_input(batch, x_t), batch.block, batch.index, batch.words, t)
    err = (pred - velocity(batch.frames, noise)).pow(2).mean(dim=(2, 3, 4))
    w = batch.target.float()
    return (err * w).sum() / w.sum().clamp_min(1)


@torch.no_grad()
def sample(
    model: Callable[..., Tensor],
    batch: Batch,
    steps: int,
    shift: float = 1.0,
    guidance: float = 1.0,
    null_words: Tensor | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Integrate dx/dt = v from t = 1 to 0 in `steps` Euler steps on the shifted grid, returning the
    frames (B, F, 3, H, W): targets generated, context frames as given. With `guidance` w ≠ 1 and
    `null_words`, v = v(∅) + w·(v(c) − v(∅)) (text-only guidance: images kept, words swapped)."""
    noise = torch.randn(batch.frames.shape, generator=generator).to(batch.frames)
    tgt = batch.target[..., None, None, None]
    x = noise
    grid = torch.linspace(1.0, 0.0, steps + 1)
    grid = torch.tensor([float(shift_time(float(g), shift)) for g in grid])
    cfg = guidance != 1.0 and null_words is not None
    for i in range(steps):
        t, t_next = float(grid[i]), float(grid[i + 1])
        tb = torch.full((len(x),), t, device=x.device)
        inp = model_input(batch, x)
        if cfg:
            both = model(
                torch.cat([inp, inp]), batch.block.repeat(2, 1), batch.index.repeat(2, 1),
                torch.cat([batch.words, null_words]), torch.cat([tb, tb]),
            )  # fmt: skip
            v_c, v_u = both.chunk(2)
            v = v_u + guidance * (v_c - v_u)
        else:
            v = model(inp, batch.block, batch.index, batch.words, tb)
        x = x + (t_next - t) * v
    return torch.where(tgt, x, batch.frames)
