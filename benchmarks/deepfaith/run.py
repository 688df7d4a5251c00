"""DeepFaith vs the captum prior methods on every faithfulness metric, per task, with average ranks
and per-input latency measured in the same run; saves the tables with provenance.

    python benchmarks/deepfaith/run.py                  # the bench preset: 5 tasks, about 6 min on 2 cores
    python benchmarks/deepfaith/run.py --preset paper   # the paper-shaped explainer, more inputs (GPU)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.deepfaith import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "deepfaith", __doc__.splitlines()[0])
