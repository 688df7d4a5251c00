"""The README's runs: `iclr26 run slt_reliability --preset bench` with provenance.

    python benchmarks/slt_reliability/run.py
    python benchmarks/slt_reliability/run.py --set reliability.fit=pooled --tag pooled

Saves results/slt_reliability_<preset>[_<tag>].json and the figures beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.slt_reliability import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "slt_reliability", __doc__.splitlines()[0]
    )
