"""Tests of iclr26.vff.baselines.bicubic_linear (linear in time, bicubic in space)."""

from __future__ import annotations

import pytest
import torch

from iclr26.vff.baselines import bicubic_linear


def _clip(t: int = 4, h: int = 8, w: int = 10, seed: int = 0) -> torch.Tensor:
    return torch.rand(t, 3, h, w, generator=torch.Generator().manual_seed(seed))


def test_exact_at_lr_times_same_size():
    lr = _clip(4)
    times = torch.tensor([0.0, 1 / 3, 2 / 3, 1.0])
    out = bicubic_linear(lr, times, times, (8, 10), chunk=3)
    assert out.dtype == torch.float32
    assert torch.equal(out, lr)


def test_midpoint_of_constant_frames_is_average():
    lr = torch.stack([torch.full((3, 6, 6), 0.2), torch.full((3, 6, 6), 0.6)])
    out = bicubic_linear(lr, [0.0, 1.0], [0.5, 0.25], (12, 12))
    assert torch.allclose(out[0], torch.full((3, 12, 12), 0.4), atol=1e-6)
    assert torch.allclose(out[1], torch.full((3, 12, 12), 0.3), atol=1e-6)


def test_non_integer_scale_shape_and_range():
    lr = _clip(3, 8, 10)
    out = bicubic_linear(lr, [0.0, 0.5, 1.0], torch.linspace(0, 1, 7), (20, 25), chunk=2)
    assert out.shape == (7, 3, 20, 25)
    assert out.min() >= 0 and out.max() <= 1
    down = bicubic_linear(lr, [0.0, 0.5, 1.0], [0.1], (3, 4))  # antialiased downsampling
    assert down.shape == (1, 3, 3, 4)


def test_chunking_does_not_change_result():
    lr = _clip(5)
    times = torch.linspace(0, 1, 5)
    out_t = torch.linspace(0, 1, 9)
    assert torch.equal(
        bicubic_linear(lr, times, out_t, (16, 20), chunk=1), bicubic_linear(lr, times, out_t, (16, 20))
    )


def test_errors():
    lr = _clip(3)
    times = [0.0, 0.5, 1.0]
    with pytest.raises(ValueError, match=r"t = 0\.9.*\[0\.0, 0\.5\]"):
        bicubic_linear(lr[:2], [0.0, 0.5], [0.2, 0.9], (8, 10))
    with pytest.raises(ValueError, match="out_size"):
        bicubic_linear(lr, times, [0.5], (0, 10))
    with pytest.raises(ValueError, match="out_size"):
        bicubic_linear(lr, times, [0.5], (8.0, 10))
    with pytest.raises(ValueError, match="out_size"):
        bicubic_linear(lr, times, [0.5], (8,))
    with pytest.raises(ValueError, match="strictly increasing"):
        bicubic_linear(lr, [0.0, 0.7, 0.5], [0.5], (8, 10))
    with pytest.raises(ValueError, match="one time per LR frame"):
        bicubic_linear(lr, [0.0, 1.0], [0.5], (8, 10))
    with pytest.raises(ValueError, match="lr must be a clip"):
        bicubic_linear(lr[0], times, [0.5], (8, 10))
