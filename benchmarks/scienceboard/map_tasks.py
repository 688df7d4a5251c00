"""The app mapping of the authors' task files: how many of OS-Copilot/ScienceBoard's tasks our
environment runs, per app, and why the others cannot run here.

    python benchmarks/scienceboard/map_tasks.py --tasks /path/to/ScienceBoard/tasks

Saves results/task_mapping.json. The tasks are read by path, never copied; every lambda in them
goes through our predicate interpreter, so this also checks that it covers what the authors wrote.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.scienceboard.task import load_tasks, map_task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=Path, required=True, help="the authors' tasks/ folder")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "task_mapping.json")
    args = ap.parse_args()
    tasks = load_tasks(args.tasks)
    per_app: dict[str, Counter] = defaultdict(Counter)
    reasons: Counter = Counter()
    for t in tasks:
        m = map_task(t)
        per_app[f"{t.sort}/{t.type}"]["supported" if m.supported else "unsupported"] += 1
        reasons.update(set(m.reasons))
    out = {
        **provenance(),
        "tasks": len(tasks),
        "supported": sum(c["supported"] for c in per_app.values()),
        "per_app": {k: dict(v) for k, v in sorted(per_app.items())},
        "reasons": dict(reasons.most_common()),
    }
    for k, v in out["per_app"].items():
        print(f"{k:20s} {v}")
    print(f"{out['supported']} of {out['tasks']} tasks run here")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
