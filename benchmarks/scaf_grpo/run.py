"""Vanilla GRPO vs Scaf-GRPO on the arithmetic testbed: pass@1 / pass@k per difficulty level over
several seeds, training steps/s; saves the tables with provenance.

    python benchmarks/scaf_grpo/run.py --set seeds=3          # the bench preset with 3 RL seeds
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.scaf_grpo import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "scaf_grpo", __doc__.splitlines()[0])
