"""The demo tour's time budget: every implemented system's `demo` preset, its wall time against
the 2-minute budget, and the whole tour's total, for a given `--jobs`.

    python benchmarks/demo/times.py --jobs 1   # one system at a time, all cores each: per-system budget
    python benchmarks/demo/times.py --jobs 2   # the `iclr26 demo` default here: 2 at a time, 1 core each

Saves `benchmarks/demo/results/times_jobs<N>.json` (with command, date, machine; `--only a,b` saves
`times_jobs<N>_a+b.json`). With `--write-expected`, the per-system times also go into
`src/iclr26/demo_times.json` (other systems' times kept), which `iclr26 demo` prints as each
system's expected time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.catalog import all_systems
from iclr26.core.tour import DEMO_TIMES, run_tour, select, summary_rows, write_summary

BUDGET_S = 120.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--write-expected", action="store_true")
    a = ap.parse_args()
    root = a.out or Path(f"runs/benchmarks/demo_jobs{a.jobs}_{time.strftime('%Y%m%d-%H%M%S')}")
    systems = select(all_systems(), a.only)
    start = time.perf_counter()
    outcomes = run_tour(systems, root, jobs=a.jobs)
    total = time.perf_counter() - start
    write_summary(root, outcomes, wall_s=total)
    summary = {r["system"]: r for r in summary_rows(outcomes)}
    rows = [
        {
            "system": o.system.name,
            "status": o.status,
            "wall_s": round(o.wall_s, 1),
            "within_budget": o.wall_s <= BUDGET_S,
            **{
                k: summary[o.system.name].get(k)
                for k in ("metric", "method", "baseline", "floors", "verdict", "rule")
            },
        }
        for o in outcomes
    ]
    print(f"\n{'system':16s} {'status':9s} {'wall s':>7s}  budget {BUDGET_S:.0f} s")
    for r in rows:
        print(
            f"{r['system']:16s} {r['status']:9s} {r['wall_s']:7.1f}  {'ok' if r['within_budget'] else 'OVER'}"
        )
    print(f"tour total (wall clock, --jobs {a.jobs}): {total:.0f} s = {total / 60:.1f} min")
    subset = f"_{a.only.replace(',', '+')}" if a.only else ""  # a partial tour keeps the full one's file
    out = Path(__file__).parent / "results" / f"times_jobs{a.jobs}{subset}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        **provenance(),
        "jobs": a.jobs,
        "budget_s": BUDGET_S,
        "total_s": round(total, 1),
        "run_dir": str(root),
        "rows": rows,
    }
    out.write_text(json.dumps(payload, indent=1) + "\n")
    if a.write_expected:
        seconds = json.loads(DEMO_TIMES.read_text())["seconds"] if DEMO_TIMES.is_file() else {}
        seconds |= {r["system"]: r["wall_s"] for r in rows if r["status"] == "complete"}  # others kept
        DEMO_TIMES.write_text(
            json.dumps(
                {"jobs": a.jobs, "date": payload["date"], "machine": payload["machine"], "seconds": seconds},
                indent=1,
            )
            + "\n"
        )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
