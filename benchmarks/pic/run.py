"""BC, TD3+BC, IQL, PIC and EPIC on D4RL-style datasets generated here: normalized score per
dataset over seeds, learning curves and gradient steps/s measured in the same run; saves the
tables with provenance.

    python benchmarks/pic/run.py                       # the bench preset (Pendulum-v1), from nothing
    python benchmarks/pic/run.py --preset paper --set env_id=Walker2d-v5 --tag walker2d
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.pic import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "pic", __doc__.splitlines()[0])
