"""The README's success table: `iclr26 run scienceboard --preset bench` with provenance.

    python benchmarks/scienceboard/run.py   # 39 tasks, 5 domains: oracle, null, floors, SmolLM2 (a11y tree)

Saves results/scienceboard_<preset>[_<tag>].json (the domain table, app start-up times, per-task
verdicts, the model agent's actions, the standard table and the claim) and one screenshot per app with
the oracle's first click marked (screen_<app>_<preset>.png). Cells resume from the run folder's
cells.jsonl, so an interrupted benchmark continues.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.scienceboard import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "scienceboard", __doc__.splitlines()[0])
