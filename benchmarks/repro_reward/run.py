"""GRPO with the outcome reward vs GRPO + RePro's process reward on the overthinking testbed:
pass@1, completion tokens and overthinking tokens per level over several seeds, training steps/s;
saves the tables with provenance.

    python benchmarks/repro_reward/run.py --set seeds=3          # the bench preset with 3 RL seeds
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.repro_reward import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "repro_reward", __doc__.splitlines()[0])
