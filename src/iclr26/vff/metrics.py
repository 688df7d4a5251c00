"""Video super-resolution / frame-interpolation metrics on clips: PSNR and SSIM on the BT.601 luma
channel (the convention of SR papers) and TecoGAN's temporal flow error tOF.

A clip is a float tensor (T, 3, H, W), RGB in [0, 1]. PSNR and SSIM are computed per frame and
averaged over frames; both are checked against scikit-image (`peak_signal_noise_ratio`,
`structural_similarity` with Gaussian weights) in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import torch
from torch import Tensor

from iclr26.core.ssim import ssim_map
from iclr26.core.validation import check_int

# SSIM window (Wang et al. 2004, as in skimage with gaussian_weights=True): Gaussian of σ = 1.5
# truncated at 3.5σ (radius int(3.5·1.5 + 0.5) = 5, i.e. 11 taps); K1, K2 in iclr26.core.ssim.
SSIM_SIGMA = 1.5
SSIM_RADIUS = 5

# Farneback parameters of tOF (TecoGAN's metric code uses the same values):
# pyr_scale 0.5 (each pyramid level halves the image), levels 3, winsize 15 (averaging window),
# iterations 3 per level, poly_n 5 (pixel neighbourhood of the polynomial expansion),
# poly_sigma 1.2 (Gaussian σ smoothing the derivatives for poly_n = 5), flags 0.
FARNEBACK_PARAMS = (0.5, 3, 15, 3, 5, 1.2, 0)


def rgb_to_y(x: Tensor) -> Tensor:
    """ITU-R BT.601 luma of RGB in [0, 1]: (..., 3, H, W) -> (..., H, W), in [16/255, 235/255]."""
    if not isinstance(x, Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() < 3 or x.shape[-3] != 3:
        raise ValueError(f"x must have shape (..., 3, H, W), got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor with RGB in [0, 1], got dtype {x.dtype}")
    r, g, b = x.unbind(dim=-3)
    # Y = (16 + 65.481 R + 128.553 G + 24.966 B) / 255   (BT.601, studio swing, as in MATLAB's rgb2ycbcr)
    return (16.0 + 65.481 * r + 128.553 * g + 24.966 * b) / 255.0


def _check_clips(pred: Tensor, target: Tensor) -> None:
    """Raise ValueError unless pred and target are float clips (T, 3, H, W) of the same shape."""
    for name, x in (("pred", pred), ("target", target)):
        if not isinstance(x, Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dim() != 4 or x.shape[1] != 3:
            raise ValueError(f"{name} must be a 4-D clip (T, 3, H, W), got shape {tuple(x.shape)}")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if pred.shape != target.shape:
        raise ValueError(
            f"pred and target must have the same shape, got pred {tuple(pred.shape)} "
            f"and target {tuple(target.shape)}"
        )
    if pred.shape[0] < 1:
        raise ValueError("pred and target must hold at least one frame, got T = 0")


def _luma_pair(pred: Tensor, target: Tensor, crop: int, min_size: int) -> tuple[Tensor, Tensor]:
    """Validated, border-cropped float64 luma of both clips: (T, H − 2·crop, W − 2·crop) each."""
    _check_clips(pred, target)
    check_int("crop", crop, 0)
    h, w = pred.shape[-2:]
    if h - 2 * crop < min_size or w - 2 * crop < min_size:
        raise ValueError(
            f"crop={crop} is too large for frames of size {h}x{w}: at least {min_size}x{min_size} "
            "pixels must remain after removing crop pixels at each border"
        )
    yp = rgb_to_y(pred.detach().to(device="cpu", dtype=torch.float64))
    yt = rgb_to_y(target.detach().to(device="cpu", dtype=torch.float64))
    if crop > 0:
        yp = yp[:, crop : h - crop, crop : w - crop]
        yt = yt[:, crop : h - crop, crop : w - crop]
    return yp, yt


def psnr_y(pred: Tensor, target: Tensor, crop: int = 0) -> float:
    """Mean over frames of the PSNR (dB, data range 1) on BT.601 luma, `crop` pixels cut at each border."""
    yp, yt = _luma_pair(pred, target, crop, min_size=1)
    # PSNR = 10 log10(R² / MSE) with R = 1, per frame; identical frames give +inf (as skimage does)
    mse = (yp - yt).pow(2).mean(dim=(-2, -1))
    with np.errstate(divide="ignore"):
        psnr = 10.0 * np.log10(1.0 / mse.numpy())
    return float(psnr.mean())


def ssim_y(pred: Tensor, target: Tensor, crop: int = 0) -> float:
    """Mean over frames of SSIM on BT.601 luma (11×11 Gaussian window, σ = 1.5, data range 1)."""
    yp, yt = _luma_pair(pred, target, crop, min_size=2 * SSIM_RADIUS + 1)
    # "valid" region only: skimage filters with reflect padding but then crops (win_size − 1)/2 = 5
    # pixels at each border before averaging, exactly the pixels whose window reaches the padding
    s = ssim_map(yp, yt, sigma=SSIM_SIGMA, radius=SSIM_RADIUS)
    return float(s.mean(dim=(-2, -1)).mean())


def to_uint8_luma(clip: Tensor) -> np.ndarray:
    """Luma of a clip as 8-bit images (T, H, W): round(255 Y), clipped to [0, 255]."""
    y = rgb_to_y(clip.detach().to(device="cpu", dtype=torch.float64)).numpy()
    return np.clip(np.rint(y * 255.0), 0, 255).astype(np.uint8)


def metric_flow(prev: np.ndarray, nxt: np.ndarray) -> np.ndarray:
    """Dense Farneback flow (H, W, 2) from prev to nxt (8-bit single-channel images), with the
    metric's settings (`FARNEBACK_PARAMS`; the model's own alignment uses `rvrt.farneback_flow`)."""
    return cv2.calcOpticalFlowFarneback(prev, nxt, None, *FARNEBACK_PARAMS)


def temporal_flow_error(pred: Tensor, target: Tensor) -> float:
    """tOF: mean over frame pairs of the per-pixel endpoint error ‖flow_pred − flow_true‖₂ (the V³
    authors' evaluation, after EGVSR/TecoGAN)."""
    _check_clips(pred, target)
    if pred.shape[0] < 2:
        raise ValueError(f"temporal_flow_error needs clips of at least 2 frames, got T = {pred.shape[0]}")
    yp, yt = to_uint8_luma(pred), to_uint8_luma(target)
    errors = []
    for k in range(yp.shape[0] - 1):
        flow_p = metric_flow(yp[k], yp[k + 1])
        flow_t = metric_flow(yt[k], yt[k + 1])
        # tOF_k = mean_pixels ‖(u_p − u_t, v_p − v_t)‖₂
        errors.append(np.linalg.norm(flow_p.astype(np.float64) - flow_t, axis=-1).mean())
    return float(np.mean(errors))


def evaluate_clip(
    pred: Tensor, target: Tensor, crop: int = 0, centre: Sequence[int] | None = None
) -> dict[str, float]:
    """PSNR-Y, SSIM-Y and tOF of a clip; with `centre` also psnr_centre / ssim_centre over those frames."""
    _check_clips(pred, target)
    out = {
        "psnr": psnr_y(pred, target, crop),
        "ssim": ssim_y(pred, target, crop),
        "tof": temporal_flow_error(pred, target),
    }
    if centre is not None:
        n = pred.shape[0]
        idx = list(centre)
        if not idx:
            raise ValueError("centre must be a non-empty list of frame indices, got an empty one")
        bad = [i for i in idx if isinstance(i, bool) or not isinstance(i, int | np.integer) or not 0 <= i < n]
        if bad:
            raise ValueError(f"centre must hold frame indices in [0, {n}), got invalid entries {bad}")
        sel = torch.tensor([int(i) for i in idx], dtype=torch.long, device=pred.device)
        out["psnr_centre"] = psnr_y(pred[sel], target[sel], crop)
        out["ssim_centre"] = ssim_y(pred[sel], target[sel], crop)
    return out
