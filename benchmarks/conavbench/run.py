"""The README's runs: `iclr26 run conavbench --preset bench` with provenance.

    python benchmarks/conavbench/run.py --set data_dir=runs/conavbench_data

Saves results/conavbench_<preset>[_<tag>].json and the figures beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.conavbench import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "conavbench", __doc__.splitlines()[0])
