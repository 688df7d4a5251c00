"""The weak-distractor audit: every pixel heuristic on freshly generated items of each task, with
Wilson 95% intervals. A heuristic far from 25% either way means the options give the answer away
(the issue's rule: report it and fix the generator).

    python benchmarks/spatial_dise/heuristics.py --items 300          # every task, in memory
    python benchmarks/spatial_dise/heuristics.py --tasks 2d_rotation --items 500

Saves results/heuristics.json (unless --no-save).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.core.seeding import derive_seed
from iclr26.spatial_dise.baselines import PIXEL_BASELINES, Panels
from iclr26.spatial_dise.harness import wilson_interval
from iclr26.spatial_dise.items import DIFFICULTIES, make_item
from iclr26.spatial_dise.tasks import TASKS, task


def audit(name: str, n: int, seed: int) -> dict[str, dict]:
    """Each heuristic's accuracy (%, with its interval) on n items of task `name`."""
    t = task(name)
    panels, answers = [], []
    for i in range(n):
        rng = np.random.default_rng(derive_seed(seed, "audit", name, i))
        item = make_item(t, rng, DIFFICULTIES[i % 3])
        qs, opts = t.panels(item.draft)
        panels.append(Panels(list(qs), [opts[k] for k in item.order]))
        answers.append(item.answer)
    out = {}
    for h, fn in PIXEL_BASELINES.items():
        k = sum(a == b for a, b in zip(fn(panels), answers, strict=True))
        lo, hi = wilson_interval(k, n)
        out[h] = {"accuracy": round(100 * k / n, 1), "ci": [round(100 * lo, 1), round(100 * hi, 1)]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    rows = {}
    for name in a.tasks.split(","):
        rows[name] = audit(name, a.items, a.seed)
        cells = "  ".join(f"{h} {v['accuracy']:5.1f}" for h, v in rows[name].items())
        off = [h for h, v in rows[name].items() if abs(v["accuracy"] - 25) > 5]
        flag = f"  <-- more than 5 points from chance: {', '.join(off)}" if off else ""
        print(f"{name:17s} {cells}{flag}", flush=True)
    if not a.no_save:
        out = Path(__file__).parent / "results" / "heuristics.json"
        out.write_text(json.dumps({**provenance(), "items_per_task": a.items, "rows": rows}, indent=1) + "\n")
        print(f"saved {out}")


if __name__ == "__main__":
    main()
