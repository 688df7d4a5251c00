"""The splits: Spatial-DISE Bench (559 items) and the 12K training set, generated, verified and
written in the authors' CSV schema, in parallel across cores and resumably.

Every item's randomness comes from its own generator, seeded by `derive_seed(seed, split,
index)` (NumPy's SeedSequence: a stable hash, unlike Python's salted `hash()`), so a split is a
pure function of (seed, plan): any shard can be (re)made alone, by any worker, with identical
bytes. A split is written shard by shard: a shard's PNGs first, then its CSV part atomically;
a re-run skips shards whose part exists, so an interrupted generation loses at most the shards in
flight. The split's CSV is the parts joined in order.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.errors import UserError
from iclr26.core.seeding import derive_seed
from iclr26.spatial_dise.items import DIFFICULTIES, make_item, render_item
from iclr26.spatial_dise.records import Record, read_csv, write_csv
from iclr26.spatial_dise.render import use_renderer
from iclr26.spatial_dise.tasks import QUADRANT_OF, TASKS, task

BENCH_SIZE = 559
GENERATOR = "gated"
"""The generator's version in the resume folders (`parts/<GENERATOR>/<split>`): a folder's shards made
before the answerability gate (`parts/<split>`) are not resumed, so an old data_dir is regenerated."""

BENCH_COUNTS: dict[str, int] = {
    "2d_shape_finding": 54,
    "3d_shape_finding": 54,
    "2d_rotation": 55,
    "3d_rotation": 55,
    "2d_folding": 55,
    "3d_folding": 55,
    "fold_punch": 55,
    "3d_projection": 70,
    "2d_assembly": 53,
    "3d_combination": 53,
}
"""Items per task in our bench. The paper gives 559 items and Extrinsic-Static (its one task,
3D projection) = 70; its other per-task counts are not in what we could read, so the other 489
are split evenly over the nine other tasks (Intrinsic-Static 108, Intrinsic-Dynamic 275,
Extrinsic-Dynamic 106)."""
TRAIN_SIZES: dict[str, int] = {"train": 8647, "val": 1852, "test": 1853}
"""The 12K release's three parts (12,352 items)."""
SHARD = 64


@dataclass(frozen=True)
class Slot:
    """One planned item: its split, index, task and difficulty."""

    split: str
    index: int
    task: str
    difficulty: str

    @property
    def id(self) -> str:
        return f"{self.split}_{self.index:05d}"


def plan(split: str, counts: Mapping[str, int]) -> list[Slot]:
    """The items of a split: each task's count, difficulties in turn (easy, medium, hard, ...)."""
    slots: list[Slot] = []
    for name, n in counts.items():
        if name not in TASKS:
            raise UserError(f"unknown task {name!r}; the tasks are {', '.join(TASKS)}")
        if not isinstance(n, int) or n < 0:
            raise UserError(f"item count for {name} must be a non-negative int, got {n!r}")
        slots += [Slot(split, 0, name, DIFFICULTIES[k % len(DIFFICULTIES)]) for k in range(n)]
    return [Slot(split, i, s.task, s.difficulty) for i, s in enumerate(slots)]


def proportional(total: int, tasks: Sequence[str] | None = None) -> dict[str, int]:
    """`total` items over `tasks` (default all ten) in the bench's proportions (largest remainder)."""
    names = list(tasks or TASKS)
    weights = np.array([BENCH_COUNTS[n] for n in names], dtype=float)
    raw = total * weights / weights.sum()
    counts = np.floor(raw).astype(int)
    for i in np.argsort(-(raw - counts), kind="stable")[: total - counts.sum()]:
        counts[i] += 1
    return {n: int(c) for n, c in zip(names, counts, strict=True)}


def make_record(slot: Slot, seed: int, image_dir: Path, root: Path) -> tuple[Record, int]:
    """Generate, prove, render and save one item; its CSV row and the drafts the verifier refused."""
    t = task(slot.task)
    rng = np.random.default_rng(derive_seed(seed, slot.split, slot.index))
    item = make_item(t, rng, slot.difficulty)
    path = image_dir / f"{slot.id}.png"
    render_item(t, item).save(path, format="PNG", optimize=False)
    record = Record(
        id=slot.id,
        question=item.prompt,
        answer=item.answer,
        image=path.relative_to(root).as_posix(),
        category=slot.task,
        difficulty=slot.difficulty,
        dise_category=QUADRANT_OF[slot.task],
        n_question_panels=t.n_question_panels,
    )
    return record, item.rejected


def _make_shard(args: tuple[list[Slot], int, str, str, str]) -> tuple[list[Record], dict[str, int]]:
    slots, seed, image_dir, root, renderer = args
    out, rejected = [], Counter()
    with use_renderer(renderer):  # in this process, worker or not, for this shard only
        for slot in slots:
            record, r = make_record(slot, seed, Path(image_dir), Path(root))
            out.append(record)
            rejected[slot.task] += r
    return out, dict(rejected)


def generate_split(
    root: Path | str,
    split: str,
    counts: Mapping[str, int],
    *,
    seed: int = 0,
    jobs: int = 1,
    renderer: str = "painter",
    on_shard: Callable[[int], None] | None = None,
) -> Path:
    """Write `root/<split>.csv` and `root/images/<split>/*.png`; resumes from finished shards.

    `jobs` worker processes share the shards; `renderer` draws the 3D panels (our painter, or
    Blender: `render.use_renderer`); `on_shard(n)` is told how many items each finished shard held.
    Also writes `root/<split>.stats.json` (items and verifier refusals per task).
    """
    root = Path(root)
    slots = plan(split, counts)
    image_dir = root / "images" / split
    parts = root / "parts" / GENERATOR / split
    image_dir.mkdir(parents=True, exist_ok=True)
    parts.mkdir(parents=True, exist_ok=True)
    shards = [slots[i : i + SHARD] for i in range(0, len(slots), SHARD)]
    todo = [k for k in range(len(shards)) if not (parts / f"{k:05d}.csv").exists()]
    for k in range(len(shards)):
        if k not in todo and on_shard:
            on_shard(len(shards[k]))
    started = time.perf_counter()

    def finish(k: int, result: tuple[list[Record], dict[str, int]]) -> None:
        records, rejected = result
        write_text_atomic(parts / f"{k:05d}.json", json.dumps(rejected, sort_keys=True))
        write_csv(parts / f"{k:05d}.csv", records)  # last: a part's CSV marks the shard done
        if on_shard:
            on_shard(len(records))

    args = [(shards[k], seed, str(image_dir), str(root), renderer) for k in todo]
    if jobs <= 1 or len(todo) <= 1:
        for k, a in zip(todo, args, strict=True):
            finish(k, _make_shard(a))
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            for k, result in zip(todo, pool.map(_make_shard, args), strict=True):
                finish(k, result)
    records: list[Record] = []
    rejected: Counter[str] = Counter()
    for k in range(len(shards)):
        records += read_csv(parts / f"{k:05d}.csv", check_images=False)
        rejected.update(json.loads((parts / f"{k:05d}.json").read_text()))
    csv = root / f"{split}.csv"
    write_csv(csv, records)
    per_task = Counter(r.category for r in records)
    stats = {
        "items": len(records),
        "seconds_this_run": round(time.perf_counter() - started, 2),
        "per_task": {t: {"items": per_task[t], "refused_drafts": rejected.get(t, 0)} for t in counts},
    }
    write_text_atomic(root / f"{split}.stats.json", json.dumps(stats, indent=2))
    return csv
