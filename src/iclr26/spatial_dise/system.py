"""`iclr26 run spatial_dise`: generate and prove the bench and the training splits, score every
model on the bench (random, the pixel heuristics, the option scorer trained here, a VLM when a
server is set), and report accuracy per quadrant, task and difficulty against the paper's human
and random anchors.

Two extra rows test the benchmark itself: `oracle (verifier)` re-derives every item from its
seed and answers with the verifier's letter (it must score 100%), and `null (no letter)` replies
with nothing (it must score 0%).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table
from iclr26.core.records import markdown_table
from iclr26.core.seeding import derive_seed
from iclr26.core.system import preset_table
from iclr26.spatial_dise import baselines as heuristics
from iclr26.spatial_dise.config import SpatialConfig
from iclr26.spatial_dise.dataset import BENCH_COUNTS, BENCH_SIZE, generate_split, proportional
from iclr26.spatial_dise.figures import example_sheet, quadrant_chart
from iclr26.spatial_dise.harness import HUMAN, HUMAN_BY_QUADRANT, RANDOM, Evaluation, evaluate, vlm_predictor
from iclr26.spatial_dise.items import DIFFICULTIES, QUADRANTS, make_item
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


def run(cfg: SpatialConfig, ctx: RunContext) -> Report:
    """Generate, score every model, tabulate, draw."""
    if cfg.vlm_row:
        ctx.require_images("the VLM row (vlm_row=true)")  # before generating and training, not after
    root = Path(cfg.data_dir) if cfg.data_dir else ctx.out_dir / "data"
    started = time.perf_counter()
    splits = _generate(cfg, ctx, root)
    gen_seconds = time.perf_counter() - started
    bench = splits["bench"]
    results: dict[str, Evaluation] = {}
    results["oracle (verifier)"] = evaluate(bench, oracle_letters(bench, cfg.seed))
    results["null (no letter)"] = evaluate(bench, [""] * len(bench), log_unparsed=0)
    for name in cfg.baselines:
        if name == "random":
            letters = heuristics.random_choice(bench, seed=cfg.seed)
        else:
            letters = heuristics.PIXEL_BASELINES[name](bench, image_root=root)
        results[name] = evaluate(bench, letters)
    notes = [f"generation (or resumption) of every split took {gen_seconds:.0f} s with {cfg.jobs} workers"]
    tables: list[Table] = []
    if cfg.train_items:
        t0 = time.perf_counter()
        trained = train_scorer(
            splits["train"], splits["val"], cfg.scorer, ctx.checkpoint_dir / "scorer", image_root=root
        )
        results["option scorer (trained here)"] = evaluate(
            bench, predict_scorer(trained.model, bench, image_root=root)
        )
        notes.append(
            f"scorer: best epoch {trained.best_epoch}, val accuracy {_pct(trained.best_val_accuracy)}%, "
            f"{time.perf_counter() - t0:.0f} s (data preparation included)"
        )
        if "test" in splits:
            in_dist = evaluate(splits["test"], predict_scorer(trained.model, splits["test"], image_root=root))
            tables.append(_group_table({"option scorer, test split": in_dist}, "task", TASKS))
    if cfg.vlm_row:
        model = ctx.chat_model(images="the VLM row (vlm_row=true)")
        asked = bench[: cfg.vlm_items] if cfg.vlm_items else bench
        ask = vlm_predictor(model, image_root=root, max_tokens=cfg.vlm_tokens)
        results[f"VLM ({model.name})"] = evaluate(asked, ask)
        if cfg.release:
            released = load_release(cfg.release)
            base = Path(cfg.release) if Path(cfg.release).is_dir() else Path(cfg.release).parent
            results[f"VLM ({model.name}), released bench"] = evaluate(
                released, vlm_predictor(model, image_root=base, max_tokens=cfg.vlm_tokens)
            )
    tables = [
        _quadrant_table(results),
        _group_table(results, "task", TASKS),
        _group_table(results, "difficulty", DIFFICULTIES),
        *tables,
        _generation_table(root, splits),
    ]
    ctx.log(f"{tables[0].title}\n{markdown_table(tables[0].columns, tables[0].rows)}")
    sheet = example_sheet(bench, root, ctx.out_dir / "examples.png")
    shown = {k: v for k, v in results.items() if not k.startswith(("oracle", "null"))}
    chart = quadrant_chart(
        {k: {q: 100 * a.value for q, a in v.by_quadrant.items()} for k, v in shown.items()},
        QUADRANTS,
        ctx.out_dir,
        human={q: 100 * v for q, v in HUMAN_BY_QUADRANT.items()},
        random_line=100 * RANDOM,
    )
    learned = {k: v for k, v in shown.items() if k.startswith(("option scorer", "VLM"))}
    models = learned or {k: v for k, v in shown.items() if k != "random"}
    best = max(models, key=lambda k: models[k].overall.value)
    lo, hi = models[best].overall.ci
    claim = ClaimCheck(
        "bench accuracy % (models sit far below humans)",
        "human (paper)",
        100 * HUMAN,
        f"best model here ({best})",
        _pct(models[best].overall.value),
        margin=round(100 * (hi - lo) / 2, 1),
    )
    if not cfg.vlm_row:
        notes.append(
            "no VLM row: none ships offline; set vlm_row=true and run with --llm http, "
            "ICLR26_LLM_BASE_URL naming a vision server"
        )
    return Report(tables=tables, figures=[sheet.name, chart], claim_check=claim, notes=notes)


_SMALL = {"scorer.epochs": 2, "scorer.width": 8}
PRESETS = preset_table(
    bench=SpatialConfig(scorer=ScorerConfig(epochs=15)),
    smoke={"bench_items": 20, "train_items": 60, "val_items": 20, "test_items": 0, "jobs": 1, **_SMALL},
    # the tour: a 200-item bench (every task) and 2,000 training items, the scorer trained for 6 epochs
    demo={"bench_items": 200, "train_items": 2000, "val_items": 300, "test_items": 0, "scorer.epochs": 6},
    # the paper's scale is the bench's: add the VLM row (--llm http: a vision server) and the released
    # bench (release=...)
    paper={"vlm_row": True, "scorer.epochs": 30},
)
SYSTEM = implemented_system("spatial_dise", presets=PRESETS, run=run)
