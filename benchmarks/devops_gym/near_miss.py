"""Verifier discrimination: every built-here task's near-miss solutions through its unchanged verifier.

    python benchmarks/devops_gym/near_miss.py                  # all 39 tasks, ~100 near misses
    python benchmarks/devops_gym/near_miss.py --tasks monitor build/go-release-target --reference

Each near miss (`iclr26.devops_gym.near_miss`: one step of the reference removed, a symptom fixed
instead of the cause, the wrong dependency bumped, a generated test that fails or passes on both
versions, a confusable or hedged label) is run as a task's solution in the local runner, and the
verifier's verdict recorded; `--reference` also runs each task's reference solution (the verifier must
accept it). A task's false-pass rate is the share of its near misses the verifier accepts (target 0).
Saves results/devops_gym_near_miss[_<tag>].json (tables, every verdict, provenance); the verdicts
resume from the run folder's near_miss.jsonl.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.records import markdown_table
from iclr26.devops_gym.agent import oracle_agent
from iclr26.devops_gym.evaluate import run_task
from iclr26.devops_gym.near_miss import NearMiss, near_miss_task, near_misses
from iclr26.devops_gym.runner import RunLimits
from iclr26.devops_gym.suite import all_drafts, build_suite
from iclr26.devops_gym.task import CATEGORIES, load_task

RESULTS = Path(__file__).parent / "results"
LIMITS = RunLimits(command_timeout_s=240.0, max_steps=2)
TASK_COLUMNS = ["task", "near misses", "accepted", "false-pass rate", "accepted kinds", "reference accepted"]
KIND_COLUMNS = ["kind", "near misses", "accepted", "false-pass rate"]


def _selected(task_id: str, wanted: list[str]) -> bool:
    return not wanted or any(task_id == w or task_id.startswith(w.rstrip("/") + "/") for w in wanted)


def _verdict(task_path: Path, near_miss: NearMiss | None, scratch: Path) -> dict:
    """Run the near miss (or, with None, the reference) as the task's solution; the verifier decides."""
    task = load_task(task_path)
    if near_miss is not None:
        task = near_miss_task(task, near_miss, scratch)
    trial = run_task(task, oracle_agent([task]), LIMITS, oracle=True)
    return {"accepted": bool(trial.resolved), "failure_mode": trial.failure_mode, "tests": trial.tests}


def _rate(accepted: int, n: int) -> str:
    return f"{accepted / n:.2f}" if n else "-"


def tables(records: list[dict]) -> tuple[list[list], list[list]]:
    """The per-task table (near misses, accepted, false-pass rate, reference) and the per-kind table."""
    by_task: dict[str, list[dict]] = defaultdict(list)
    by_kind: dict[str, list[dict]] = defaultdict(list)
    reference: dict[str, bool] = {}
    for r in records:
        if r["kind"] == "reference":
            reference[r["task_id"]] = r["accepted"]
            continue
        by_task[r["task_id"]].append(r)
        by_kind[r["kind"]].append(r)
    order = sorted(by_task, key=lambda t: (CATEGORIES.index(t.split("/")[0]), t))
    rows = []
    for t in order:
        rs = by_task[t]
        acc = [r for r in rs if r["accepted"]]
        kinds = ", ".join(sorted({f"{r['kind']} ({r['detail']})" for r in acc})) or "-"
        ref = {True: "yes", False: "NO"}.get(reference.get(t), "not run")  # type: ignore[call-overload]
        rows.append([t, len(rs), len(acc), _rate(len(acc), len(rs)), kinds, ref])
    n = sum(len(v) for v in by_task.values())
    a = sum(r["accepted"] for v in by_task.values() for r in v)
    rows.append(["all tasks", n, a, _rate(a, n), "", f"{sum(reference.values())}/{len(reference)}"])
    kind_rows = [[k, len(v), sum(r["accepted"] for r in v), _rate(sum(r["accepted"] for r in v), len(v))]
                 for k, v in sorted(by_kind.items())]  # fmt: skip
    return rows, kind_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=[], help="task ids or categories (default: all)")
    ap.add_argument("--reference", action="store_true", help="also run each task's reference solution")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/devops_gym_near_miss"))
    ap.add_argument("--tag", default="", help="suffix of the results file")
    args = ap.parse_args()
    for w in args.tasks:
        if w.split("/")[0] not in CATEGORIES:
            print(f"error: --tasks {w!r}: not a category or category/name of {', '.join(CATEGORIES)}")
            sys.exit(2)
    root = build_suite(args.out / "tasks")
    ledger = args.out / "near_miss.jsonl"
    done = {}
    if ledger.is_file():
        for line in ledger.read_text().splitlines():
            r = json.loads(line)
            done[(r["task_id"], r["kind"], r["detail"])] = r
    jobs: list[tuple[str, NearMiss | None]] = []
    for draft in all_drafts(0):
        task_id = f"{draft.category}/{draft.name}"
        if not _selected(task_id, args.tasks):
            continue
        if args.reference:
            jobs.append((task_id, None))
        jobs += [(task_id, nm) for nm in near_misses(draft)]
    if not jobs:
        print(f"error: --tasks {' '.join(args.tasks)} selects no task")
        sys.exit(2)
    records = []
    for i, (task_id, nm) in enumerate(jobs, 1):
        key = (task_id, nm.kind, nm.detail) if nm else (task_id, "reference", "the reference solution")
        if key not in done:
            verdict = _verdict(root / task_id, nm, args.out / "scratch" / task_id.replace("/", "_"))
            done[key] = {"task_id": key[0], "kind": key[1], "detail": key[2], **verdict}
            with ledger.open("a") as f:
                f.write(json.dumps(done[key]) + "\n")
            print(f"[{i}/{len(jobs)}] {task_id} {key[1]} ({key[2]}): "
                  f"{'ACCEPTED' if done[key]['accepted'] else 'rejected'}", flush=True)  # fmt: skip
        records.append(done[key])
    task_rows, kind_rows = tables(records)
    print(markdown_table(TASK_COLUMNS, task_rows))
    print(markdown_table(KIND_COLUMNS, kind_rows))
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"devops_gym_near_miss{'_' + args.tag if args.tag else ''}.json"
    payload = {**provenance(), "run_dir": str(args.out), "tasks": args.tasks, "reference": args.reference,
               "per_task": {"columns": TASK_COLUMNS, "rows": task_rows},
               "per_kind": {"columns": KIND_COLUMNS, "rows": kind_rows}, "records": records}  # fmt: skip
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
