"""The `laplacianformer` system: accuracy at equal parameters across attention types, and the
time/memory scaling of one attention layer with sequence length."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict

import torch

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table, resolve_device, set_seed
from iclr26.core.done import read_done, write_done
from iclr26.core.records import pyplot, save_figure
from iclr26.core.system import preset_table
from iclr26.laplacianformer.config import LaplacianFormerConfig
from iclr26.laplacianformer.data import load_task
from iclr26.laplacianformer.scaling import growth_exponent, measure_scaling
from iclr26.laplacianformer.train import train_classifier
from iclr26.laplacianformer.vit import VisionTransformer

# Patch size per task: digits 16×16/2 → 64 tokens, lfw 32×32/4 → 64, textures 48×48/4 → 144.
PATCH = {"digits": 2, "lfw": 4, "textures": 4}
LINEAR_BASELINES = ("nystrom", "performer", "soft")


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


def run(cfg: LaplacianFormerConfig, ctx: RunContext) -> Report:
    """Train every (task, attention, seed), then measure scaling; tables + plot."""
    torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    epochs = cfg.train.epochs
    results_dir = ctx.out_dir / "train"
    results_dir.mkdir(exist_ok=True)
    jobs = [(t, a, cfg.seed + s) for t in cfg.tasks for a in cfg.attentions for s in range(cfg.seeds)]
    results: dict[tuple[str, str, int], dict] = {}
    params: dict[tuple[str, str], int] = {}
    with ctx.progress("training (epochs)", total=len(jobs) * epochs) as advance:
        for task_name, kind, seed in jobs:
            tag = f"{task_name}-{kind}-s{seed}"
            done = results_dir / f"{tag}.json"
            task = load_task(task_name, seed=seed)
            set_seed(seed)
            model = build_model(cfg, kind, task.image_size, PATCH[task_name], task.classes)
            params[(task_name, kind)] = sum(p.numel() for p in model.parameters())
            prior = read_done(done)
            if prior is not None:  # finished in an earlier, interrupted run
                results[(task_name, kind, seed)] = prior
                advance(epochs)
                continue
            res = train_classifier(
                model,
                task,
                cfg.train,
                seed=seed,
                device=device,
                checkpoint=ctx.checkpoint_dir / f"{tag}.pt",
                on_epoch=advance,
            )
            write_done(done, res)
            results[(task_name, kind, seed)] = res
            ctx.log(f"{tag}: test acc {res['test_acc']:.3f} ({res['train_s']:.1f} s)")

    # accuracy table: one row per attention type
    cols = ["attention", "params"]
    for t in cfg.tasks:
        cols += [f"{t} acc", f"{t} sd"]
    cols += ["mean acc", "train s/run"]
    rows, mean_acc, mean_se = [], {}, {}
    for kind in cfg.attentions:
        row: list = [kind, params[(cfg.tasks[0], kind)]]
        per_task = []
        for t in cfg.tasks:
            accs = [results[(t, kind, cfg.seed + s)]["test_acc"] for s in range(cfg.seeds)]
            m, sd = _mean_sd(accs)
            per_task.append(m)
            row += [m, sd]
        mean_acc[kind] = statistics.fmean(per_task)
        # standard error of the task-averaged accuracy over seeds
        per_seed = [
            statistics.fmean(results[(t, kind, cfg.seed + s)]["test_acc"] for t in cfg.tasks)
            for s in range(cfg.seeds)
        ]
        mean_se[kind] = (statistics.stdev(per_seed) / len(per_seed) ** 0.5) if cfg.seeds > 1 else 0.0
        secs = [results[(t, kind, cfg.seed + s)]["train_s"] for t in cfg.tasks for s in range(cfg.seeds)]
        rows.append([*row, mean_acc[kind], statistics.fmean(secs)])
    acc_table = Table(
        f"Test accuracy ({cfg.seeds} seeds, mean and sd; same ViT, optimiser and budget)",
        cols,
        rows,
        caption=f"ViT dim {cfg.dim}, depth {cfg.depth}, heads {cfg.heads}, {cfg.landmarks} "
        f"landmarks, {epochs} epochs, AdamW lr {cfg.train.lr}; λ={cfg.lam}, "
        f"{cfg.ns_iters} Newton–Schulz iterations, normalization={cfg.normalization}.",
    )
    tables = [acc_table]
    figures: list[str] = []

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
        srows = [[p.kind, p.tokens, p.ms, p.saved_mib, p.peak_mib] for p in points]
        tables.append(
            Table(
                f"One attention layer, forward+backward, batch 1, dim {cfg.scaling_dim} ({device.type})",
                ["attention", "tokens", "ms (median)", "saved MiB", "peak MiB"],
                srows,
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

    claim = None
    baselines = [k for k in cfg.attentions if k in LINEAR_BASELINES]
    if "laplacian" in mean_acc and baselines:
        best = max(baselines, key=lambda k: mean_acc[k])
        claim = ClaimCheck(
            "mean test accuracy",
            "laplacian",
            mean_acc["laplacian"],
            f"best linear baseline ({best})",
            mean_acc[best],
            margin=(mean_se["laplacian"] ** 2 + mean_se[best] ** 2) ** 0.5,  # combined standard error
        )
    notes = []
    if "softmax" in mean_acc and "laplacian" in mean_acc:
        notes.append(
            f"Laplacian vs softmax mean accuracy: {mean_acc['laplacian']:.3f} vs "
            f"{mean_acc['softmax']:.3f} (difference {mean_acc['laplacian'] - mean_acc['softmax']:+.3f})."
        )
    return Report(tables=tables, figures=figures, claim_check=claim, notes=notes)


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
    # the tour: Laplacian attention vs softmax and two linear baselines on digits, 1 seed, shorter
    demo={
        "seeds": 1,
        "tasks": ("digits",),
        "attentions": ("laplacian", "softmax", "nystrom", "soft"),
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
