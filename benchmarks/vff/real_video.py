"""Why a learned residual over bicubic scored below bicubic on real video, and what training on real video
changes: V³ and the implicit baseline trained (bench budget) on photo views only, on crops of a real
clip (bigbuckbunny's first 75% of frames) only, and on an even mix, each scored every
`--every` steps on the clip's held-out frames (validation) and on the held-out test clips (bikes,
carphone; a diagnostic curve, never used for selection). Then the last and the validation-kept weights
at every setting on the test clips and on the held-out photo views, and the effect of compression: the
same models against bicubic on carphone as shipped (carphone_pristine) and heavily compressed
(carphone_distorted, the same frames at 7 KB).

    python benchmarks/vff/real_video.py                   # bench budget (900 steps), 2 cores, ~35 min
    python benchmarks/vff/real_video.py --steps 200 --every 50 --data photos mixed --models vff

Checkpoints and curves go to runs/benchmarks/vff_real/<data>_<model>.*, so an interrupted run resumes;
JSON in benchmarks/vff/results/vff_real_video.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core import set_seed
from iclr26.core.config import with_changes
from iclr26.vff import PRESETS
from iclr26.vff.clips import RealClips
from iclr26.vff.data import PHOTO_NAMES
from iclr26.vff.evaluate import (
    bicubic_method,
    clip_case,
    interpolant_method,
    mean_psnr,
    mean_scores,
    model_method,
    parse_setting,
)
from iclr26.vff.metrics import metric_flow as flow
from iclr26.vff.metrics import to_uint8_luma as luma_uint8
from iclr26.vff.system import build, evaluation_cases, validation_score
from iclr26.vff.train import train_model

DATA = {"photos": 0.0, "mixed": 0.5, "real": 1.0}  # train.real_fraction
CURVE_SETTINGS = ("S2", "S4", "S4T4")
COMPRESSION = ("carphone", "carphone_distorted")
PER_CLIP = ("bikes",)  # scored alone too (carphone alone is the first of COMPRESSION)


def clip_content(base, frames: int) -> dict:
    """Per test clip, over the first `frames` source frames of its scored crop: the mean brightness
    (0-255) of each frame, the mean absolute change from one frame to the next, and the motion from one
    frame to the next (90th percentile of the Farneback flow magnitude, source pixels: the median is
    ~0 on a crop that is mostly flat)."""
    out = {}
    for c in base.clips:
        crop = clip_case(c, base.clip_size, frames, 1).frames([float(k) for k in range(frames)], 1) * 255
        out[c] = {
            "mean": [round(float(f.mean()), 1) for f in crop],
            "motion_px": [
                round(float(np.percentile(np.linalg.norm(flow(a, b), axis=-1), 90)), 1)
                for a, b in itertools.pairwise(luma_uint8(crop / 255))
            ],
            "change": [round(float((b - a).abs().mean()), 1) for a, b in itertools.pairwise(crop)],
        }
    return out


def report(path: Path) -> str:
    """Markdown tables from the results file: the drift curves, the kept weights' gap over bicubic +
    linear at every setting (test clips, photos), and pristine against compressed carphone."""
    d = json.loads(path.read_text())
    base, results = d["baseline"], d["results"]
    lines = [
        f"Mean PSNR (dB, Y) over {', '.join(d['curve_settings'])}: held-out test clips "
        "(validation in brackets)",
        "",
    ]
    steps = sorted({s for e in results.values() for s, _ in e["test_curve"]})
    lines += [
        "| run | " + " | ".join(f"step {s}" for s in steps) + " | kept |",
        "|---" * (len(steps) + 2) + "|",
    ]
    for name, e in results.items():
        curve, val = dict(e["test_curve"]), dict(e["validation"])
        cells = [f"{curve[s]:.2f} ({val[s]:.2f})" if s in curve and s in val else "" for s in steps]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {e['kept_step']} |")
    for group, title in (
        ("test", "test clips (bikes, carphone)"),
        ("photos", "held-out photo views"),
        ("bikes", "bikes alone"),
        ("carphone", "carphone as shipped (carphone_pristine)"),
        ("carphone_distorted", "carphone heavily compressed (carphone_distorted)"),
    ):
        if group not in base:  # a file written before the group was scored
            continue
        labels = list(base[group])
        lines += ["", f"PSNR gap (dB) over bicubic + linear, kept weights, on {title}", ""]
        lines += ["| run | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
        row = [f"{base[group][s]['bicubic']['psnr']:.2f}" for s in labels]
        lines.append("| bicubic + linear (dB) | " + " | ".join(row) + " |")
        row = [
            f"{base[group][s]['interpolant']['psnr'] - base[group][s]['bicubic']['psnr']:+.2f}"
            for s in labels
        ]
        lines.append("| interpolant (step 0) | " + " | ".join(row) + " |")
        for name, e in results.items():
            if group in e:
                row = [
                    f"{e[group][s]['kept']['psnr'] - base[group][s]['bicubic']['psnr']:+.2f}" for s in labels
                ]
                lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=900)
    ap.add_argument("--every", type=int, default=100, help="steps between validation / test-curve scores")
    ap.add_argument("--data", nargs="+", default=list(DATA), choices=list(DATA))
    ap.add_argument("--models", nargs="+", default=["vff", "inr"], choices=["vff", "inr"])
    ap.add_argument("--lr", type=float, default=None, help="peak learning rate (default: the bench preset's)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/vff_real"))
    ap.add_argument("--report", action="store_true", help="print the tables from the results file and stop")
    ap.add_argument(
        "--content", action="store_true", help="add the test clips' content stats to the file and stop"
    )
    a = ap.parse_args()
    path = Path(__file__).parent / "results" / "vff_real_video.json"
    if a.report:
        print(report(path))
        return
    torch.set_num_threads(a.threads)
    base = with_changes(PRESETS["bench"], {"train.steps": a.steps, "train.validate_every": a.every})
    if a.lr is not None:
        base = with_changes(base, {"train.lr": a.lr})
    suffix = "" if a.lr is None else f"_lr{a.lr:g}"
    settings = [parse_setting(s) for s in base.settings]
    curve_settings = [parse_setting(s) for s in CURVE_SETTINGS]
    max_tau = max(s.time_factor for s in settings)
    lr_frames = base.train.lr_frames
    content = clip_content(base, (lr_frames - 1) * max_tau + 1)  # the frames the largest τ spans
    if a.content:
        payload = json.loads(path.read_text())
        payload["clip_content"] = content
        path.write_text(json.dumps(payload, indent=1) + "\n")
        print(json.dumps(content))
        return
    tests = [clip_case(c, base.clip_size, lr_frames, max_tau) for c in base.clips]
    photo_views = evaluation_cases(base)["photos"]  # what training on real video costs on the photos
    compression = {c: [clip_case(c, base.clip_size, lr_frames, max_tau)] for c in (*PER_CLIP, *COMPRESSION)}
    photos = tuple(p for p in PHOTO_NAMES if p not in base.test_photos)
    clips = RealClips(base.train_clips, base.validation_fraction, base.train.max_time_factor)
    validate = validation_score(base)
    a.out.mkdir(parents=True, exist_ok=True)
    results = json.loads(path.read_text())["results"] if path.exists() else {}
    classical = {"bicubic": bicubic_method, "interpolant": interpolant_method}
    baseline = {
        "test": mean_scores(tests, settings, lr_frames, classical),
        "photos": mean_scores(photo_views, settings, lr_frames, classical),
        **{c: mean_scores(v, settings, lr_frames, classical) for c, v in compression.items()},
    }
    for data in a.data:
        for kind in a.models:
            name = f"{data}_{kind}{suffix}"
            cfg = with_changes(base, {"train.real_fraction": DATA[data]})
            ckpt = a.out / f"{name}.pt"
            curve_file = a.out / f"{name}_test_curve.json"
            curve = json.loads(curve_file.read_text()) if ckpt.exists() and curve_file.exists() else {}
            # the step a validation call scores: 0 before training starts, else the one after the last
            # step reported (validation runs before on_step)
            step = {"now": 0, "fresh": not ckpt.exists()}

            def scored(model, step=step, curve=curve, curve_file=curve_file) -> float:
                # the validation score (selection), and the test clips' score at the same step (diagnosis)
                key = 0 if step["fresh"] else step["now"] + 1
                step["fresh"] = False
                test = mean_psnr(tests, curve_settings, lr_frames, model_method(model))
                curve[str(key)] = test
                curve_file.write_text(json.dumps(curve))
                return validate(model)

            def on_step(s: int, _seconds: float, step=step, name=name) -> None:
                step["now"], step["fresh"] = s, False
                if s % 50 == 0:
                    print(f"{name}: step {s}/{a.steps}", flush=True)

            previous = results.get(name, {}) if ckpt.exists() else {}
            set_seed(cfg.seed)
            model = build(cfg, kind)
            t0 = time.perf_counter()
            log = train_model(
                model, photos, cfg.train, clips=clips, validate=scored, seed=cfg.seed,
                checkpoint=ckpt, on_step=on_step,
            )  # fmt: skip
            wall = time.perf_counter() - t0
            last = build(cfg, kind)
            last.load_state_dict(torch.load(ckpt, weights_only=False)["model"])
            last.eval()
            with torch.no_grad():
                methods = {"kept": model_method(model), "last": model_method(last)}
                entry = {
                    "real_fraction": DATA[data],
                    "lr": cfg.train.lr,
                    "kept_step": log.kept_step,
                    "validation": log.validation,
                    "test_curve": sorted((int(k), v) for k, v in curve.items()),
                    "final_l1": log.losses[-1],
                    "loss_every_50": [
                        statistics.fmean(log.losses[i : i + 50]) for i in range(0, a.steps, 50)
                    ],
                    # seconds over the invocations that wrote an entry (a resumed, finished run adds ~0)
                    "train_wall_s": wall
                    + previous.get("train_wall_s", previous.get("wall_s_this_invocation", 0)),
                    "test": mean_scores(tests, settings, lr_frames, methods),
                    "photos": mean_scores(photo_views, settings, lr_frames, methods),
                    **{c: mean_scores(v, settings, lr_frames, methods) for c, v in compression.items()},
                }
            results[name] = entry
            print(f"{name}: kept step {log.kept_step}; test-clip PSNR vs bicubic:", flush=True)
            for label, per in entry["test"].items():
                b = baseline["test"][label]["bicubic"]["psnr"]
                print(f"  {label}: kept {per['kept']['psnr'] - b:+.2f}  last {per['last']['psnr'] - b:+.2f}")
            payload = {
                **provenance(),
                "command": "python benchmarks/vff/real_video.py " + " ".join(sys.argv[1:]),
                "steps": a.steps,
                "every": a.every,
                "threads": a.threads,
                "train_clips": list(base.train_clips),
                "test_clips": list(base.clips),
                "curve_settings": list(CURVE_SETTINGS),
                "baseline": baseline,
                "clip_content": content,
                "results": results,
            }
            path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
