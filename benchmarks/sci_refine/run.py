"""The README's build-up table: `iclr26 run sci_refine --preset bench` with provenance.

    python benchmarks/sci_refine/run.py                 # 8 questions × 7 rows, 3 proposers, SmolLM2

Saves results/sci_refine_<preset>[_<tag>].json and the figure beside it. Runs resume from the run
folder's cells.jsonl (and its LLM caches), so an interrupted benchmark continues where it stopped.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.sci_refine import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "sci_refine", __doc__.splitlines()[0])
