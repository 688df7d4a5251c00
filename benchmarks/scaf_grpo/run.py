"""Vanilla GRPO vs Scaf-GRPO on the arithmetic testbed: pass@1 / pass@k per difficulty level over
several seeds, training steps/s; saves the tables with provenance.

    python benchmarks/scaf_grpo/run.py --set seeds=3          # the demo preset with 3 RL seeds
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
from iclr26.scaf_grpo import SYSTEM


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/scaf_grpo"))
    args = ap.parse_args()
    record, run_dir = run_system(SYSTEM, args.preset, parse_overrides(args.overrides), out=args.out)
    path = Path(__file__).parent / "results" / f"scaf_grpo_{args.preset}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        json.dumps(
            {
                **provenance(),
                "preset": args.preset,
                "run_dir": str(run_dir),
                "wall_time_s": record.wall_time_s,
                "config": record.config,
                "claim_check": asdict(record.report.claim_check) if record.report.claim_check else None,
                "tables": [asdict(t) for t in record.report.tables],
            },
            indent=1,
        )
        + "\n"
    )
    print((run_dir / "report.md").read_text())
    print(f"saved {path}")


if __name__ == "__main__":
    main()
