"""Every implemented system's `smoke` results as one JSON, to check that a refactor keeps
behaviour: run it before and after, then compare.

    python benchmarks/smoke_results.py --out /tmp/before.json      # on the old commit
    python benchmarks/smoke_results.py --out /tmp/after.json
    python benchmarks/smoke_results.py --compare /tmp/before.json /tmp/after.json
    python benchmarks/smoke_results.py --only pic --out /tmp/pic.json     # one system (then
    python benchmarks/smoke_results.py --only pic --compare /tmp/before.json /tmp/pic.json)

Timing columns (ms, per-second rates, speed-up ratios) are left out, since they vary from run to
run; everything else in the result tables and the claim check must be identical.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

# dash's and laplacianformer's Triton kernels run under the interpreter on CPU; it must be chosen
# before any system imports triton, as the CLI's one-system-per-process runs do.
import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

# columns that hold timings or ratios of timings (ms, frames/s, s/run, "× TD3+BC" speed-ups)
TIMING = (
    "ms/",
    "ms (",
    "(ms)",
    "/s",
    "s/run",
    "× vs",
    "× td3",
    "wall",
    "time",
    "latency",
    "speed",
    "throughput",
)


def _timing(column: str) -> bool:
    return any(t in column.lower() for t in TIMING)


def collect(only: list[str] | None = None) -> dict:
    """Run each implemented system's smoke preset (or those in `only`); its tables without timing
    columns."""
    from iclr26.catalog import all_systems, get_system
    from iclr26.core.runner import run_system

    out = {}
    for s in [get_system(n) for n in only] if only else all_systems():
        if s.status != "implemented":
            continue
        with tempfile.TemporaryDirectory() as tmp:
            record, _ = run_system(s, "smoke", out=Path(tmp) / s.name)
        tables = []
        for t in record.report.tables:
            keep = [j for j, c in enumerate(t.columns) if not _timing(c)]
            tables.append({"title": t.title, "columns": [t.columns[j] for j in keep],
                           "rows": [[r[j] for j in keep] for r in t.rows]})  # fmt: skip
        cc = record.report.claim_check
        out[s.name] = {"tables": tables, "claim_check": asdict(cc) if cc else None}
    return out


def compare(a: Path, b: Path, only: list[str] | None = None) -> int:
    """Print the systems whose smoke results differ; exit status 1 if any do."""
    before, after = json.loads(a.read_text()), json.loads(b.read_text())
    names = sorted(only or set(before) | set(after))
    differ = [n for n in names if before.get(n) != after.get(n)]
    for n in names:
        print(f"{n:16s} {'DIFFERENT' if n in differ else 'identical'}")
    return 1 if differ else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path)
    ap.add_argument("--only", default="", help="comma-separated systems (default: all implemented)")
    a = ap.parse_args()
    only = [n for n in a.only.split(",") if n] or None
    if a.compare:
        sys.exit(compare(*a.compare, only=only))
    data = collect(only)
    text = json.dumps(data, indent=1, default=str) + "\n"
    if a.out:
        a.out.write_text(text)
    print(f"{len(data)} systems" + (f" → {a.out}" if a.out else ""))


if __name__ == "__main__":
    main()
