"""The built-here task set's validity on the real apps: the oracle agent must pass every task and the
null agent none (`iclr26.agents.check_suite`); with each task's wall time.

    python benchmarks/scienceboard/suite_check.py

Saves results/suite_check.json (both rows, per-task outcomes and times, command, date, machine).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.agents import Budget, NullAgent, OracleAgent, check_suite, run_suite, suite_rows
from iclr26.scienceboard.desktop import Desktop
from iclr26.scienceboard.env import GUI_PARSER, ScienceBoardEnv
from iclr26.scienceboard.suite import built_tasks


def main() -> None:
    tasks = {t.task_id: t for t in built_tasks()}
    ids = list(tasks)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sb-suite-") as tmp, Desktop() as desk:

        def make_env(task_id: str) -> ScienceBoardEnv:
            return ScienceBoardEnv(tasks[task_id].task(), desk, Path(tmp) / task_id)

        budget = Budget(max_steps=10)
        oracle = run_suite(
            ids, make_env, OracleAgent({k: list(t.oracle) for k, t in tasks.items()}), GUI_PARSER, budget
        )
        oracle_s = time.perf_counter() - t0
        null = run_suite(ids, make_env, NullAgent(), GUI_PARSER, budget)
    check = check_suite(oracle, null)
    print(check.describe())
    rows = suite_rows({"oracle": oracle, "null": null})
    for r in rows:
        print(r)
    out = {
        **provenance(),
        "tasks": len(ids),
        "by_kind": dict(sorted(Counter(t.kind for t in tasks.values()).items())),
        "valid": check.valid,
        "describe": check.describe(),
        "oracle_s": oracle_s,
        "total_s": time.perf_counter() - t0,
        "per_task": [
            {"task": o.task_id, "kind": tasks[o.task_id].kind, "oracle": o.success, "null": n.success,
             "oracle_s": round(o.wall_s, 2), "null_s": round(n.wall_s, 2)}
            for o, n in zip(oracle, null, strict=True)
        ],
    }  # fmt: skip
    path = Path(__file__).parent / "results" / "suite_check.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
