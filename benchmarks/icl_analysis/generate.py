"""Time to generate every split of the nine tasks at the paper's sizes (3k train, 2k test, 3k per
OOD δ ∈ {0.2, 0.45, 0.65, 0.85}), and what the splits look like (lengths, noise, KL(P‖Q(δ))).

    python benchmarks/icl_analysis/generate.py

Saves results/generate.json.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.icl_analysis.tasks import DELTAS, TASKS, make_splits


def main() -> None:
    rows, total = [], time.perf_counter()
    for name, task in TASKS.items():
        start = time.perf_counter()
        s = make_splits(task, 0)
        secs = time.perf_counter() - start
        items = s.train + s.test
        row = {
            "task": name, "seconds": round(secs, 2), "train": len(s.train), "test": len(s.test),
            "ood_per_delta": len(s.ood[DELTAS[0]]),
            "noise_%": round(100 * statistics.fmean(i.label != i.clean_label for i in items), 2),
            "id_mean_len": round(statistics.fmean(len(i.shown) for i in s.test), 1),
            **{f"len_{d:g}": round(statistics.fmean(len(i.shown) for i in s.ood[d]), 1) for d in DELTAS},
            **{f"kl_{d:g}": round(task.kl(d), 4) for d in DELTAS},
        }  # fmt: skip
        rows.append(row)
        print(row)
    wall = time.perf_counter() - total
    print(f"all nine tasks: {wall:.1f} s")
    out = Path(__file__).parent / "results" / "generate.json"
    out.write_text(
        json.dumps({**provenance(), "total_seconds": round(wall, 1), "rows": rows}, indent=1) + "\n"
    )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
