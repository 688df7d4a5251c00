"""`iclr26 run spatial_dise`: generate and prove the bench and the training splits, train the option
scorer, then run the study (`core.study`): every model answers every bench item (the units), and the
claim is the trained scorer against its floors (chance and each pixel heuristic), paired per item.

Arms: the option scorer trained here (the method), a VLM when a vision server is set (`vlm_row`), the
floors (random choice, the six pixel heuristics), and two arms that test the benchmark itself:
`oracle` re-derives every item from its seed and answers with the verifier's letter (it must pass every
item), `null` replies with nothing (it must pass none). The paper's rows (human 76.8%, random 24.8%,
its VLMs) are references: shown beside the arms, never a verdict's baseline.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.records import markdown_table
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Reference, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.spatial_dise import baselines as heuristics
from iclr26.spatial_dise.config import SpatialConfig
from iclr26.spatial_dise.dataset import BENCH_COUNTS, BENCH_SIZE, generate_split, proportional
from iclr26.spatial_dise.figures import example_sheet, quadrant_chart
from iclr26.spatial_dise.harness import (
    HUMAN_BY_QUADRANT,
    RANDOM,
    Evaluation,
    evaluate,
    parse_letter,
    vlm_predictor,
)
from iclr26.spatial_dise.items import DIFFICULTIES, QUADRANTS, make_item
from iclr26.spatial_dise.learning_curve import run_teach
from iclr26.spatial_dise.records import Record, load_release, read_csv
from iclr26.spatial_dise.scorer import ScorerConfig, predict_scorer, train_scorer
from iclr26.spatial_dise.tasks import TASKS, task

PAPER_ROWS = [
    ("human (paper)", 76.8, 76.8, 80.2, None, 61.1),
    ("random (paper)", 24.8, 24.7, 24.3, None, 25.4),
    ("Qwen2.5-VL-7B fine-tuned on 12K (paper)", 47.0, 51.7, 43.1, None, 66.7),
    ("best closed VLM, Doubao1.5VL-thinking (paper)", 42.0, 35.6, 40.9, None, 61.9),
]
"""The paper's rows: overall, IS, ID, ES (not in the summary we could read), ED, in %."""

LABELS = {
    "oracle": "oracle (verifier)",
    "null": "null (no letter)",
    "scorer": "option scorer (trained here)",
}
"""The model column of the system's own tables, by arm (the heuristics keep their names; the VLM arm is
named after its model)."""


def _generate(cfg: SpatialConfig, ctx: RunContext, root: Path) -> dict[str, list[Record]]:
    """Make (or resume) every split; returns its records."""
    counts = {"bench": BENCH_COUNTS if cfg.bench_items == BENCH_SIZE else proportional(cfg.bench_items)}
    for split in ("train", "val", "test"):
        n = getattr(cfg, f"{split}_items")
        if n:
            counts[split] = proportional(n, cfg.train_tasks)
    out: dict[str, list[Record]] = {}
    for split, c in counts.items():
        with ctx.progress(f"generating {split}", sum(c.values())) as advance:
            csv = generate_split(
                root, split, c, seed=cfg.seed, jobs=cfg.jobs, renderer=cfg.renderer, on_shard=advance
            )
        out[split] = read_csv(csv)
    return out


def oracle_letters(records: list[Record], seed: int) -> list[str]:
    """Each item re-derived from its seed (draft and proof, no pixels): the verifier's letter."""
    letters = []
    for r in records:
        split, index = r.id.rsplit("_", 1)
        rng = np.random.default_rng(derive_seed(seed, split, int(index)))
        letters.append(make_item(task(r.category), rng, r.difficulty).answer)
    return letters


def _pct(x: float) -> float:
    return round(100 * x, 1)


def _quadrant_table(results: dict[str, Evaluation]) -> Table:
    cols = ["model", "overall", *QUADRANTS, "95% CI (overall)"]
    rows: list[list] = []
    for name, ev in results.items():
        lo, hi = ev.overall.ci
        quads = [_pct(ev.by_quadrant[q].value) if q in ev.by_quadrant else None for q in QUADRANTS]
        rows.append([name, _pct(ev.overall.value), *quads, f"[{_pct(lo)}, {_pct(hi)}]"])
    rows += [[name, overall, is_, id_, es, ed, "paper"] for name, overall, is_, id_, es, ed in PAPER_ROWS]
    return Table(
        "Bench accuracy by quadrant (%)",
        cols,
        rows,
        caption="rows marked (paper) are the paper's figures on its bench, not measured here",
    )


def _group_table(results: dict[str, Evaluation], group: str, keys: tuple[str, ...]) -> Table:
    cols = ["model", *keys]
    rows = []
    for name, ev in results.items():
        table = getattr(ev, f"by_{group}")
        rows.append([name, *(_pct(table[k].value) if k in table else None for k in keys)])
    return Table(f"Bench accuracy by {group} (%)", cols, rows)


def _generation_table(root: Path, splits: dict[str, list[Record]]) -> Table:
    rows = []
    for split in splits:
        stats = json.loads((root / f"{split}.stats.json").read_text())
        refused = sum(v["refused_drafts"] for v in stats["per_task"].values())
        rows.append(
            [
                split,
                stats["items"],
                refused,
                round(refused / max(1, stats["items"] + refused), 3),
                stats["seconds_this_run"],
            ]
        )
    return Table(
        "Generated splits (every item proved by the verifier)",
        ["split", "items", "drafts refused", "refused share", "seconds (this run)"],
        rows,
    )


class Bench:
    """What the cells of one process share: the bench's records, each deterministic arm's letters for the
    whole bench (computed once, on the arm's first cell: the heuristics break ties with one seeded stream
    over the bench and the scorer predicts in batches, as before the port), and the run's model for the
    VLM arm (one per RunContext: a forked worker opens its own)."""

    def __init__(self, cfg: SpatialConfig, records: Sequence[Record], root: Path, scorer: Any = None):
        self.cfg, self.records, self.root, self.scorer = cfg, list(records), root, scorer
        self.by_id = {r.id: r for r in self.records}
        self._lock = threading.Lock()
        self._letters: dict[str, dict[str, str]] = {}
        self._models: dict[int, Any] = {}

    def letters(self, arm: str) -> dict[str, str]:
        """`arm`'s letter for every bench item, by item id."""
        with self._lock:
            if arm not in self._letters:
                self._letters[arm] = dict(zip(self.by_id, self._answer_all(arm), strict=True))
            return self._letters[arm]

    def _answer_all(self, arm: str) -> list[str]:
        bench, seed = self.records, self.cfg.seed
        if arm == "oracle":
            return oracle_letters(bench, seed)
        if arm == "null":
            return [""] * len(bench)
        if arm == "random":
            return heuristics.random_choice(bench, seed=seed)
        if arm == "scorer":
            return predict_scorer(self.scorer, bench, image_root=self.root)
        return heuristics.PIXEL_BASELINES[arm](bench, image_root=self.root)

    def model(self, ctx: RunContext) -> Any:
        """The run's vision model, opened once per context."""
        with self._lock:
            if id(ctx) not in self._models:
                self._models[id(ctx)] = ctx.chat_model(images="the VLM row (vlm_row=true)")
            return self._models[id(ctx)]


def measure(bench: Bench, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One arm on one bench item: its letter (the VLM's reply too), and whether it is the answer. The VLM
    answers only the first `vlm_items` items (an empty cell on the others)."""
    record = bench.by_id[unit.key]
    out: dict[str, Any] = {}
    if arm.name == "vlm":
        if bench.cfg.vlm_items and unit.params["index"] >= bench.cfg.vlm_items:
            return {}
        ask = vlm_predictor(bench.model(ctx), image_root=bench.root, max_tokens=bench.cfg.vlm_tokens)
        reply = out["reply"] = ask(record)
    else:
        reply = bench.letters(arm.name)[record.id]
    letter = parse_letter(reply)
    return {"correct": float(letter == record.answer), "letter": letter, **out}


def study(cfg: SpatialConfig, bench: Bench, views: Any = None) -> Study:
    """spatial_dise as a study over the bench's items: the trained scorer (and the VLM with `vlm_row`)
    against its floors, chance and each pixel heuristic. The claim names every floor as a baseline, so it
    must beat the best heuristic, whichever that is, without choosing it on the bench; the paper's rows
    are references."""
    methods = (["scorer"] if cfg.train_items else []) + (["vlm"] if cfg.vlm_row else [])
    floors = [Arm(b, "floor", floor="chance" if b == "random" else "pixel heuristic") for b in cfg.baselines]
    arms = [*(Arm(m, "method") for m in methods), *floors, Arm("oracle", "oracle"), Arm("null", "null")]
    units = [
        Unit(r.id, cfg.seed, {"index": i, "task": r.category, "quadrant": r.dise_category})
        for i, r in enumerate(bench.records)
    ]
    floor_arm = "random" if "random" in cfg.baselines else None
    label = "bench accuracy (share of items right), paired per item"
    names = tuple(f.name for f in floors)
    claims = [
        Claim("correct", m, names, interval="bootstrap", floor_arm=floor_arm, label=label)
        for m in methods
        if floors
    ]
    references = [
        Reference(name, {"correct": overall / 100}, "arXiv 2510.13394, its bench")
        for name, overall, *_ in PAPER_ROWS
    ]
    return Study("spatial_dise", arms, units, functools.partial(measure, bench), claims=claims,
                 references=references, metrics=("correct",), pass_metric="correct", config=cfg,
                 seed=cfg.seed, views=views)  # fmt: skip


def run(cfg: SpatialConfig, ctx: RunContext) -> Report:
    """Generate (or resume) the splits, train (or resume) the scorer, run the study, tabulate, draw (with
    experiment=teach: the learning curve, `learning_curve.run_teach`)."""
    if cfg.experiment == "teach":
        return run_teach(cfg.teach, cfg.data_dir, ctx)
    if cfg.vlm_row:
        ctx.require_images("the VLM row (vlm_row=true)")  # before generating and training, not after
    root = Path(cfg.data_dir) if cfg.data_dir else ctx.out_dir / "data"
    started = time.perf_counter()
    splits = _generate(cfg, ctx, root)
    notes = [
        f"generation (or resumption) of every split took {time.perf_counter() - started:.0f} s "
        f"with {cfg.jobs} workers"
    ]
    own: list[Table] = []
    scorer = None
    if cfg.train_items:
        t0 = time.perf_counter()
        trained = train_scorer(
            splits["train"], splits["val"], cfg.scorer, ctx.checkpoint_dir / "scorer", image_root=root
        )
        scorer = trained.model
        notes.append(
            f"scorer: best epoch {trained.best_epoch}, val accuracy {_pct(trained.best_val_accuracy)}%, "
            f"{time.perf_counter() - t0:.0f} s (data preparation included)"
        )
        if "test" in splits:
            in_dist = evaluate(splits["test"], predict_scorer(scorer, splits["test"], image_root=root))
            own.append(_group_table({"option scorer, test split": in_dist}, "task", TASKS))
    bench = Bench(cfg, splits["bench"], root, scorer)
    released: dict[str, Evaluation] = {}
    if cfg.vlm_row and cfg.release:  # the authors' bench: the VLM only (the others need our layout)
        model = bench.model(ctx)
        base = Path(cfg.release) if Path(cfg.release).is_dir() else Path(cfg.release).parent
        released[f"VLM ({model.name}), released bench"] = evaluate(
            load_release(cfg.release), vlm_predictor(model, image_root=base, max_tokens=cfg.vlm_tokens)
        )
    if not cfg.vlm_row:
        notes.append(
            "no VLM row: none ships offline; set vlm_row=true and run with --llm http, "
            "ICLR26_LLM_BASE_URL naming a vision server"
        )
    views = functools.partial(_views, cfg, bench, splits, released, own, notes)
    return run_study(study(cfg, bench, views), ctx).report


def _evaluations(cfg: SpatialConfig, bench: Bench, result: StudyResult) -> dict[str, Evaluation]:
    """Each arm's evaluation (overall, per task, quadrant and difficulty) from its cells, in the order of
    the tables: the oracle and null rows, the floors, the scorer, the VLM."""
    out = {}
    arms = {a.name for a in result.study.arms}
    for name in ["oracle", "null", *cfg.baselines, "scorer", "vlm"]:
        cells = [c for c in result.records(name) if c.metrics] if name in arms else []
        if not cells:
            continue
        label = LABELS.get(name, name)
        if name == "vlm":
            label = f"VLM ({', '.join(cells[0].models) or 'the run model'})"
        replies = [c.metrics.get("reply", c.metrics["letter"] or "") for c in cells]
        records = [bench.by_id[c.unit] for c in cells]
        out[label] = evaluate(records, replies, log_unparsed=3 if name == "vlm" else 0)
    return out


def _views(
    cfg: SpatialConfig,
    bench: Bench,
    splits: Mapping[str, list[Record]],
    released: Mapping[str, Evaluation],
    own: Sequence[Table],
    notes: Sequence[str],
    result: StudyResult,
    ctx: RunContext,
) -> Report:
    """The system's own tables from the cells: accuracy by quadrant (with the paper's rows), by task and
    by difficulty; the scorer on the test split; the generated splits; the example sheet and the chart."""
    results = {**_evaluations(cfg, bench, result), **released}
    tables = [
        _quadrant_table(results),
        _group_table(results, "task", TASKS),
        _group_table(results, "difficulty", DIFFICULTIES),
        *own,
        _generation_table(bench.root, splits),
    ]
    ctx.log(f"{tables[0].title}\n{markdown_table(tables[0].columns, tables[0].rows)}")
    sheet = example_sheet(bench.records, bench.root, ctx.out_dir / "examples.png")
    shown = {k: v for k, v in results.items() if not k.startswith(("oracle", "null"))}
    chart = quadrant_chart(
        {k: {q: 100 * a.value for q, a in v.by_quadrant.items()} for k, v in shown.items()},
        QUADRANTS,
        ctx.out_dir,
        human={q: 100 * v for q, v in HUMAN_BY_QUADRANT.items()},
        random_line=100 * RANDOM,
    )
    return Report(tables=tables, figures=[sheet.name, chart], notes=list(notes))


_SMALL = {"scorer.epochs": 2, "scorer.width": 8}
PRESETS = preset_table(
    bench=SpatialConfig(scorer=ScorerConfig(epochs=15)),
    smoke={"bench_items": 20, "train_items": 60, "val_items": 20, "test_items": 0, "jobs": 1, **_SMALL},
    # the tour: a 200-item bench (every task) and 1,200 training items, the scorer trained for 6 epochs
    demo={"bench_items": 200, "train_items": 1200, "val_items": 200, "test_items": 0, "scorer.epochs": 6},
    # the paper's scale is the bench's: add the VLM row (--llm http: a vision server) and the released
    # bench (release=...)
    paper={"vlm_row": True, "scorer.epochs": 30},
)
SYSTEM = implemented_system("spatial_dise", presets=PRESETS, run=run)
