"""VINCIE at CPU scale: the session model trained on video sessions against the pairwise
single-turn editor (same size, data, steps and seed), the proxy-task ablations and copy-previous,
edited for 5 turns on held-out scenes; success at turn k, judge scores, pixel metrics and mask IoU,
saved with provenance.

    python benchmarks/vincie/run.py                   # the bench preset (CPU, Ray: methods side by side)
    python benchmarks/vincie/run.py --preset paper    # the authors' shape at 64 px (GPU)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.vincie import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "vincie", __doc__.splitlines()[0])
