"""Accuracy at equal parameters and CPU scaling: runs the `laplacianformer` preset and saves
the tables with provenance.

    python benchmarks/laplacianformer/accuracy.py                  # the bench preset (CPU)
    python benchmarks/laplacianformer/accuracy.py --preset paper   # GPU
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.laplacianformer import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "accuracy", __doc__.splitlines()[0])
