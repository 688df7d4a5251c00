"""`iclr26 run icl_analysis`: generate the nine tasks' splits, then run the study (`core.study`):
the units are task × test split (the ID test split and each OOD δ), and the arms the ways of
labelling a split's first `items` test items from the first k training items: the language model
(the run's, `--llm`) in each prompt style at each shot count, the scikit-learn baselines fitted on
the same k exemplars (and on the whole training split), the small GPT trained here to learn in
context, and two floors that read no input string: the training split's majority label and the
majority label of the k exemplars. From the cells: accuracy against shots per style, ID and OOD, the
spread across styles, the OOD drop, the figures.

Each (arm, unit) is one line of `cells.jsonl` in the run folder, and every model reply is in the
run's LLM cache, so an interrupted sweep resumes; `--parallel ray` (or `--jobs N`) runs cells in
other processes, each opening the run's model, and their tokens come back in each cell's record.
"""

from __future__ import annotations

import functools
import statistics
import threading
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.config import with_changes
from iclr26.core.llm import ChatModel
from iclr26.core.records import pyplot, save_figure
from iclr26.core.study import Arm, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.icl_analysis.apo import optimise_prompt
from iclr26.icl_analysis.baselines import fit_baseline
from iclr26.icl_analysis.config import ICLConfig
from iclr26.icl_analysis.corpus import CorpusError, load_authors_splits
from iclr26.icl_analysis.evaluate import Cell, evaluate_cell
from iclr26.icl_analysis.gpt import FAMILY_OF_TASK, ICLGPT, evaluate_gpt, train_icl_gpt
from iclr26.icl_analysis.prompts import REASONING, shot_counts
from iclr26.icl_analysis.tasks import Splits, get_task, make_splits

MAJORITY = "majority_label"


def _task_splits(cfg: ICLConfig, name: str) -> Splits:
    """Task `name`'s splits: generated at the run's sizes (deterministic from the seed), or the
    authors' released files when `data` names their `datasets/` folder."""
    if cfg.data != "ours":
        root = Path(cfg.data).expanduser()
        if not root.is_dir():
            raise CorpusError(f"data: {cfg.data} is not a folder (the authors' datasets/ folder)")
        s = load_authors_splits(root, name)
        missing = [d for d in cfg.ood_deltas if d not in s.ood]
        if missing:
            have = ", ".join(f"{d:g}" for d in sorted(s.ood)) or "none"
            raise CorpusError(
                f"data: the authors' {name} files have no OOD split at δ={missing[0]:g} (have: {have})"
            )
        return s
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
        clean = [i for i in s.train + s.test if i.clean_label is not None]  # not released by the authors
        noise = round(100 * statistics.fmean(i.label != i.clean_label for i in clean), 2) if clean else "—"
        row = [name, len(s.train), len(s.test), round(mean_len, 1), noise]
        ours = cfg.data == "ours"  # our generator's KL; the authors' files carry none
        row += [f"{ood[d]:.0f} / " + (f"{task.kl(d):.3f}" if ours else "—") for d in cfg.ood_deltas]
        rows.append([*row, round(secs, 2)])
    cols = ["task", "train", "test", "ID mean length", "label noise %"]
    cols += [f"δ={d:g}: length / KL(P‖Q)" for d in cfg.ood_deltas] + ["seconds"]
    return out, Table(
        "Data: the generated splits", cols, rows, caption="KL is averaged over the generator's states."
    )


def _delta_name(d: float) -> str:
    return "ID" if d == 0 else f"OOD δ={d:g}"


def _cells(cfg: ICLConfig) -> list[Cell]:
    """The language model's grid, task-major (the order of its table)."""
    cells = []
    for task in cfg.tasks:
        for style in cfg.styles:
            for k in shot_counts(style, cfg.shots):
                for d in cfg.deltas:
                    for shuffle in (False, True) if cfg.shuffle and k > 1 else (False,):
                        cells.append(Cell(task, style, k, d, shuffle))
    return cells


def _llm_arm(style: str, shots: int, shuffle: bool = False) -> str:
    return f"{style}@{shots}" + ("-shuffled" if shuffle else "")


def _unit(task: str, delta: float) -> str:
    return f"{task}/{_delta_name(delta)}"


def _baseline_sizes(cfg: ICLConfig) -> list[int]:
    return [*sorted({k for k in cfg.shots if k > 0}), cfg.n_train]


def _gpt_shots(cfg: ICLConfig) -> list[int]:
    return [k for k in cfg.shots if k <= cfg.gpt.max_shots] if cfg.gpt_tasks else []


def arms(cfg: ICLConfig) -> list[Arm]:
    """The language model per style × shots (× shuffled), the baselines per kind × training size, the
    trained GPT per shot count, and the floors: the majority label, and the shot labels' majority per
    shot count."""
    out = []
    if cfg.sweep:
        for style in cfg.styles:
            for k in shot_counts(style, cfg.shots):
                for shuffle in (False, True) if cfg.shuffle and k > 1 else (False,):
                    params = {"style": style, "shots": k, "shuffle": shuffle}
                    out.append(Arm(_llm_arm(style, k, shuffle), "method", params=params))
    for kind in cfg.baselines:
        for k in _baseline_sizes(cfg):
            name = f"{kind}@{'all' if k == cfg.n_train else k}"
            out.append(Arm(name, "baseline", params={"kind": kind, "train": k}))
    out += [Arm(f"gpt@{k}", "method", params={"gpt": True, "shots": k}) for k in _gpt_shots(cfg)]
    out.append(Arm(MAJORITY, "floor", floor="majority label"))
    for k in sorted({k for k in cfg.shots if k > 0}):
        out.append(Arm(f"shot_majority@{k}", "floor", floor="the shot labels' majority", params={"shots": k}))
    return out


class Bench:
    """What the cells of one process share, made on first use: the splits (generated before the
    study), the run's model per context, each task's APO prompt and trained GPT. Pickled into a Ray
    task without its models (the worker opens its own)."""

    def __init__(self, cfg: ICLConfig, splits: dict[str, Splits]) -> None:
        self.cfg, self.splits = cfg, splits
        self._lock = threading.Lock()
        self._models: dict[int, tuple[RunContext, ChatModel]] = {}
        self._apo: dict[str, dict[str, Any]] = {}
        self._gpt: dict[str, ICLGPT] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"cfg": self.cfg, "splits": self.splits}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["cfg"], state["splits"])  # type: ignore[misc]

    def model(self, ctx: RunContext) -> ChatModel:
        with self._lock:
            held = self._models.get(id(ctx))
            if held is None or held[0] is not ctx:  # keyed by the context it was opened for
                held = (ctx, ctx.chat_model(max_concurrency=self.cfg.max_concurrency))
                self._models[id(ctx)] = held
            return held[1]

    def apo(self, task: str, ctx: RunContext) -> dict[str, Any]:
        """Task's APO search (its model calls come from the run's cache on a resume)."""
        model = self.model(ctx)
        with self._lock:
            if task not in self._apo:
                res = optimise_prompt(model, get_task(task), self.splits[task].train, self.cfg.apo,
                                      seed=self.cfg.seed)  # fmt: skip
                self._apo[task] = {"prompt": res.prompt, "accuracy": res.accuracy, "calls": res.calls}
            return self._apo[task]

    def gpt(self, task: str, ctx: RunContext) -> ICLGPT:
        """Task's GPT, trained on first use (from its checkpoint folder when one is there)."""
        with self._lock:
            if task not in self._gpt:
                gcfg = replace(self.cfg.gpt, family=FAMILY_OF_TASK[task], seed=self.cfg.seed)
                with ctx.progress(f"training the GPT for {task} (steps)", total=gcfg.steps) as step:
                    self._gpt[task] = train_icl_gpt(
                        gcfg, ctx.checkpoint_dir / f"gpt-{task}", on_progress=lambda *_: step(1)
                    )
            return self._gpt[task]


def _majority(labels: list[int]) -> int:
    """The most frequent label (a tie: the smallest of the tied labels)."""
    counts = Counter(labels)
    top = max(counts.values())
    return min(y for y, n in counts.items() if n == top)


def measure(bench: Bench, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One arm's accuracy % (`accuracy`: an unparsed reply counts wrong) on the first `items` test
    items of the unit's split; the language model's cell adds the drop score, the unparsed share,
    refusals and the log-prob scorer, a baseline's its accuracy on up to 1,000 items (its table)."""
    cfg, task, delta = bench.cfg, unit.params["task"], unit.params["delta"]
    splits, p = bench.splits[task], arm.params
    items = splits.split(delta)[: cfg.items]
    if arm.role == "floor":
        shots = p.get("shots")
        guess = _majority([i.label for i in (splits.train[:shots] if shots else splits.train)])
        return {"accuracy": 100 * statistics.fmean(i.label == guess for i in items), "label": guess}
    if "kind" in p:
        b = fit_baseline(task, p["kind"], splits.train[: p["train"]])
        wide = splits.split(delta)[: max(cfg.items, 1000)]
        return {"accuracy": b.accuracy(items), "accuracy_wide": b.accuracy(wide)}
    if p.get("gpt"):
        if task not in FAMILY_OF_TASK or task not in cfg.gpt_tasks:
            return {}
        sc = evaluate_gpt(bench.gpt(task, ctx), task, splits, p["shots"], delta, cfg.items)
        return {"accuracy": sc.punish, "punish": sc.punish, "drop": sc.drop, "failure_rate": sc.failure_rate}
    cell = Cell(task, p["style"], p["shots"], delta, p["shuffle"])
    apo = bench.apo(task, ctx) if cell.style == "apo" else None
    n = cfg.reasoning_items if cell.style in REASONING else cfg.items
    res = evaluate_cell(
        bench.model(ctx), get_task(task), splits, cell, n_items=n, seed=cfg.seed,
        system=apo["prompt"] if apo else None, logprobs=cfg.logprobs,
        reasoning_tokens=cfg.reasoning_tokens, max_concurrency=cfg.max_concurrency,
    )  # fmt: skip
    out = {"accuracy": res.score.punish, **res.as_dict()}
    if apo:
        out["apo"] = apo
    return out


def _claims(cfg: ICLConfig, names: set[str]) -> list[Claim]:
    """Named before the run: the first style at its largest shot count (the trained GPT when there is
    no sweep) against the two floors on accuracy, paired over task × split (the floors are the
    baselines, so a method below them did not hold; only 0 vs 0 everywhere is uninformative); then
    against the baselines fitted on the same exemplars (a unit where both sit at or below the
    majority label counts as at the floor)."""
    if cfg.sweep and cfg.styles and shot_counts(cfg.styles[0], cfg.shots):
        k = max(shot_counts(cfg.styles[0], cfg.shots))
        method = _llm_arm(cfg.styles[0], k)
    elif _gpt_shots(cfg):
        k = max(_gpt_shots(cfg))
        method = f"gpt@{k}"
    else:
        return []
    floors = tuple(f for f in (MAJORITY, f"shot_majority@{k}") if f in names)
    what = "accuracy % on the split's first items, paired over task × split"
    claims = [Claim("accuracy", method, floors, floor=0.0, label=f"{what}: {method} vs the floors")]
    fitted = tuple(f"{kind}@{k}" for kind in cfg.baselines if f"{kind}@{k}" in names)
    if fitted:
        label = f"{what}: {method} vs the baselines on the same {k} exemplars"
        claims.append(Claim("accuracy", method, fitted, floor_arm=MAJORITY, label=label))
    return claims


def study(cfg: ICLConfig, splits: dict[str, Splits]) -> Study:
    """icl_analysis as a study: `arms(cfg)` over the units task × split, the claims of `_claims`."""
    bench = Bench(cfg, splits)
    made = arms(cfg)
    units = [Unit(_unit(t, d), cfg.seed, {"task": t, "delta": d}) for t in cfg.tasks for d in cfg.deltas]
    return Study("icl_analysis", made, units, functools.partial(measure, bench),
                 claims=_claims(cfg, {a.name for a in made}), metrics=("accuracy",), config=cfg,
                 seed=cfg.seed, views=functools.partial(_views, cfg))  # fmt: skip


def _baselines(cfg: ICLConfig, result: StudyResult) -> Table:
    rows = []
    for task in cfg.tasks:
        for kind in cfg.baselines:
            for k in _baseline_sizes(cfg):
                arm = f"{kind}@{'all' if k == cfg.n_train else k}"
                cells = [result.cells.get((arm, _unit(task, d))) for d in cfg.deltas]
                accs = [None if c is None else round(c.metrics["accuracy_wide"], 1) for c in cells]
                rows.append([task, kind, "all" if k == cfg.n_train else k, *accs])
    cols = ["task", "baseline", "train items"] + [_delta_name(d) for d in cfg.deltas]
    return Table("Baselines (accuracy %), trained on the first k training items or on all", cols, rows)


def _llm_rows(cfg: ICLConfig, result: StudyResult) -> list[dict]:
    rows = []
    for c in _cells(cfg) if cfg.sweep else ():
        cell = result.cells.get((_llm_arm(c.style, c.shots, c.shuffle), _unit(c.task, c.delta)))
        if cell is not None:
            rows.append(dict(cell.metrics))
    return rows


def _gpt_rows(cfg: ICLConfig, result: StudyResult) -> list[dict]:
    rows = []
    for task in (t for t in cfg.gpt_tasks if t in cfg.tasks):
        for k in _gpt_shots(cfg):
            for d in cfg.deltas:
                cell = result.cells.get((f"gpt@{k}", _unit(task, d)))
                if cell is not None and cell.metrics:
                    m = cell.metrics
                    scores = {key: m[key] for key in ("punish", "drop", "failure_rate")}
                    rows.append({"task": task, "style": "trained GPT", "shots": k, "delta": d, **scores})
    return rows


def _floor_rows(cfg: ICLConfig, result: StudyResult) -> list[dict]:
    """The floors as rows of the style × shots summary: the majority label at every shot count, the
    shot labels' majority at its own."""
    rows = []
    for arm in (a for a in result.study.arms if a.role == "floor"):
        ks = [arm.params["shots"]] if "shots" in arm.params else sorted(set(cfg.shots))
        style = "floor: majority label" if arm.name == MAJORITY else "floor: the shots' majority label"
        for cell in result.records(arm.name):
            task, d = next(
                (u.params["task"], u.params["delta"]) for u in result.study.units if u.key == cell.unit
            )
            acc = cell.metrics["accuracy"]
            rows += [{"task": task, "style": style, "shots": k, "delta": d, "punish": acc} for k in ks]
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


def _views(cfg: ICLConfig, data: Table, result: StudyResult, ctx: RunContext) -> Report:
    """icl_analysis's own tables and figures from the cells: the data, the baselines, every language
    model cell, the trained GPT, accuracy by style and shots (the floors beside them), the spread
    across styles, the OOD drop by style."""
    tables = [data]
    if cfg.baselines:
        tables.append(_baselines(cfg, result))
    rows: list[dict] = []
    notes = []
    llm_rows = _llm_rows(cfg, result)
    if cfg.sweep:
        for r in llm_rows:
            r["style"] = r["style"] + (" (shuffled)" if r["shuffle"] else "")
        rows += llm_rows
        asked, spent = sum(r["n"] for r in llm_rows), sum(r["seconds"] for r in llm_rows)
        rate = asked / spent if spent else float("nan")
        notes.append(f"model throughput: {rate:.2f} prompts/s over the language model's cells")
        apo = {r["task"]: r["apo"] for r in llm_rows if "apo" in r}
        for task, res in apo.items():
            found = f"({res['calls']} calls, minibatch {res['accuracy']:.0f}%)"
            notes.append(f"APO prompt for {task} {found}: {res['prompt']!r}")
        cols = ["task", "style", "shots", "δ", "accuracy % (punish)", "accuracy % (drop)", "unparsed %",
                "refused"]  # fmt: skip
        cols += ["log-prob accuracy %"] if cfg.logprobs else []
        table_rows = []
        for r in llm_rows:
            row = [r["task"], r["style"], r["shots"], r["delta"], round(r["punish"], 1), round(r["drop"], 1)]
            row += [round(r["failure_rate"], 1), r.get("refused", 0)]
            if cfg.logprobs:
                row.append(round(r["logprob"], 1) if "logprob" in r else None)
            table_rows.append(row)
        tables.append(Table(f"Language model (--llm {ctx.llm_choice().label}): every cell", cols, table_rows))
    gpt_rows = _gpt_rows(cfg, result)
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
    floors = _floor_rows(cfg, result)
    shot_list = sorted({r["shots"] for r in rows})
    floors = [r for r in floors if r["shots"] in shot_list]
    by = _mean_by(rows + floors, ("style", "shots", "delta"))
    styles = list(dict.fromkeys(r["style"] for r in rows + floors))
    summary = [[s, k] + [round(by[(s, k, d)], 1) if (s, k, d) in by else None for d in cfg.deltas]
               for s in styles for k in shot_list if any((s, k, d) in by for d in cfg.deltas)]  # fmt: skip
    tables.append(Table("Accuracy % (punish) by style and shots, mean over tasks", ["style", "shots"]
                        + [_delta_name(d) for d in cfg.deltas], summary,
                        caption="the floors read no input string: the training split's majority label, "
                        "and the majority label of the k exemplars"))  # fmt: skip
    spread = []
    llm_styles = [
        s for s in styles if s != "trained GPT" and "shuffled" not in s and not s.startswith("floor")
    ]
    for k in shot_list:
        for d in cfg.deltas:
            vals = [by[(s, k, d)] for s in llm_styles if (s, k, d) in by]
            if len(vals) > 1:
                spread.append([k, _delta_name(d), len(vals), round(max(vals) - min(vals), 1),
                               round(statistics.pstdev(vals), 1)])  # fmt: skip
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
    figures = _figures(cfg, rows + floors, ctx)
    return Report(tables=tables, figures=figures, notes=notes)


def run(cfg: ICLConfig, ctx: RunContext) -> Report:
    """Generate the splits, then the study (`core.study.run_study`: resumable from `cells.jsonl`,
    `--jobs N` / `--parallel ray` run cells elsewhere): every arm on every task × split."""
    splits, data = _splits(cfg, ctx)
    s = study(cfg, splits)
    s.views = functools.partial(_views, cfg, data)
    return run_study(s, ctx).report


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
    # the tour (2 minutes on 2 cores): two tasks, bare exemplars (the claim's style), one shot count,
    # ID and δ = 0.85, 16 items a cell (two styles at 32 items took 358 s at --jobs 2, 2026-12-07:
    # each SmolLM2 item is a fresh 5-shot prompt, about 1.2 s on one thread)
    demo={
        "tasks": ("parity", "pattern_matching"),
        "styles": ("modus_ponens",),
        "shots": (5,),
        "items": 16,
        "n_train": 300,
        "n_test": 200,
        "n_ood": 200,
        "logprobs": False,
        "gpt_tasks": ("pattern_matching",),
        **_SMALL_GPT,
        "gpt.steps": 100,
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
