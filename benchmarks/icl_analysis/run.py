"""The README's sweep: `iclr26 run icl_analysis --preset bench` with provenance.

    python benchmarks/icl_analysis/run.py [--preset bench] [--set styles=cot ...] [--llm http]

Saves results/icl_analysis_<preset>.json and the figures beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.icl_analysis import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "icl_analysis", __doc__.splitlines()[0])
