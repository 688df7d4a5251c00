"""How fast the split is generated and validated: the paper's 4,048 episodes (2,436 single, 1,612
collaborative) over 216 generated houses, from scratch into a fresh folder, then resumed.

    python benchmarks/conavbench/generate_speed.py --jobs 2 --out /tmp/conavbench_speed

Target (the issue): under 5 minutes on 2 cores. Saves results/generate_speed.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.conavbench.splits import build_split


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    t0 = time.perf_counter()
    split = build_split(a.seed, jobs=a.jobs, out=a.out)
    fresh = time.perf_counter() - t0
    before = {n: (a.out / f"episodes_{n}.json").read_bytes() for n in split.episodes}
    t0 = time.perf_counter()
    again = build_split(a.seed, jobs=a.jobs, out=a.out)
    resumed = time.perf_counter() - t0
    same = all((a.out / f"episodes_{n}.json").read_bytes() == b for n, b in before.items())
    same = same and len(again.all) == len(split.all)
    row = {"episodes": len(split.all), "scenes": len(split.scenes), "fresh_seconds": round(fresh, 1),
           "resumed_seconds": round(resumed, 1), "resume_matches": same, "stats": split.stats}  # fmt: skip
    print(json.dumps(row, indent=1))
    out = Path(__file__).parent / "results" / "generate_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**provenance(), "jobs": a.jobs, **row}, indent=1) + "\n")
    print(f"saved {out}")


if __name__ == "__main__":
    main()
