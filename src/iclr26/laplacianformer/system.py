"""The `laplacianformer` system as a study (`core.study`): every attention type trained in the same
ViT over task × seed, with two floors (softmax attention, the quadratic layer every linear one
replaces, and the majority class), the claim Laplacian vs each linear baseline on test accuracy with
the one claim rule; then the time/memory scaling of one attention layer with sequence length."""

from __future__ import annotations

import functools
import json
import statistics
from dataclasses import asdict
from typing import Any

import torch

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table, resolve_device, set_seed
from iclr26.core.claim import Claim
from iclr26.core.records import pyplot, save_figure
from iclr26.core.study import Arm, Role, Study, StudyResult, Unit, cell_threads, run_study
from iclr26.core.system import preset_table
from iclr26.laplacianformer.config import LaplacianFormerConfig
from iclr26.laplacianformer.data import load_task
from iclr26.laplacianformer.scaling import ScalingPoint, growth_exponent, measure_scaling
from iclr26.laplacianformer.train import train_classifier
from iclr26.laplacianformer.vit import VisionTransformer

# Patch size per task: digits 16×16/2 → 64 tokens, lfw 32×32/4 → 64, textures 48×48/4 → 144.
PATCH = {"digits": 2, "lfw": 4, "textures": 4}
LINEAR_BASELINES = ("nystrom", "performer", "soft")
MAJORITY = Arm("majority", "floor", floor="majority class")
"""The trivial classifier: the most frequent training label for every test image."""


def build_model(cfg: LaplacianFormerConfig, kind: str, image_size: int, patch: int, classes: int):
    """The ViT for one (attention kind, task) with the config's shared settings."""
    kw = {}
    if kind == "laplacian":
        kw = {
            "lam": cfg.lam,
            "ns_iters": cfg.ns_iters,
            "normalization": cfg.normalization,
            "local_conv": cfg.local_conv,
        }
    return VisionTransformer(
        image_size,
        patch,
        1,
        classes,
        dim=cfg.dim,
        depth=cfg.depth,
        heads=cfg.heads,
        attention=kind,
        landmarks=cfg.landmarks,
        **kw,
    )


def _mean_sd(xs: list[float]) -> tuple[float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def _arm(kind: str) -> Arm:
    if kind == "softmax":  # the quadratic attention a linear one replaces: what it should not fall below
        return Arm(kind, "floor", floor="softmax attention")
    role: Role = "method" if kind == "laplacian" else "baseline"
    return Arm(kind, role)


def study(cfg: LaplacianFormerConfig, points: list[ScalingPoint] | None = None) -> Study:
    """laplacianformer as a study: each attention type in `cfg.attentions` (Laplacian the method,
    softmax a floor, the linear attentions baselines) and the majority-class floor, over task × seed.
    The claim: Laplacian above every linear baseline run (named before the run, the worst check
    reported) on test accuracy, paired per task and seed; both at or below the majority class on
    every unit is uninformative. `points`: the scaling sweep, for the views."""
    arms = [_arm(k) for k in cfg.attentions] + [MAJORITY]
    seeds = range(cfg.seed, cfg.seed + cfg.seeds)
    units = [Unit(f"{t}/s{s}", s, {"task": t}) for t in cfg.tasks for s in seeds]
    baselines = tuple(k for k in cfg.attentions if k in LINEAR_BASELINES)
    claims = []
    if "laplacian" in cfg.attentions and baselines:
        claims.append(
            Claim("test_acc", "laplacian", baselines, floor_arm=MAJORITY.name, label="test accuracy")
        )
    return Study(
        "laplacianformer", arms, units, functools.partial(_measure, cfg), claims=claims,
        metrics=("test_acc", "train_loss"), config=cfg, seed=cfg.seed,
        views=functools.partial(_views, cfg, points or []),
    )  # fmt: skip


def _measure(cfg: LaplacianFormerConfig, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One cell: train the arm's ViT on the unit's task with its seed and score it on the test split
    (resumable from its per-epoch checkpoint), or score the majority class there."""
    # a cell forked by --jobs N takes one thread: the parent's OpenMP pool (training) does not
    # survive the fork, and a second thread would wait on it for ever
    torch.set_num_threads(cell_threads(cfg.threads))
    task_name, seed = unit.params["task"], unit.seed
    task = load_task(task_name, seed=seed)
    if arm.name == MAJORITY.name:
        label = int(torch.bincount(task.y_train).argmax())
        return {"test_acc": float((task.y_test == label).double().mean()), "params": 0}
    set_seed(seed)
    model = build_model(cfg, arm.name, task.image_size, PATCH[task_name], task.classes)
    params = sum(p.numel() for p in model.parameters())
    tag = f"{task_name}-{arm.name}-s{seed}"
    res = train_classifier(
        model, task, cfg.train, seed=seed, device=resolve_device(cfg.device),
        checkpoint=ctx.checkpoint_dir / f"{tag}.pt",
    )  # fmt: skip
    return {**res, "params": params}


def run(cfg: LaplacianFormerConfig, ctx: RunContext) -> Report:
    """Measure the one-layer scaling sweep, then run the study (`core.study.run_study`: resumable
    from `cells.jsonl`, `--jobs` cells at once): every (attention, task, seed) trained and scored."""
    torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    points: list[ScalingPoint] = []
    if cfg.scaling_lengths:
        with ctx.progress("scaling", total=len(cfg.scaling_lengths) * len(cfg.attentions)) as adv:
            points = measure_scaling(
                tuple(cfg.attentions),
                tuple(cfg.scaling_lengths),
                dim=cfg.scaling_dim,
                heads=cfg.heads,
                landmarks=cfg.landmarks,
                repeats=cfg.scaling_repeats,
                device=device,
                on_point=adv,
            )
        (ctx.out_dir / "scaling.json").write_text(json.dumps([asdict(p) for p in points], indent=1))
    return run_study(study(cfg, points), ctx).report


def _views(
    cfg: LaplacianFormerConfig, points: list[ScalingPoint], result: StudyResult, ctx: RunContext
) -> Report:
    """The accuracy table (the majority-class floor last), the scaling tables and figure."""
    kinds = [*cfg.attentions, MAJORITY.name]
    cols = ["attention", "params"]
    for t in cfg.tasks:
        cols += [f"{t} acc", f"{t} sd"]
    cols += ["mean acc", "train s/run"]
    task_of = {u.key: u.params["task"] for u in result.study.units}
    rows, mean_acc = [], {}
    for kind in kinds:
        cells = [(task_of[c.unit], c.metrics) for c in result.records(kind)]
        row: list = [kind, next((m["params"] for t, m in cells if t == cfg.tasks[0]), None)]
        per_task = []
        for t in cfg.tasks:
            accs = [m["test_acc"] for tt, m in cells if tt == t]
            mean, sd = _mean_sd(accs)
            per_task.append(mean)
            row += [mean, sd]
        mean_acc[kind] = statistics.fmean(per_task)
        rows.append([*row, mean_acc[kind], statistics.fmean(m.get("train_s", 0.0) for _, m in cells)])
    tables = [
        Table(
            f"Test accuracy ({cfg.seeds} seeds, mean and sd; same ViT, optimiser and budget)",
            cols,
            rows,
            caption=f"ViT dim {cfg.dim}, depth {cfg.depth}, heads {cfg.heads}, {cfg.landmarks} "
            f"landmarks, {cfg.train.epochs} epochs, AdamW lr {cfg.train.lr}; λ={cfg.lam}, "
            f"{cfg.ns_iters} Newton–Schulz iterations, normalization={cfg.normalization}. Floors: "
            "softmax attention (the quadratic layer) and the majority class (last row: the most "
            "frequent training label for every test image).",
        )
    ]
    figures: list[str] = []
    if points:
        device = resolve_device(cfg.device)
        tables.append(
            Table(
                f"One attention layer, forward+backward, batch 1, dim {cfg.scaling_dim} ({device.type})",
                ["attention", "tokens", "ms (median)", "saved MiB", "peak MiB"],
                [[p.kind, p.tokens, p.ms, p.saved_mib, p.peak_mib] for p in points],
            )
        )
        if len(cfg.scaling_lengths) > 1:
            tables.append(
                Table(
                    "Growth exponent: slope of log(cost) vs log(tokens) (1 = linear, 2 = quadratic)",
                    ["attention", "time exponent", "memory exponent"],
                    [
                        [k, growth_exponent(points, k, "ms"), growth_exponent(points, k)]
                        for k in cfg.attentions
                    ],
                )
            )
            figures.append(_scaling_figure(points, cfg, ctx))
    notes = []
    if "softmax" in mean_acc and "laplacian" in mean_acc:
        notes.append(
            f"Laplacian vs softmax mean accuracy: {mean_acc['laplacian']:.3f} vs "
            f"{mean_acc['softmax']:.3f} (difference {mean_acc['laplacian'] - mean_acc['softmax']:+.3f})."
        )
    return Report(tables=tables, figures=figures, notes=notes)


def _scaling_figure(points, cfg: LaplacianFormerConfig, ctx: RunContext) -> str:
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for kind in cfg.attentions:
        pts = [p for p in points if p.kind == kind]
        xs = [p.tokens for p in pts]
        axes[0].plot(xs, [p.ms for p in pts], marker="o", label=kind)
        axes[1].plot(xs, [p.saved_mib for p in pts], marker="o", label=kind)
    for ax, ylabel in zip(axes, ["forward+backward ms", "activations saved for backward (MiB)"], strict=True):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("tokens")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend()
    fig.suptitle("One attention layer vs sequence length")
    return save_figure(fig, ctx.out_dir, "scaling")


PRESETS = preset_table(
    bench=LaplacianFormerConfig(),
    smoke={
        "seeds": 1,
        "tasks": ("lfw",),
        "attentions": ("laplacian", "softmax", "nystrom"),
        "dim": 32,
        "train.epochs": 2,
        "scaling_lengths": (64, 128),
        "scaling_dim": 32,
        "scaling_repeats": 1,
    },
    # the tour: Laplacian attention vs SOFT (a linear baseline) and the softmax floor on lfw (150
    # training images against digits' 1,347), 3 seeds (3 pairs: the fewest the claim rule judges),
    # 10 epochs; within 2 minutes at one thread
    demo={
        "seeds": 3,
        "tasks": ("lfw",),
        "attentions": ("laplacian", "softmax", "soft"),
        "train.epochs": 10,
        "scaling_lengths": (256, 1024, 4096),
        "scaling_repeats": 1,
    },
    # DeiT-Tiny-like width on all three tasks, long sequences for scaling; meant for a GPU.
    paper={
        "tasks": ("digits", "lfw", "textures"),
        "dim": 192,
        "depth": 6,
        "heads": 3,
        "landmarks": 49,
        "train.epochs": 100,
        "train.lr": 1e-3,
        "scaling_lengths": (1024, 2048, 4096, 8192, 16384, 32768, 65536),
        "scaling_dim": 192,
        "device": "cuda",
    },
)
SYSTEM = implemented_system("laplacianformer", presets=PRESETS, run=run)
