"""The README's locomotion table: BC, TD3+BC, IQL, PIC and EPIC on Hopper / HalfCheetah / Walker2d ×
medium / medium-replay generated here, normalized score (ours and D4RL's references) mean ± sd over
seeds, and gradient steps/s, all from one resumable run per task.

    python benchmarks/pic/locomotion.py --tasks Hopper-v5 --steps 10000 --seeds 2 --tag short
    python benchmarks/pic/locomotion.py                 # all three tasks, the paper preset's settings

Each task runs the `paper` preset with `data_dir` shared (datasets are generated once, in the
background if you like, and cached); interrupted runs resume from their run folders.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.config import parse_overrides
from iclr26.core.runner import run_system
from iclr26.pic import SYSTEM

TASKS = ("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=list(TASKS))
    ap.add_argument("--steps", type=int, default=None, help="gradient steps per run (default: the preset's)")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--algorithms", default=None, help="comma-separated (default: the preset's)")
    ap.add_argument("--data-dir", default="runs/pic_data")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/pic_locomotion"))
    ap.add_argument("--tag", default="")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="more preset overrides, k=v")
    a = ap.parse_args()
    results, t0 = {}, time.time()
    for task in a.tasks:
        over = {"env_id": task, "data_dir": a.data_dir, "device": a.device}
        if a.steps:
            over["steps"] = str(a.steps)
            over["eval_every"] = str(max(1, a.steps // 4))
            over["checkpoint_every"] = str(max(1, a.steps // 4))
        if a.seeds:
            over["seeds"] = str(a.seeds)
        if a.algorithms:
            over["algorithms"] = a.algorithms
        over.update(parse_overrides(a.overrides))
        record, run_dir = run_system(SYSTEM, "paper", over, out=a.out / task)
        results[task] = {
            "run_dir": str(run_dir),
            "wall_time_s": record.wall_time_s,
            "config": record.config,
            "tables": [asdict(t) for t in record.report.tables],
            "claim_check": asdict(record.report.claim_check) if record.report.claim_check else None,
        }
        print((run_dir / "report.md").read_text())
    path = Path(__file__).parent / "results" / f"pic_locomotion{'_' + a.tag if a.tag else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {**provenance(), "wall_time_s": time.time() - t0, "tasks": results}
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
