"""`iclr26 run spatial_dise --set experiment=teach`: does generated data teach? (`teach.py`) as a study.

Units: each task's held-out test items (`<task>/test_0000`, ...). Arms: the Siamese scorer trained on
n items of that task (`<task>@<n>`, the methods; a cell is the item's accuracy averaged over the
training seeds) and three floors named before the run: `chance` (a seeded letter per seed),
`majority` (the constant floor: the answer position most frequent in the task's largest training
set) and `untrained` (the same network with its initial weights, per seed). A control arm per task,
`<task>@<n>-blind` (a baseline), trains the same scorer at the largest size with the question panels
blanked, in training and testing: what the options alone give away. `oracle` answers with the
generator's letter (it must pass every item) and `null` with nothing (it must pass none).

Claims, per task, by core's one rule (paired per test item, bootstrap interval): the scorer at each
size against all three floors (the reported check is the worst), and each size against the next
smaller one (does more generated data help?), and the largest size against its blind twin (does the
scorer use the question?). The paper's fine-tuning figures are references only.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.records import pyplot
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Reference, Study, StudyResult, Unit, run_study
from iclr26.spatial_dise.items import LETTERS
from iclr26.spatial_dise.teach import (
    Items,
    TeachConfig,
    load_items,
    majority_letter,
    make_scorer,
    predict,
    rejected_drafts,
    train,
)

BLIND = "-blind"
"""The suffix of a control arm trained and tested with blank question panels."""
FLOORS = (("chance", "chance"), ("majority", "constant"), ("untrained", "untrained"))
"""The floor arms and the trivial policy each names."""


def size_label(n: int) -> str:
    """1000 -> '1k'; other sizes as they are."""
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def arm_name(task_name: str, n: int) -> str:
    """The method arm of `task_name` trained on n items."""
    return f"{task_name}@{size_label(n)}"


class Curve:
    """What the cells share: the items (drawn or loaded once per task and split), and every trained
    or untrained model's choices on a task's test items (trained on the arm's first cell)."""

    def __init__(self, cfg: TeachConfig, data_dir: Path, checkpoint_dir: Path, ctx: RunContext) -> None:
        self.cfg, self.data_dir, self.checkpoint_dir, self.ctx = cfg, data_dir, checkpoint_dir, ctx
        self._lock = threading.RLock()
        self._items: dict[tuple[str, str], Items] = {}
        self._choices: dict[tuple[str, str], list[np.ndarray]] = {}
        self.runs: dict[tuple[str, int, int, bool], dict[str, Any]] = {}
        self.arm_sizes: dict[str, int] = {}

    def items(self, task_name: str, split: str, n: int) -> Items:
        """The first n items of a task's split (one copy per task and split: smaller n are views)."""
        with self._lock:
            key = (task_name, split)
            if key not in self._items or len(self._items[key]) < n:
                self._items.pop(key, None)
                with self.ctx.progress(f"items: {task_name} {split} {n}", n):
                    self._items[key] = load_items(self.data_dir, task_name, split, n, self.cfg)
            return self._items[key].head(n)

    def test(self, task_name: str) -> Items:
        """A task's test items."""
        return self.items(task_name, "test", self.cfg.test_items)

    def choices(self, task_name: str, arm: str) -> list[np.ndarray]:
        """Per training seed, the option (0-3) `arm` picks on each of the task's test items."""
        with self._lock:
            key = (task_name, arm)
            if key not in self._choices:
                self._choices[key] = self._compute(task_name, arm)
            return self._choices[key]

    def _compute(self, task_name: str, arm: str) -> list[np.ndarray]:
        cfg, test = self.cfg, self.test(task_name)
        seeds = range(cfg.seeds)
        if arm == "untrained":
            return [predict(make_scorer(cfg, s), test) for s in seeds]
        if arm == "majority":
            n = max(cfg.sizes_of(task_name))
            letter = majority_letter(self.items(task_name, "train", n).answers.tolist())
            return [np.full(len(test), letter) for _ in seeds]
        if arm == "chance":
            out = []
            for s in seeds:
                rng = np.random.default_rng(derive_seed(cfg.seed, "chance", task_name, s))
                out.append(rng.integers(len(LETTERS), size=len(test)))
            return out
        n, blind = int(self.arm_sizes[arm]), arm.endswith(BLIND)
        train_items = self.items(task_name, "train", n)
        val = self.items(task_name, "val", cfg.val_items)
        if blind:
            train_items, val, test = train_items.blanked(), val.blanked(), test.blanked()
        out = []
        for s in seeds:
            folder = self.checkpoint_dir / f"{task_name}-{n}-seed{s}{BLIND if blind else ''}"
            with self.ctx.progress(f"training {arm}, seed {s}", 1):
                run = train(train_items, val, cfg, s, folder)
            self.runs[(task_name, n, s, blind)] = {"best_step": run.best_step, "best_val": run.best_val,
                                            "history": run.history}  # fmt: skip
            out.append(predict(run.model, test))
        return out


def measure(curve: Curve, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One arm on one test item: its accuracy over the training seeds (empty: another task's arm)."""
    task_name, i = unit.params["task"], unit.params["index"]
    if arm.params.get("task", task_name) != task_name:
        return {}
    answer = int(curve.test(task_name).answers[i])
    if arm.name == "oracle":
        return {"correct": 1.0}
    if arm.name == "null":
        return {"correct": 0.0}
    picks = [int(c[i]) for c in curve.choices(task_name, arm.name)]
    hits = [float(p == answer) for p in picks]
    out: dict[str, Any] = {"per_seed": hits, "letters": "".join(LETTERS[p] for p in picks)}
    if "n" in arm.params:  # the training runs' best validation accuracy and step, per seed
        n, blind = int(arm.params["n"]), bool(arm.params.get("blind"))
        runs = [curve.runs[(task_name, n, s, blind)] for s in range(curve.cfg.seeds)]
        out.update(best_val=[r["best_val"] for r in runs], best_step=[r["best_step"] for r in runs])
    return {"correct": float(np.mean(hits)), **out}


def study(cfg: TeachConfig, curve: Curve, views: Any = None) -> Study:
    """The learning-curve study (see the module docstring): arms smallest size first, so the cells of
    the small runs are in the ledger before the large ones start."""
    methods: list[Arm] = []
    for n in cfg.sizes:
        for t in cfg.tasks:
            if n in cfg.sizes_of(t):
                methods.append(Arm(arm_name(t, n), "method", params={"task": t, "n": n}))
    blind = [
        Arm(arm_name(t, max(cfg.sizes_of(t))) + BLIND, "baseline",
            params={"task": t, "n": max(cfg.sizes_of(t)), "blind": True})
        for t in cfg.tasks
    ]  # fmt: skip
    curve.arm_sizes = {a.name: int(a.params["n"]) for a in [*methods, *blind]}
    floors = [Arm(name, "floor", floor=kind) for name, kind in FLOORS]
    arms = [*methods, *blind, *floors, Arm("oracle", "oracle"), Arm("null", "null")]
    units = [
        Unit(f"{t}/test_{i:04d}", cfg.seed, {"task": t, "index": i})
        for t in cfg.tasks
        for i in range(cfg.test_items)
    ]
    floor_names = tuple(name for name, _ in FLOORS)
    label = "test accuracy (mean over training seeds), paired per item"
    claims = []
    for t in cfg.tasks:  # first: each task's largest training set against the floors
        claims.append(Claim("correct", arm_name(t, max(cfg.sizes_of(t))), floor_names, interval="bootstrap",
                            floor_arm="chance", label=f"{t}: {label}"))  # fmt: skip
    for t in cfg.tasks:
        sizes = cfg.sizes_of(t)
        for n in sizes[:-1]:
            claims.append(Claim("correct", arm_name(t, n), floor_names, interval="bootstrap",
                                floor_arm="chance", label=f"{t}: {label}"))  # fmt: skip
        for a, b in itertools.pairwise(sizes):
            claims.append(Claim("correct", arm_name(t, b), (arm_name(t, a),), interval="bootstrap",
                                label=f"{t}: {label}, {size_label(b)} vs {size_label(a)} items"))  # fmt: skip
        top = arm_name(t, sizes[-1])
        claims.append(Claim("correct", top, (top + BLIND,), interval="bootstrap",
                            label=f"{t}: {label}, the question shown vs blanked"))  # fmt: skip
    references = [
        Reference(
            "Qwen2.5-VL-7B before fine-tuning (paper)", {"correct": 0.261}, "arXiv 2510.13394, its bench"
        ),
        Reference(
            "Qwen2.5-VL-7B fine-tuned on 12K (paper)", {"correct": 0.470}, "arXiv 2510.13394, its bench"
        ),
    ]
    return Study("spatial_dise_teach", arms, units, functools.partial(measure, curve), claims=claims,
                 references=references, metrics=("correct",), pass_metric="correct", config=cfg,
                 seed=cfg.seed, views=views)  # fmt: skip


def _curve_table(cfg: TeachConfig, curve: Curve, result: StudyResult) -> Table:
    """Per task: each floor's and each size's test accuracy (mean, and per training seed), its best
    validation accuracy and step."""
    rows = []
    for t in cfg.tasks:
        keys = [u.key for u in result.study.units if u.params["task"] == t]
        top = arm_name(t, max(cfg.sizes_of(t)))
        for arm in [*(name for name, _ in FLOORS), *(arm_name(t, n) for n in cfg.sizes_of(t)), top + BLIND]:
            cells = [result.cells.get((arm, k)) for k in keys]
            cells = [c for c in cells if c is not None and c.metrics]
            if not cells:
                continue
            per_seed = np.array([c.metrics["per_seed"] for c in cells]).mean(axis=0)
            n = curve.arm_sizes.get(arm)
            val, step = cells[0].metrics.get("best_val"), cells[0].metrics.get("best_step")
            mean = round(100 * float(np.mean([c.metrics["correct"] for c in cells])), 1)
            shown = (
                arm if n is None else size_label(n) + (", question blanked" if arm.endswith(BLIND) else "")
            )
            rows.append([t, shown, mean,
                         " / ".join(f"{100 * v:.1f}" for v in per_seed),
                         " / ".join(f"{100 * v:.1f}" for v in val) if val else None,
                         " / ".join(str(v) for v in step) if step else None])  # fmt: skip
    return Table(
        "Does generated data teach? Test accuracy (%) by training-set size, against the floors",
        [
            "task",
            "arm (training items)",
            "test accuracy",
            "per seed",
            "best validation (per seed)",
            "best step",
        ],
        rows,
        caption=f"{cfg.test_items} test items per task; {cfg.seeds} training seeds; {cfg.budget} item passes "
        f"per run at every size; validation {cfg.val_items} items, checked {cfg.evals} times per run",
    )


def _figure(cfg: TeachConfig, result: StudyResult, out_dir: Path) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(cfg.tasks), figsize=(4 * len(cfg.tasks), 3.2), squeeze=False)
    for ax, t in zip(axes[0], cfg.tasks, strict=True):
        keys = [u.key for u in result.study.units if u.params["task"] == t]

        def mean(arm: str, keys: Sequence[str] = keys) -> float:
            vals = [result.cells[(arm, k)].metrics["correct"] for k in keys if (arm, k) in result.cells]
            return 100 * float(np.mean(vals)) if vals else float("nan")

        sizes = cfg.sizes_of(t)
        ax.plot(sizes, [mean(arm_name(t, n)) for n in sizes], "o-", label="Siamese scorer")
        ax.plot(
            [sizes[-1]], [mean(arm_name(t, sizes[-1]) + BLIND)], "x", color="red", label="question blanked"
        )
        for (name, _), style in zip(FLOORS, (":", "--", "-."), strict=True):
            ax.axhline(mean(name), linestyle=style, color="grey", label=name)
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(list(sizes), [size_label(n) for n in sizes])
        ax.set_title(t)
        ax.set_xlabel("training items")
        ax.set_ylabel("test accuracy (%)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    path = out_dir / "teach_curve.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _views(cfg: TeachConfig, curve: Curve, result: StudyResult, ctx: RunContext) -> Report:
    rejected = {t: rejected_drafts(curve.data_dir, t, "train", max(cfg.sizes_of(t)), cfg) for t in cfg.tasks}
    notes = [
        "drafts refused while drawing each task's largest training set (the verifier and the answerability "
        "gate): " + ", ".join(f"{t} {r}" for t, r in rejected.items())
    ]
    return Report(
        tables=[_curve_table(cfg, curve, result)], figures=[_figure(cfg, result, ctx.out_dir)], notes=notes
    )


def run_teach(cfg: TeachConfig, data_dir: str, ctx: RunContext) -> Report:
    """Draw (or resume) the items, train (or resume) every run, and run the study."""
    root = Path(data_dir) if data_dir else ctx.out_dir / "teach_data"
    curve = Curve(cfg, root, ctx.checkpoint_dir / "teach", ctx)
    return run_study(study(cfg, curve, functools.partial(_views, cfg, curve)), ctx).report
