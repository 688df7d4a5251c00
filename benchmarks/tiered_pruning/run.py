"""Query-specific discovery (Algorithm 1) vs tiered FCI: CI tests and wall time over graph size and
number of tiers (oracle), on bnlearn networks, and accuracy on finite samples; identification answers
with and without pruning; the log-scale speedup plot. Saves the tables with provenance.

    python benchmarks/tiered_pruning/run.py                    # the bench preset (CPU, minutes)
    python benchmarks/tiered_pruning/run.py --preset paper     # up to 1000 variables, 3 graphs, 30 queries
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.tiered_pruning import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "tiered_pruning", __doc__.splitlines()[0])
