"""Grounding versus planning (issue 60): the oracle with Gaussian pointer noise and the scripted
grounding-only agent, with the floors, on the bench's pointing tasks (3 per domain), with provenance.

    python benchmarks/scienceboard/grounding.py   # experiment=grounding, per_domain=3, σ = 5, 10, 20 px

Saves results/grounding_bench.json (the domain table per arm, the grounding agent's found/missed
elements per app, the per-task verdicts, the standard table and the claims) and its ledger
(grounding_bench.cells.jsonl). Cells resume from the run folder's cells.jsonl (`--out`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.scienceboard import SYSTEM

SETS = ("experiment=grounding", "per_domain=3", "figures=false")

if __name__ == "__main__":
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "grounding", __doc__.splitlines()[0], SETS
    )
