"""The soft constraint per LLM agent from a glow run's ledger (finished or not).

    python benchmarks/glow/soft_constraint.py runs/benchmarks/glow_demo_remap_off \
        runs/benchmarks/glow_demo_remap_on --tag demo

Reads each run folder's cells.jsonl and saves results/glow_soft_<tag>.json: per agent and remap setting,
the parse-fail share (policy replies with no readable command) and the off-list share (commands sent
that were not valid actions: remapped with remap on, sent as generated with it off), with the cells'
units, so a partial run's figures say which cells they come from.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.glow.system import soft_constraint_table

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dirs", type=Path, nargs="+")
    ap.add_argument("--tag", required=True)
    args = ap.parse_args()
    cells = []
    for run_dir in args.run_dirs:
        ledger = run_dir / "cells.jsonl"
        if not ledger.is_file():
            print(f"error: no cells.jsonl in {run_dir}", file=sys.stderr)
            sys.exit(2)
        cells += [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]
    runs = [c["metrics"] for c in cells if c.get("metrics")]
    table = soft_constraint_table(runs)
    if table is None:
        print("error: the ledgers hold no LLM agent's cell", file=sys.stderr)
        sys.exit(2)
    out = Path(__file__).parent / "results" / f"glow_soft_{args.tag}.json"
    units = [f"{c['arm']} {c['unit']}" for c in cells if c.get("metrics", {}).get("llm_calls", 0) > 0]
    out.write_text(json.dumps({**provenance(), "run_dirs": [str(d) for d in args.run_dirs], "cells": units,
                               "table": asdict(table)}, indent=1) + "\n")  # fmt: skip
    print(json.dumps(asdict(table), indent=1))
    print(f"saved {out}")
