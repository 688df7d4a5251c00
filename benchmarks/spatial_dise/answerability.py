"""The answerability gate's audit: the share of the items generated before the gate (`make_item(...,
gate=False)`, which gives them exactly) that it refuses, for 3D rotation, projection and assembly,
with Wilson 95% intervals, by difficulty and (3D rotation) by the family of the undecidable
distractor.

    python benchmarks/spatial_dise/answerability.py              # the bench + 200 train items per task
    python benchmarks/spatial_dise/answerability.py --train 600

The items are today's (the commit before the gate) bench items (the 559-item plan, seed 0) and the
first `--train` items of each task in the 8,647-item training split. Saves results/answerability.json.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.core.intervals import wilson_interval
from iclr26.core.seeding import derive_seed
from iclr26.spatial_dise.answerability import GATED, problems
from iclr26.spatial_dise.dataset import BENCH_COUNTS, TRAIN_SIZES, plan, proportional
from iclr26.spatial_dise.items import DIFFICULTIES, make_item
from iclr26.spatial_dise.tasks import task


def share(k: int, n: int) -> dict:
    """k of n as a percentage with its Wilson interval."""
    lo, hi = wilson_interval(k, n)
    return {"failed": k, "items": n, "share": round(100 * k / n, 1) if n else None,
            "ci": [round(100 * lo, 1), round(100 * hi, 1)]}  # fmt: skip


def audit(split: str, counts: dict[str, int], limit: int | None, seed: int) -> dict:
    """The gate on each gated task's items of `split` (the first `limit` of each task)."""
    out = {}
    for name in GATED:
        slots = [s for s in plan(split, counts) if s.task == name][:limit]
        t = task(name)
        failed, by_difficulty, families, examples = 0, Counter(), Counter(), []
        per_difficulty = Counter(s.difficulty for s in slots)
        for slot in slots:
            rng = np.random.default_rng(derive_seed(seed, split, slot.index))
            item = make_item(t, rng, slot.difficulty, gate=False)
            found = problems(t, item.draft)
            if found:
                failed += 1
                by_difficulty[slot.difficulty] += 1
                if len(examples) < 5:
                    examples.append({"id": slot.id, "problems": found})
                for p in found:
                    m = re.match(r"distractor (\d+)", p)
                    if m and "families" in item.draft.meta:
                        families[item.draft.meta["families"][int(m.group(1)) - 1]] += 1
        out[name] = {
            **share(failed, len(slots)),
            "by_difficulty": {d: share(by_difficulty[d], per_difficulty[d]) for d in DIFFICULTIES},
            "undecidable_distractors_by_family": dict(families),
            "examples": examples,
        }
        print(
            f"{split:5s} {name:15s} {failed:4d} / {len(slots):4d} fail the gate ({out[name]['share']}%)",
            flush=True,
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", type=int, default=200, help="training-split items per task")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    rows = {
        "bench": audit("bench", BENCH_COUNTS, None, a.seed),
        "train": audit("train", proportional(TRAIN_SIZES["train"]), a.train, a.seed),
    }
    if not a.no_save:
        out = Path(__file__).parent / "results" / "answerability.json"
        out.write_text(
            json.dumps({**provenance(), "train_items_per_task": a.train, "rows": rows}, indent=1) + "\n"
        )
        print(f"saved {out}")


if __name__ == "__main__":
    main()
