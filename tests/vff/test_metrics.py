"""Tests of iclr26.vff.metrics: agreement with scikit-image's PSNR and SSIM, BT.601 luma, tOF."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from iclr26.vff.metrics import evaluate_clip, psnr_y, rgb_to_y, ssim_y, temporal_flow_error


def _random_pair(t: int = 3, h: int = 32, w: int = 40, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A random target clip and a noisy prediction of it, both in [0, 1]."""
    g = torch.Generator().manual_seed(seed)
    target = torch.rand(t, 3, h, w, generator=g)
    pred = (target + 0.1 * torch.randn(t, 3, h, w, generator=g)).clamp(0, 1)
    return pred, target


def _smooth_pair(t: int = 3, h: int = 36, w: int = 44) -> tuple[torch.Tensor, torch.Tensor]:
    """Smooth gradient/sinusoid clips, the prediction slightly shifted and darkened."""
    y = torch.linspace(0, 1, h).view(1, 1, h, 1)
    x = torch.linspace(0, 1, w).view(1, 1, 1, w)
    k = torch.arange(t, dtype=torch.float32).view(t, 1, 1, 1)
    c = torch.tensor([0.0, 1.0, 2.0]).view(1, 3, 1, 1)
    target = 0.5 + 0.4 * torch.sin(6 * x + 4 * y + 0.3 * k + c)
    pred = 0.95 * (0.5 + 0.4 * torch.sin(6 * x + 4 * y + 0.3 * k + c + 0.15))
    return pred.float(), target.float()


def _y_frames(clip: torch.Tensor, crop: int) -> np.ndarray:
    """float64 luma frames (T, H, W) of a clip, cropped, for the skimage reference."""
    y = rgb_to_y(clip.double()).numpy()
    return y[:, crop : y.shape[1] - crop, crop : y.shape[2] - crop] if crop else y


@pytest.mark.parametrize("make", [_random_pair, _smooth_pair])
@pytest.mark.parametrize("crop", [0, 4])
def test_psnr_matches_skimage(make, crop):
    pred, target = make()
    yp, yt = _y_frames(pred, crop), _y_frames(target, crop)
    ref = np.mean([peak_signal_noise_ratio(a, b, data_range=1) for a, b in zip(yt, yp, strict=True)])
    assert psnr_y(pred, target, crop=crop) == pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("make", [_random_pair, _smooth_pair])
@pytest.mark.parametrize("crop", [0, 4])
def test_ssim_matches_skimage(make, crop):
    pred, target = make()
    yp, yt = _y_frames(pred, crop), _y_frames(target, crop)
    ref = np.mean(
        [
            structural_similarity(
                a, b, data_range=1, gaussian_weights=True, sigma=1.5, use_sample_covariance=False
            )
            for a, b in zip(yt, yp, strict=True)
        ]
    )
    assert ssim_y(pred, target, crop=crop) == pytest.approx(ref, abs=1e-4)


def test_identical_clips():
    _, target = _random_pair()
    assert psnr_y(target, target) == float("inf")
    assert ssim_y(target, target) == pytest.approx(1.0, abs=1e-12)


def test_rgb_to_y_known_colours():
    colours = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]).view(3, 3, 1, 1)
    y = rgb_to_y(colours.expand(3, 3, 2, 2)).double()
    assert torch.allclose(y[0], torch.full((2, 2), 235 / 255, dtype=torch.float64), atol=1e-6)
    assert torch.allclose(y[1], torch.full((2, 2), 16 / 255, dtype=torch.float64), atol=1e-6)
    assert torch.allclose(y[2], torch.full((2, 2), (16 + 65.481) / 255, dtype=torch.float64), atol=1e-6)
    assert rgb_to_y(torch.rand(3, 5, 7)).shape == (5, 7)


def _square_clip(t: int, moving: bool, size: int = 48) -> torch.Tensor:
    """A bright blurred square on a dark background, moving 2 px/frame right if `moving`."""
    clip = torch.full((t, 3, size, size), 0.1)
    for k in range(t):
        x0 = 12 + (2 * k if moving else 0)
        clip[k, :, 16:30, x0 : x0 + 14] = 0.9
    return torch.nn.functional.avg_pool2d(clip, 3, stride=1, padding=1, count_include_pad=False)


def test_tof_zero_for_identical_and_positive_for_different_motion():
    moving, static = _square_clip(4, moving=True), _square_clip(4, moving=False)
    assert temporal_flow_error(moving, moving) == 0.0
    assert temporal_flow_error(static, moving) > 0.1


def test_evaluate_clip_keys():
    pred, target = _smooth_pair(t=4)
    out = evaluate_clip(pred, target, crop=2)
    assert set(out) == {"psnr", "ssim", "tof"}
    assert out["psnr"] == pytest.approx(psnr_y(pred, target, crop=2))
    out = evaluate_clip(pred, target, centre=[1, 2])
    assert set(out) == {"psnr", "ssim", "tof", "psnr_centre", "ssim_centre"}
    assert out["psnr_centre"] == pytest.approx(psnr_y(pred[1:3], target[1:3]))
    assert out["ssim_centre"] == pytest.approx(ssim_y(pred[1:3], target[1:3]))


def test_errors():
    pred, target = _random_pair()
    with pytest.raises(ValueError, match=r"pred \(3, 3, 32, 40\).*target \(3, 3, 32, 30\)"):
        psnr_y(pred, target[..., :30])
    with pytest.raises(ValueError, match="4-D"):
        ssim_y(pred[0], target[0])
    with pytest.raises(ValueError, match="at least 2 frames"):
        temporal_flow_error(pred[:1], target[:1])
    with pytest.raises(ValueError, match="crop=16 is too large"):
        psnr_y(pred, target, crop=16)
    with pytest.raises(ValueError, match="crop=11 is too large"):
        ssim_y(pred, target, crop=11)  # 32 − 22 = 10 < 11 taps
    with pytest.raises(ValueError, match="crop must be"):
        psnr_y(pred, target, crop=-1)
    with pytest.raises(ValueError, match="centre"):
        evaluate_clip(pred, target, centre=[3])
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, H, W\)"):
        rgb_to_y(torch.rand(4, 5, 6))
