"""The `icl_analysis` system: generate the nine tasks' splits, fit the scikit-learn baselines on
the same exemplars, sweep a language model over tasks × styles × shots × δ (every reply cached and
every finished cell saved, so an interrupted sweep resumes), train a small GPT to learn in context,
and report accuracy against shots per style, ID and OOD."""

from __future__ import annotations

import json
import statistics
import time
from collections import defaultdict
from dataclasses import replace

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table
from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.config import with_changes
from iclr26.core.llm import ChatModel, LLMChoice, Usage
from iclr26.core.parallel import parallel_map
from iclr26.core.records import pyplot, save_figure
from iclr26.core.system import preset_table
from iclr26.icl_analysis.apo import optimise_prompt
from iclr26.icl_analysis.baselines import fit_baseline
from iclr26.icl_analysis.config import ICLConfig
from iclr26.icl_analysis.evaluate import Cell, evaluate_cell
from iclr26.icl_analysis.gpt import FAMILY_OF_TASK, evaluate_gpt, train_icl_gpt
from iclr26.icl_analysis.prompts import REASONING, shot_counts
from iclr26.icl_analysis.tasks import Splits, get_task, make_splits


def _task_splits(cfg: ICLConfig, name: str) -> Splits:
    """Task `name`'s splits at the run's sizes (deterministic from the seed)."""
    return make_splits(
        get_task(name),
        cfg.seed,
        n_train=cfg.n_train,
        n_test=cfg.n_test,
        n_ood=cfg.n_ood,
        deltas=cfg.ood_deltas,
    )


def _splits(cfg: ICLConfig, ctx: RunContext) -> tuple[dict[str, Splits], Table]:
    rows, out = [], {}
    for name in ctx.track(cfg.tasks, "generating splits"):
        task = get_task(name)
        start = time.perf_counter()
        s = _task_splits(cfg, name)
        secs = time.perf_counter() - start
        out[name] = s
        mean_len = statistics.fmean(len(i.shown) for i in s.test)
        ood = {d: statistics.fmean(len(i.shown) for i in s.ood[d]) for d in s.ood}
        noise = 100 * statistics.fmean(i.label != i.clean_label for i in s.train + s.test)
        row = [name, len(s.train), len(s.test), round(mean_len, 1), round(noise, 2)]
        row += [f"{ood[d]:.0f} / {task.kl(d):.3f}" for d in cfg.ood_deltas]
        rows.append([*row, round(secs, 2)])
    cols = ["task", "train", "test", "ID mean length", "label noise %"]
    cols += [f"δ={d:g}: length / KL(P‖Q)" for d in cfg.ood_deltas] + ["seconds"]
    return out, Table(
        "Data: the generated splits", cols, rows, caption="KL is averaged over the generator's states."
    )


def _baselines(cfg: ICLConfig, splits: dict[str, Splits], ctx: RunContext) -> Table:
    rows = []
    sizes = [*sorted({k for k in cfg.shots if k > 0}), cfg.n_train]
    jobs = [(t, kind, k) for t in cfg.tasks for kind in cfg.baselines for k in sizes]
    for task, kind, k in ctx.track(jobs, "baselines"):
        s = splits[task]
        b = fit_baseline(task, kind, s.train[:k])
        rows.append([task, kind, "all" if k == cfg.n_train else k] + [
            round(b.accuracy(s.split(d)[: max(cfg.items, 1000)]), 1) for d in cfg.deltas
        ])  # fmt: skip
    cols = ["task", "baseline", "train items"] + [_delta_name(d) for d in cfg.deltas]
    return Table("Baselines (accuracy %), trained on the first k training items or on all", cols, rows)


def _delta_name(d: float) -> str:
    return "ID" if d == 0 else f"OOD δ={d:g}"


def _cells(cfg: ICLConfig) -> list[Cell]:
    cells = []
    for task in cfg.tasks:
        for style in cfg.styles:
            for k in shot_counts(style, cfg.shots):
                for d in cfg.deltas:
                    for shuffle in (False, True) if cfg.shuffle and k > 1 else (False,):
                        cells.append(Cell(task, style, k, d, shuffle))
    return cells


def _run_cell(cfg: ICLConfig, model: ChatModel, splits: Splits, cell: Cell, apo_prompt: str | None) -> dict:
    """One cell evaluated with the run's settings; its row (`CellResult.as_dict`)."""
    n = cfg.reasoning_items if cell.style in REASONING else cfg.items
    res = evaluate_cell(
        model, get_task(cell.task), splits, cell, n_items=n, seed=cfg.seed,
        system=apo_prompt if cell.style == "apo" else None, logprobs=cfg.logprobs,
        reasoning_tokens=cfg.reasoning_tokens, max_concurrency=cfg.max_concurrency,
    )  # fmt: skip
    return res.as_dict()


def _cell_job(job: tuple[ICLConfig, LLMChoice, Cell, str, str | None]) -> tuple[dict, Usage]:
    """One cell in a Ray task: the splits rebuilt from the seed (deterministic), the run's model
    (`choice`) opened here with its own reply cache; returns the cell's row and what the model spent,
    for the run's `llm_usage`."""
    cfg, choice, cell, cache, apo_prompt = job
    model = choice.open(cache=cache, max_concurrency=cfg.max_concurrency)
    before = model.usage.total  # a worker's model may be shared with its earlier tasks
    try:
        row = _run_cell(cfg, model, _task_splits(cfg, cell.task), cell, apo_prompt)
        return row, model.usage.total - before
    finally:
        close = getattr(model, "close", None)
        if close is not None:
            close()


def _sweep(cfg: ICLConfig, splits: dict[str, Splits], ctx: RunContext) -> tuple[list[dict], float, dict]:
    """Every cell's scores (resumed from the cells already saved), the model's prompts/s, and the APO
    prompts."""
    model = ctx.chat_model(max_concurrency=cfg.max_concurrency)
    done_dir = ctx.checkpoint_dir / "cells"
    done_dir.mkdir(exist_ok=True)
    apo_prompts: dict[str, dict] = {}
    if "apo" in cfg.styles:
        for task in ctx.track(cfg.tasks, "APO prompt search"):
            path = done_dir / f"apo-{task}.json"
            if not path.exists():
                res = optimise_prompt(model, get_task(task), splits[task].train, cfg.apo, seed=cfg.seed)
                write_text_atomic(path, json.dumps(vars(res), indent=1))
            apo_prompts[task] = json.loads(path.read_text())
    results, prompts, seconds = [], 0, 0.0
    if cfg.parallel == "ray":
        todo = [c for c in _cells(cfg) if not (done_dir / f"{c.key}.json").exists()]
        choice = ctx.llm_choice()
        jobs = [
            (cfg, choice, c, str(done_dir / f"{c.key}.sqlite"), apo_prompts.get(c.task, {}).get("prompt"))
            for c in todo
        ]
        with ctx.progress("model sweep (cells, Ray)", total=len(jobs)) as advance:
            done = parallel_map(
                _cell_job, jobs, backend="ray", num_cpus_per_task=cfg.cpus_per_cell, on_result=advance
            )
        for cell, (row, usage) in zip(todo, done, strict=True):
            ctx.add_usage(usage)  # the worker's tokens, in results.json's llm_usage
            write_text_atomic(done_dir / f"{cell.key}.json", json.dumps(row))
            prompts += row["n"]
            seconds += row["seconds"]
    for cell in ctx.track(_cells(cfg), "model sweep (cells)"):
        path = done_dir / f"{cell.key}.json"
        if path.exists():
            results.append(json.loads(path.read_text()))
            continue
        row = _run_cell(cfg, model, splits[cell.task], cell, apo_prompts.get(cell.task, {}).get("prompt"))
        write_text_atomic(path, json.dumps(row))
        results.append(row)
        prompts += row["n"]
        seconds += row["seconds"]
    return results, (prompts / seconds if seconds else float("nan")), apo_prompts


def _gpt(cfg: ICLConfig, splits: dict[str, Splits], ctx: RunContext) -> list[dict]:
    rows = []
    for task in cfg.gpt_tasks:
        if task not in splits:
            continue
        gcfg = replace(cfg.gpt, family=FAMILY_OF_TASK[task], seed=cfg.seed)
        with ctx.progress(f"training the GPT for {task} (steps)", total=gcfg.steps) as advance:
            model = train_icl_gpt(gcfg, ctx.checkpoint_dir / f"gpt-{task}", on_progress=lambda *_: advance())
        for k in [k for k in cfg.shots if k <= gcfg.max_shots]:
            for d in cfg.deltas:
                sc = evaluate_gpt(model, task, splits[task], k, d, cfg.items)
                rows.append(
                    {"task": task, "style": "trained GPT", "shots": k, "delta": d}
                    | {"punish": sc.punish, "drop": sc.drop, "failure_rate": sc.failure_rate}
                )
    return rows


def _mean_by(rows: list[dict], keys: tuple[str, ...], value: str = "punish") -> dict[tuple, float]:
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        groups[tuple(r[k] for k in keys)].append(r[value])
    return {k: statistics.fmean(v) for k, v in groups.items()}


def _figures(cfg: ICLConfig, rows: list[dict], ctx: RunContext) -> list[str]:
    plt = pyplot()
    figs = []
    by = _mean_by([r for r in rows if not r.get("shuffle")], ("style", "shots", "delta"))
    panels = [0.0, max(cfg.ood_deltas)] if cfg.ood_deltas else [0.0]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), sharey=True, squeeze=False)
    for ax, d in zip(axes[0], panels, strict=True):
        for style in dict.fromkeys(r["style"] for r in rows):
            pts = sorted((k, v) for (s, k, dd), v in by.items() if s == style and dd == d)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=style)
        ax.set_xscale("symlog", linthresh=2)
        ax.set_xlabel("shots")
        ax.set_title(_delta_name(d))
        ax.axhline(50, color="grey", lw=0.5, ls=":")
    axes[0][0].set_ylabel("accuracy % (punish), mean over tasks")
    axes[0][-1].legend(fontsize=7)
    figs.append(save_figure(fig, ctx.out_dir, "accuracy_vs_shots"))
    top = max(r["shots"] for r in rows)
    heat = _mean_by([r for r in rows if r["shots"] == top and r["delta"] == 0], ("task", "style"))
    tasks = list(dict.fromkeys(k[0] for k in heat))
    styles = list(dict.fromkeys(k[1] for k in heat))
    grid = [[heat.get((t, s), float("nan")) for s in styles] for t in tasks]
    fig, ax = plt.subplots(figsize=(1.2 * len(styles) + 3, 0.45 * len(tasks) + 1.5))
    im = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis")
    ax.set_xticks(range(len(styles)), styles, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(tasks)), tasks, fontsize=8)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, f"{v:.0f}", ha="center", va="center", color="w", fontsize=7)
    ax.set_title(f"ID accuracy % at {top} shots")
    fig.colorbar(im, ax=ax)
    figs.append(save_figure(fig, ctx.out_dir, "tasks_by_styles"))
    return figs


def run(cfg: ICLConfig, ctx: RunContext) -> Report:
    """Data, baselines, the model sweep and the trained GPT; tables, figures and the claim check."""
    splits, data_table = _splits(cfg, ctx)
    tables = [data_table]
    if cfg.baselines:
        tables.append(_baselines(cfg, splits, ctx))
    rows: list[dict] = []
    notes = []
    if cfg.sweep:
        llm_rows, rate, apo = _sweep(cfg, splits, ctx)
        for r in llm_rows:
            r["style"] = r["style"] + (" (shuffled)" if r["shuffle"] else "")
        rows += llm_rows
        notes.append(f"model throughput: {rate:.2f} prompts/s over the cells run now (cached cells excluded)")
        for task, res in apo.items():
            found = f"({res['calls']} calls, minibatch {res['accuracy']:.0f}%)"
            notes.append(f"APO prompt for {task} {found}: {res['prompt']!r}")
        cols = [
            "task",
            "style",
            "shots",
            "δ",
            "accuracy % (punish)",
            "accuracy % (drop)",
            "unparsed %",
            "refused",
        ]
        cols += ["log-prob accuracy %"] if cfg.logprobs else []
        table_rows = []
        for r in llm_rows:
            row = [r["task"], r["style"], r["shots"], r["delta"], round(r["punish"], 1), round(r["drop"], 1)]
            row += [round(r["failure_rate"], 1), r.get("refused", 0)]
            if cfg.logprobs:
                row.append(round(r["logprob"], 1) if "logprob" in r else None)
            table_rows.append(row)
        tables.append(Table(f"Language model (--llm {ctx.llm_choice().label}): every cell", cols, table_rows))
    gpt_rows = _gpt(cfg, splits, ctx) if cfg.gpt_tasks else []
    if gpt_rows:
        cols = ["task", "shots", "δ", "accuracy % (punish)", "unparsed %"]
        body = [
            [r["task"], r["shots"], r["delta"], round(r["punish"], 1), round(r["failure_rate"], 1)]
            for r in gpt_rows
        ]
        tables.append(Table("Trained GPT (learns in context from scratch)", cols, body))
    rows += gpt_rows
    if not rows:
        return Report(tables=tables, notes=["no model and no trained GPT: data and baselines only"])
    by = _mean_by(rows, ("style", "shots", "delta"))
    styles = list(dict.fromkeys(r["style"] for r in rows))
    shot_list = sorted({r["shots"] for r in rows})
    summary = [[s, k] + [round(by[(s, k, d)], 1) if (s, k, d) in by else None for d in cfg.deltas]
               for s in styles for k in shot_list if any((s, k, d) in by for d in cfg.deltas)]  # fmt: skip
    tables.append(Table("Accuracy % (punish) by style and shots, mean over tasks", ["style", "shots"]
                        + [_delta_name(d) for d in cfg.deltas], summary))  # fmt: skip
    spread = []
    llm_styles = [s for s in styles if s != "trained GPT" and "shuffled" not in s]
    for k in shot_list:
        for d in cfg.deltas:
            vals = [by[(s, k, d)] for s in llm_styles if (s, k, d) in by]
            if len(vals) > 1:
                spread.append(
                    [
                        k,
                        _delta_name(d),
                        len(vals),
                        round(max(vals) - min(vals), 1),
                        round(statistics.pstdev(vals), 1),
                    ]
                )
    if spread:
        tables.append(Table("Spread across prompt styles as shots grow (the paper: it shrinks)",
                            ["shots", "split", "styles", "max − min", "std"], spread))  # fmt: skip
    if cfg.ood_deltas:
        far = max(cfg.ood_deltas)
        drops = []
        for s in styles:
            pairs = [
                (by[(s, k, 0.0)], by[(s, k, far)])
                for k in shot_list
                if (s, k, 0.0) in by and (s, k, far) in by
            ]
            if pairs:
                ident, ood = statistics.fmean(p[0] for p in pairs), statistics.fmean(p[1] for p in pairs)
                drops.append([s, len(pairs), round(ident, 1), round(ood, 1), round(ident - ood, 1)])
        tables.append(Table(f"Sensitivity to the OOD shift by style (δ={far:g}), mean over tasks and shots",
                            ["style", "shot counts", "ID", f"OOD δ={far:g}", "ID − OOD"], drops))  # fmt: skip
    figures = _figures(cfg, rows, ctx)
    claim = None
    if cfg.ood_deltas:
        top = max(shot_list)
        d = max(cfg.ood_deltas)
        ident = [r["punish"] for r in rows if r["shots"] == top and r["delta"] == 0]
        ood = [r["punish"] for r in rows if r["shots"] == top and r["delta"] == d]
        if ident and ood:
            n = min(cfg.items, 1000) * max(1, len(ident))
            claim = ClaimCheck(
                f"accuracy % at {top} shots, mean over tasks and styles (ID vs OOD: ICL generalises poorly)",
                "ID test",
                statistics.fmean(ident),
                f"OOD δ={d:g}",
                statistics.fmean(ood),
                margin=round(100 * 0.5 / n**0.5 * 2, 1),  # two binomial standard errors at p = 0.5
            )
    return Report(tables=tables, figures=figures, claim_check=claim, notes=notes)


_SMALL_GPT = {"gpt.n_layer": 2, "gpt.d_model": 64, "gpt.n_head": 2, "gpt.max_shots": 10}
# bench (the README sweep, about an hour with SmolLM2 on 2 cores): all nine tasks, four styles, three
# shot counts, ID and δ = 0.85, 12 items per cell (3 for chain of thought, 256-token replies)
_BENCH = with_changes(
    ICLConfig(),
    {"styles": ("modus_ponens", "description", "word_salad", "cot"), "shots": (0, 5, 20), "items": 12,
     "reasoning_items": 3, "reasoning_tokens": 256, "gpt.n_layer": 2, "gpt.d_model": 64, "gpt.n_head": 2,
     "gpt.steps": 400},
)  # fmt: skip
PRESETS = preset_table(
    bench=_BENCH,
    smoke={
        "tasks": ("parity", "stack"),
        "styles": ("modus_ponens",),
        "shots": (2,),
        "items": 2,
        "n_train": 40,
        "n_test": 20,
        "n_ood": 20,
        "logprobs": False,
        "baselines": ("knn",),
        "gpt_tasks": ("parity",),
        **_SMALL_GPT,
        "gpt.steps": 20,
        "gpt.pool_size": 200,
        "gpt.checkpoint_every": 10,
    },
    # the tour: two tasks, bare and described exemplars, one shot count, ID and δ = 0.85
    demo={
        "tasks": ("parity", "pattern_matching"),
        "styles": ("modus_ponens", "description"),
        "shots": (5,),
        "items": 100,
        "n_train": 300,
        "n_test": 200,
        "n_ood": 200,
        "logprobs": False,
        "gpt_tasks": ("pattern_matching",),
        **_SMALL_GPT,
        "gpt.steps": 150,
        "gpt.pool_size": 1000,
    },
    # the paper's grid: 1000 items per cell, all seven styles, up to 100 shots, every δ, shuffled too;
    # run with --llm http (ICLR26_LLM_BASE_URL) for a model of the paper's size
    paper={
        "styles": (
            "modus_ponens",
            "description",
            "automaton",
            "word_salad",
            "cot",
            "salad_of_thought",
            "apo",
        ),
        "shots": (0, 2, 5, 10, 20, 50, 100),
        "deltas": (0.0, 0.2, 0.45, 0.65, 0.85),
        "shuffle": True,
        "items": 1000,
        "n_ood": 3000,
        "reasoning_items": 1000,
        "reasoning_tokens": 1024,
        "apo.rounds": 6,
        "apo.minibatch": 64,
        "apo.reasons": 4,
        "apo.budget": 3000,
        "gpt.steps": 20_000,
        "gpt.device": "cuda",
    },
)
SYSTEM = implemented_system("icl_analysis", presets=PRESETS, run=run)
