"""Accuracy at equal parameters and CPU scaling: runs the `laplacianformer` preset and saves
the tables with provenance.

    python benchmarks/laplacianformer/accuracy.py                  # the demo preset (CPU)
    python benchmarks/laplacianformer/accuracy.py --preset paper   # GPU
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.config import parse_overrides
from iclr26.core.runner import run_system
from iclr26.laplacianformer import SYSTEM


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/laplacianformer-accuracy"))
    ap.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    args = ap.parse_args()
    record, run_dir = run_system(SYSTEM, args.preset, parse_overrides(args.overrides), out=args.out)
    args.results.mkdir(parents=True, exist_ok=True)
    path = args.results / f"accuracy_{args.preset}.json"
    payload = {
        **provenance(),
        "preset": args.preset,
        "run_dir": str(run_dir),
        "wall_time_s": record.wall_time_s,
        "config": record.config,
        "claim_check": asdict(record.report.claim_check) if record.report.claim_check else None,
        "tables": [asdict(t) for t in record.report.tables],
        "notes": record.report.notes,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print((run_dir / "report.md").read_text())
    print(f"saved {path}")


if __name__ == "__main__":
    main()
