"""The README's runs: `iclr26 run glow --preset bench` with provenance.

    python benchmarks/glow/run.py                       # the demo suite, every agent, 3 seeds, 100 steps
    python benchmarks/glow/run.py --set suite=ablation --set agents=glow \
        --set ablations=no_mar,no_global,no_frontier,no_all --tag ablations \
        --out runs/benchmarks/glow_ablations

Saves results/glow_<preset>[_<tag>].json and the curves beside it. Runs resume from the run folder's
cells.jsonl (the study's ledger), so an interrupted benchmark continues where it stopped.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.glow import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "glow", __doc__.splitlines()[0])
