"""The README's runs: `iclr26 run spatial_dise --preset bench` with provenance.

    python benchmarks/spatial_dise/run.py --set data_dir=runs/spatial_dise_data   # reuses generated splits

Saves results/spatial_dise_<preset>[_<tag>].json and the figures beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.spatial_dise import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "spatial_dise", __doc__.splitlines()[0])
