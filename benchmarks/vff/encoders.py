"""V³ with its two encoders under the same training budget: the bench preset's 3D convolutional network, and
the paper's RVRT-style transformer (window attention + guided deformable attention) with Farneback
flow and with no flow (offsets learned from zero). PSNR / SSIM (Y) / tOF on the bench preset's held-out
photos and clips, parameters, and training seconds per step measured in the same run.

    python benchmarks/vff/encoders.py                           # 400 steps each, bench data, CPU
    python benchmarks/vff/encoders.py --steps 900 --settings S2 S4 S4T4 S4T8

Training checkpoints go to runs/benchmarks/vff_encoders/<variant>.pt, so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core import set_seed
from iclr26.core.config import with_changes
from iclr26.vff import PRESETS
from iclr26.vff.data import PHOTO_NAMES
from iclr26.vff.evaluate import (
    bicubic_method,
    mean_scores,
    model_method,
    parse_setting,
)
from iclr26.vff.system import build, evaluation_cases
from iclr26.vff.train import train_model

VARIANTS = {
    "conv3d": {"encoder": "conv3d"},
    "rvrt + Farneback flow": {"encoder": "rvrt", "rvrt.flow": "farneback", "rvrt.blocks": 2},
    "rvrt, no flow": {"encoder": "rvrt", "rvrt.flow": "none", "rvrt.blocks": 2},
}


def _step_logger(name: str, total: int, stamps: list[float]):
    def on_step(step: int, _loss: float) -> None:
        stamps.append(time.perf_counter())
        if step % 50 == 0:
            print(f"{name}: step {step}/{total}", flush=True)

    return on_step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--settings", nargs="+", default=["S2", "S4", "S4T4"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/vff_encoders"))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    # photo views only, no validation: the setting these figures were measured in (before the bench
    # preset trained on real clips)
    base = with_changes(
        PRESETS["bench"],
        {"train.steps": a.steps, "settings": tuple(a.settings), "train.real_fraction": 0.0,
         "train.validate_every": 0},
    )  # fmt: skip
    settings = [parse_setting(s) for s in a.settings]
    cases = evaluation_cases(base)
    train_photos = tuple(p for p in PHOTO_NAMES if p not in base.test_photos)
    a.out.mkdir(parents=True, exist_ok=True)
    results: dict = {}
    for name, over in VARIANTS.items():
        cfg = with_changes(base, over)
        set_seed(cfg.seed)
        model = build(cfg, "vff")
        t0, stamps = time.perf_counter(), []
        ckpt = a.out / f"{name.replace(' ', '_').replace(',', '').replace('+', 'plus')}.pt"
        log = train_model(
            model, train_photos, cfg.train, seed=cfg.seed, checkpoint=ckpt,
            on_step=_step_logger(name, cfg.train.steps, stamps),
        )  # fmt: skip
        per_step = (stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1 else float("nan")
        methods = {"bicubic": bicubic_method, "vff": model_method(model)}
        with torch.no_grad():
            scores = {g: mean_scores(gc, settings, cfg.train.lr_frames, methods) for g, gc in cases.items()}
        results[name] = {
            "parameters": sum(p.numel() for p in model.parameters()),
            "train_seconds_per_step": per_step,
            "steps_timed": max(len(stamps) - 1, 0),  # intervals timed in this invocation (0: resumed, done)
            "final_l1": log.losses[-1],
            "wall_s": time.perf_counter() - t0,
            "scores": scores,
        }
        print(json.dumps({name: {k: v for k, v in results[name].items() if k != "scores"}}), flush=True)
        for group in scores:
            for label, per_method in scores[group].items():
                gap = per_method["vff"]["psnr"] - per_method["bicubic"]["psnr"]
                print(f"  {group} {label}: V³ {per_method['vff']['psnr']:.2f} dB ({gap:+.2f} vs bicubic)")
    path = Path(__file__).parent / "results" / "vff_encoders.json"
    payload = {
        **provenance(),
        "steps": a.steps,
        "threads": a.threads,
        "variants": VARIANTS,
        "results": results,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
