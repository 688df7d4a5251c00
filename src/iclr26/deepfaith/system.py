"""The `deepfaith` system as a study (`core.study`): for each task, build the supervisory signal from
prior explanations, train the amortized explainer, then score every method on every faithfulness
metric, per held-out input (the units: task × input).

Arms: DeepFaith (the method), each prior method (baselines), `best_prior` (per task, the prior with the
best average rank on the training inputs, where the priors were already scored for the faithfulness
filter: chosen before any test input is scored) and the floor `random` (a Gaussian attribution map per
input). The claims: DeepFaith against `best_prior` on each metric, paired over the inputs, with the one
rule (a paired bootstrap); the views keep the paper's average ranks and add wins / ties / losses that
count only differences outside the interval."""

from __future__ import annotations

import functools
import statistics
import threading
import time
from typing import Any

import torch
from scipy.stats import rankdata

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table, resolve_device, set_seed
from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.claim import Claim, judge
from iclr26.core.distributed import init_distributed
from iclr26.core.records import pyplot, save_figure
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.deepfaith.config import DeepFaithConfig
from iclr26.deepfaith.explainer import AmortizedExplainer
from iclr26.deepfaith.metrics import METRICS, evaluate, metrics_for
from iclr26.deepfaith.priors import explain_all, methods_for
from iclr26.deepfaith.supervision import deduplicate, faithfulness_filter, quality_order, supervised_pairs
from iclr26.deepfaith.tasks import MODALITY, Task, load_task
from iclr26.deepfaith.train import train_explainer

METHOD = "deepfaith"
BEST_PRIOR = "best_prior"
RANDOM = "random"
LATENCY_BASELINES = ("kernel_shap", "lime", "integrated_gradients")


def _metric_kwargs(name: str, runs: int) -> dict:
    return {"runs": runs} if METRICS[name].random else {}


def score_table(
    task: Task, maps: dict[str, torch.Tensor], x, target, runs: int, seed: int
) -> dict[str, torch.Tensor]:
    """metric -> (B, M) scores of every method's maps on the task's metrics."""
    out = {}
    for name in metrics_for(task.modality):
        out[name] = torch.stack(
            [
                evaluate(
                    name,
                    task.model,
                    task.space,
                    x,
                    target,
                    a,
                    modality=task.modality,
                    seed=seed,
                    **_metric_kwargs(name, runs),
                )
                for a in maps.values()
            ],
            1,
        )
    return out


def average_ranks(means: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Per metric, rank methods by mean score (1 = most faithful, ties averaged); plus 'avg'."""
    methods = list(next(iter(means.values())))
    ranks: dict[str, dict[str, float]] = {}
    for name, by_method in means.items():
        sign = -1.0 if METRICS[name].higher_is_better else 1.0
        r = rankdata([sign * by_method[m] for m in methods])
        ranks[name] = dict(zip(methods, r.tolist(), strict=True))
    ranks["avg"] = {m: statistics.fmean(ranks[n][m] for n in means) for m in methods}
    return ranks


def top_k_hits(attr: torch.Tensor, relevant: torch.Tensor) -> float:
    """Fraction of truly important tokens found among the top-k (k = how many there are)."""
    hits = []
    for a, r in zip(attr, relevant, strict=True):
        k = int(r.sum())
        hits.append(float(r[a.topk(k).indices].float().mean()))
    return statistics.fmean(hits)


def per_input_hits(attr: torch.Tensor, relevant: torch.Tensor) -> list[float]:
    """Per input, the fraction of its truly important tokens among its top-k (k = how many there are)."""
    return [
        float(r[a.topk(int(r.sum())).indices].float().mean()) for a, r in zip(attr, relevant, strict=True)
    ]


def _supervision(
    cfg: DeepFaithConfig, task: Task, methods: tuple[str, ...], ctx: RunContext, prior_kw: dict[str, Any]
) -> dict:
    """The priors' maps on the training inputs, deduplicated and filtered (cached), and each prior's mean
    score per metric there: what `best_prior` is chosen on, before any test input is scored."""
    cache = ctx.checkpoint_dir / f"{task.name}-supervision.pt"
    if cache.exists():
        sup = load_checkpoint(cache)
        if "train_means" in sup:
            return sup
    x = task.x_train[: cfg.train_inputs]
    target = task.predict(x)
    maps, _ = explain_all(methods, task.model, task.space, x, target, **prior_kw, seed=cfg.seed)
    scores = {n: s.cpu() for n, s in score_table(task, maps, x, target, cfg.filter_runs, cfg.seed).items()}
    maps = {m: a.cpu() for m, a in maps.items()}
    directions = {n: METRICS[n].higher_is_better for n in scores}
    order = quality_order(scores, directions) if cfg.dedup_keep == "best" else None
    candidates = deduplicate(maps, cfg.dedup_threshold, order=order)
    keep = faithfulness_filter(scores, directions, candidates, cfg.filter_quantile)
    means = {n: {m: float(s[:, j].mean()) for j, m in enumerate(maps)} for n, s in scores.items()}
    sup = {"maps": maps, "candidates": candidates, "keep": keep, "train_means": means}
    save_checkpoint(cache, sup)  # atomic: a kill mid-write leaves no torn cache
    return sup


def run_task(cfg: DeepFaithConfig, task_name: str, ctx: RunContext) -> dict:
    """Priors → dedup → filter → train → evaluate, for one task; returns its results: the means, ranks and
    latency of every method (the paper's table), and every map's score per test input and metric
    (`scores`, columns in `order`: the methods, DeepFaith, the random floor)."""
    set_seed(cfg.seed)
    resolve_device(cfg.device)  # fails early and clearly when CUDA is asked for but absent
    dist = init_distributed(cfg.device)  # under torchrun, picks this rank's GPU before anything moves
    device = dist.device
    task = load_task(task_name, seed=cfg.seed).to(device)
    methods = tuple(m for m in cfg.methods if m in methods_for(task.modality))
    ctx.log(f"{task_name}: target model test accuracy {task.test_accuracy:.3f}; {task.space.d} features")
    prior_kw = {"background": task.x_train, "cam_layer": task.cam_layer, "cfg": cfg.priors}
    x = task.x_train[: cfg.train_inputs]
    target = task.predict(x)
    sup = _supervision(cfg, task, methods, ctx, prior_kw)
    train_ranks = average_ranks(sup["train_means"])["avg"]
    best_prior = min(train_ranks, key=train_ranks.get)
    pairs = supervised_pairs(sup["maps"], sup["keep"])
    ctx.log(f"{task_name}: {len(pairs.index)} supervised pairs from {len(x)} inputs: {pairs.counts()}")

    explainer = AmortizedExplainer(task.space, task.classes, cfg.explainer).to(device)
    tcfg = cfg.train_config(len(x) if cfg.train.objective == "local" else len(pairs.index))
    with ctx.progress(f"{task_name}: training the explainer (epochs)", total=tcfg.epochs) as advance:
        history = train_explainer(
            explainer,
            task.model,
            x,
            target,
            pairs,
            tcfg,
            seed=cfg.seed,
            dist=dist,
            checkpoint=ctx.checkpoint_dir / f"{task_name}-explainer-{tcfg.objective}-{tcfg.sampling}.pt",
            on_epoch=lambda _row: advance(1),
        )
    last = history[-1]
    ctx.log(
        f"{task_name}: final L_PC {last['pattern_loss']:.3f}, L_LC {last['local_loss']:.3f}, "
        f"α {last['alpha']:.3f}"
    )

    xt = task.x_test[: cfg.test_inputs]
    ct = task.predict(xt)
    # every method, DeepFaith included, is timed the same way: a warm-up on 2 inputs, then one timed run
    explain_all(methods, task.model, task.space, xt[:2], ct[:2], **prior_kw, seed=cfg.seed + 1)
    maps, seconds = explain_all(methods, task.model, task.space, xt, ct, **prior_kw, seed=cfg.seed + 1)
    explainer.explain(xt[:2], ct[:2])
    t0 = time.perf_counter()
    maps[METHOD] = explainer.explain(xt, ct)
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds[METHOD] = (time.perf_counter() - t0) / len(xt)
    noise = torch.Generator().manual_seed(derive_seed(cfg.seed, "random attribution", task_name))
    maps[RANDOM] = torch.randn(maps[METHOD].shape, generator=noise).to(maps[METHOD])  # the floor
    scores = score_table(task, maps, xt, ct, cfg.metric_runs, cfg.seed + 2)  # each map scored on its own
    ranked = [m for m in maps if m != RANDOM]
    means = {
        n: {m: float(s[:, j].mean()) for j, m in enumerate(maps) if m != RANDOM} for n, s in scores.items()
    }
    result = {
        "task": task_name,
        "modality": task.modality,
        "features": task.space.d,
        "model_accuracy": task.test_accuracy,
        "pairs": pairs.counts(),
        "means": means,
        "ranks": average_ranks(means),
        "ms_per_input": {m: 1e3 * s for m, s in seconds.items()},
        "history": history,
        "best_prior": best_prior,
        "train_ranks": train_ranks,
        "random_means": {n: float(s[:, list(maps).index(RANDOM)].mean()) for n, s in scores.items()},
        "order": list(maps),
        "scores": {n: s.cpu().tolist() for n, s in scores.items()},
    }
    if task.relevant_test is not None:
        relevant = task.relevant_test[: len(xt)]
        hits = {m: per_input_hits(a.cpu(), relevant) for m, a in maps.items()}
        result["hits"] = hits
        result["top_k_hits"] = {m: top_k_hits(maps[m].cpu(), relevant) for m in ranked}
    if task.modality == "image":
        result["examples"] = {m: a[:3].tolist() for m, a in maps.items() if m != RANDOM}
        result["example_inputs"] = xt[:3].tolist()
    return result


class Tasks:
    """What the cells of one process share: each task's results, computed on its first cell (`run_task`)."""

    def __init__(self, cfg: DeepFaithConfig):
        self.cfg = cfg
        self._lock = threading.Lock()
        self._done: dict[str, dict] = {}

    def get(self, name: str, ctx: RunContext) -> dict:
        """Task `name`'s results (`run_task`), computed on the first call."""
        with self._lock:
            if name not in self._done:
                self._done[name] = run_task(self.cfg, name, ctx)
            return self._done[name]


SUMMARY = (
    "task",
    "modality",
    "features",
    "model_accuracy",
    "pairs",
    "means",
    "ranks",
    "ms_per_input",
    "history",
    "best_prior",
    "train_ranks",
    "random_means",
    "top_k_hits",
    "examples",
    "example_inputs",
)
"""What the views need of a task's results: carried by DeepFaith's cell on the task's first input."""


def measure(tasks: Tasks, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One method's map on one test input: its score on each of the task's metrics (an empty cell where the
    method does not apply to the task, or the task has fewer test inputs)."""
    r = tasks.get(unit.params["task"], ctx)
    name, i = (r["best_prior"] if arm.name == BEST_PRIOR else arm.name), unit.params["index"]
    if name not in r["order"] or i >= len(next(iter(r["scores"].values()))):
        return {}
    j = r["order"].index(name)
    out: dict[str, Any] = {n: s[i][j] for n, s in r["scores"].items()}
    if name in r["ms_per_input"]:
        out["ms_per_input"] = r["ms_per_input"][name]
    if "hits" in r:
        out["top_k_hits"] = r["hits"][name][i]
    if arm.name == BEST_PRIOR:
        out["prior"] = name
    if arm.name == METHOD and i == 0:
        out["summary"] = {k: r[k] for k in SUMMARY if k in r}
    return out


def study(cfg: DeepFaithConfig, tasks: Tasks | None = None) -> Study:
    """deepfaith as a study over task × test input: DeepFaith, every prior, the best prior (chosen on the
    training inputs) and the random floor; one claim per metric, DeepFaith against `best_prior`."""
    arms = [
        Arm(METHOD, "method"),
        Arm(BEST_PRIOR, "baseline"),
        *(Arm(m, "baseline") for m in cfg.methods),
        Arm(RANDOM, "floor", floor="random attribution"),
    ]
    units = [
        Unit(f"{t}/{i}", cfg.seed, {"task": t, "index": i}) for t in cfg.tasks for i in range(cfg.test_inputs)
    ]
    names = [n for n in METRICS if any(n in metrics_for(MODALITY[t]) for t in cfg.tasks)]
    claims = [
        Claim(
            n,
            METHOD,
            (BEST_PRIOR,),
            higher_is_better=METRICS[n].higher_is_better,
            interval="bootstrap",
            floor_arm=RANDOM,
            label=f"{n} per test input",
        )
        for n in names
    ]
    measure_ = functools.partial(measure, tasks or Tasks(cfg))
    return Study(
        "deepfaith",
        arms,
        units,
        measure_,
        claims=claims,
        metrics=tuple(names),
        config=cfg,
        seed=cfg.seed,
        views=functools.partial(_views, cfg),
    )


def run(cfg: DeepFaithConfig, ctx: RunContext) -> Report:
    """The study: every task's cells (each task computed once, on its first cell; the cells resume from
    `cells.jsonl`); the paper's tables, the wins / ties / losses and the claims."""
    torch.set_num_threads(cfg.threads)
    resolve_device(cfg.device)
    return run_study(study(cfg), ctx).report


def _wins(result: StudyResult, task: str, prior: str, metrics: list[str]) -> tuple[int, int, int]:
    """DeepFaith against `prior` on `task`'s inputs, per metric, with the one rule: (won, tied, lost)."""
    keys = [u.key for u in result.study.units if u.params["task"] == task]
    out = [0, 0, 0]
    for n in metrics:
        claim = Claim(n, METHOD, (prior,), higher_is_better=METRICS[n].higher_is_better, interval="bootstrap")
        ours, theirs = result.values(METHOD, n), result.values(prior, n)
        check = judge(claim, prior, {k: ours[k] for k in keys if k in ours}, theirs)
        out[{"held": 0, "did not hold": 2}.get(check.verdict, 1)] += 1
    return out[0], out[1], out[2]


def _views(cfg: DeepFaithConfig, result: StudyResult, ctx: RunContext) -> Report:
    """The paper's tables (per task: every method's mean per metric, average rank, latency; the summary)
    from the task summaries in the cells, the random floor under each task's methods, and DeepFaith's
    wins / ties / losses against each prior counting only differences outside the interval."""
    results = {}
    for cell in result.records(METHOD):
        if "summary" in cell.metrics:
            results[cell.metrics["summary"]["task"]] = cell.metrics["summary"]
    tables, summary, wins = [], [], []
    for name, r in results.items():
        metric_names = list(r["means"])
        cols = ["method", *metric_names, "avg rank", "ms/input"] + (
            ["top-k hits"] if "top_k_hits" in r else []
        )
        rows = []
        for m in r["ranks"]["avg"]:
            row = [m, *[r["means"][n][m] for n in metric_names], r["ranks"]["avg"][m], r["ms_per_input"][m]]
            if "top_k_hits" in r:
                row.append(r["top_k_hits"][m])
            rows.append(row)
        rows.sort(key=lambda row: row[len(metric_names) + 1])
        rows.append(
            [f"{RANDOM} (floor)", *[r["random_means"][n] for n in metric_names], None, None]
            + ([None] if "top_k_hits" in r else [])
        )
        arrows = ", ".join(f"{n} {'↑' if METRICS[n].higher_is_better else '↓'}" for n in metric_names)
        tables.append(
            Table(
                f"{name} ({r['modality']}, {r['features']} features; "
                f"target model test accuracy {r['model_accuracy']:.3f})",
                cols,
                rows,
                caption=f"Mean over {cfg.test_inputs} held-out inputs. Directions: {arrows}. "
                f"Ranks per metric, averaged; ms/input at batch {cfg.test_inputs}. The random floor "
                "(a Gaussian map per input) is not ranked.",
            )
        )
        avg = r["ranks"]["avg"]
        priors = {m: v for m, v in avg.items() if m != METHOD}
        best = min(priors, key=priors.get)
        ms = r["ms_per_input"]
        speedups = [ms[b] / ms[METHOD] if b in ms else None for b in LATENCY_BASELINES]
        position = 1 + sum(v < avg[METHOD] for v in priors.values())
        summary.append([name, avg[METHOD], position, best, priors[best], *speedups])
        record = {p: _wins(result, name, p, metric_names) for p in priors}
        above = sum(lost > won for won, _, lost in record.values())
        for p, (won, tied, lost) in record.items():
            chosen = " (best prior on the training inputs)" if p == r["best_prior"] else ""
            wins.append([name, p + chosen, won, tied, lost, 1 + above])
    tables.insert(
        0,
        Table(
            "Summary: DeepFaith's average rank against the prior methods, and its speed-up per input",
            [
                "task",
                "DeepFaith avg rank",
                "DeepFaith position",
                "best prior",
                "its avg rank",
                *[f"× vs {b}" for b in LATENCY_BASELINES],
            ],
            summary,
            caption="The paper's ranking: point means, any difference ranked, the best prior picked on the "
            "test inputs after the fact. The verdict comes from the claims (each metric against the prior "
            "chosen on the training inputs) and the next table.",
        ),
    )
    tables.insert(
        1,
        Table(
            "DeepFaith against each prior, per task: metrics won / tied / lost (paired bootstrap 95% over "
            "the task's test inputs)",
            ["task", "prior", "won", "tied", "lost", "DeepFaith position (differences outside the interval)"],
            wins,
            caption="won / lost: the interval of the mean paired difference lies wholly on DeepFaith's / the "
            "prior's side; tied: it contains 0. A prior ranks above DeepFaith when it wins more metrics than "
            "it loses.",
        ),
    )
    figures = [_curves_figure(results, ctx)]
    if any("examples" in r for r in results.values()):
        figures.append(_examples_figure(results, ctx))
    return Report(tables=tables, figures=figures)


def _curves_figure(results: dict, ctx: RunContext) -> str:
    plt = pyplot()

    fig, axes = plt.subplots(1, len(results), figsize=(3.2 * len(results), 3), squeeze=False)
    for ax, (name, r) in zip(axes[0], results.items(), strict=True):
        h = r["history"]
        ep = [row["epoch"] for row in h]
        ax.plot(ep, [row["pattern_loss"] for row in h], label="L_PC")
        ax.plot(ep, [row["local_loss"] for row in h], label="L_LC")
        ax.plot(ep, [row["alpha"] for row in h], "k--", label="α")
        ax.set_title(name)
        ax.set_xlabel("epoch")
    axes[0][0].legend()
    fig.tight_layout()
    return save_figure(fig, ctx.out_dir, "training_curves")


def _examples_figure(results: dict, ctx: RunContext) -> str:
    plt = pyplot()

    from iclr26.deepfaith.space import image_space

    preferred = ("integrated_gradients", "occlusion", "kernel_shap", "lime", "grad_cam", METHOD)
    first = next(r for r in results.values() if "examples" in r)
    shown = tuple(m for m in preferred if m in first["examples"])
    rows = [(n, i) for n, r in results.items() if "examples" in r for i in range(len(r["example_inputs"]))]
    fig, axes = plt.subplots(
        len(rows), 1 + len(shown), figsize=(1.6 * (1 + len(shown)), 1.6 * len(rows)), squeeze=False
    )
    for ax_row, (name, i) in zip(axes, rows, strict=True):
        r = results[name]
        img = torch.tensor(r["example_inputs"][i])
        patch = 1 if name == "digits" else 5
        space = image_space(1, img.shape[-2], img.shape[-1], patch=patch)
        ax_row[0].imshow(img[0].numpy(), cmap="gray")
        ax_row[0].set_ylabel(name)
        for ax, m in zip(ax_row[1:], shown, strict=True):
            a = torch.tensor(r["examples"][m][i])[None]
            lim = float(a.abs().max())
            ax.imshow(space.to_elements(a)[0, 0].numpy(), cmap="bwr", vmin=-lim, vmax=lim)
        for ax, title in zip(ax_row, ("input", *shown), strict=True):
            ax.set_xticks([])
            ax.set_yticks([])
            if (name, i) == rows[0]:
                ax.set_title(title.replace("_", " "), fontsize=8)
    fig.tight_layout()
    return save_figure(fig, ctx.out_dir, "explanations")


PRESETS = preset_table(
    bench=DeepFaithConfig(),
    smoke={
        "tasks": ("wine", "digits"),
        "methods": ("saliency", "integrated_gradients", "occlusion", "kernel_shap", "grad_cam"),
        "train_inputs": 32,
        "test_inputs": 16,
        "priors.kernel_samples": 32,
        "metric_runs": 16,
        "train.epochs": 3,
        "min_steps": 0,
    },
    # the tour: DeepFaith vs the priors on two tasks, fewer inputs and shorter training
    demo={
        "tasks": ("wine", "digits"),
        "methods": ("saliency", "integrated_gradients", "occlusion", "kernel_shap", "lime", "grad_cam"),
        "train_inputs": 96,
        "test_inputs": 48,
        "train.epochs": 40,
        "min_steps": 400,
    },
    # The paper's explainer shape (6 layers, 768 wide, 8 heads, FFN 1024), more inputs and samples; GPU.
    paper={
        "train_inputs": 1024,
        "test_inputs": 500,
        "priors.kernel_samples": 512,
        "priors.ig_steps": 64,
        "filter_runs": 64,
        "metric_runs": 128,
        "explainer.width": 768,
        "explainer.depth": 6,
        "explainer.heads": 8,
        "explainer.ffn": 1024,
        "explainer.dropout": 0.5,
        "train.epochs": 400,
        "min_steps": 20000,
        "train.lr": 1e-4,
        "train.lc_runs": 32,
        "train.epsilon": 1e-5,
        "device": "cuda",
        "threads": 8,
    },
)
SYSTEM = implemented_system("deepfaith", presets=PRESETS, run=run)
