"""The learned-executor experiment: single-robot vs collaborative trained executors on one common trial
set, step and mission level, 3 seeds (`iclr26 run conavbench --set experiment=learned`) with provenance.

    python benchmarks/conavbench/learned.py --set data_dir=runs/conavbench_data

Saves results/conavbench_bench_learned.json (tables, the claims, command, date, machine), its cells
and the run folder's checkpoints (a rerun with the same --out resumes the trained executors and cells).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.conavbench import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "conavbench", __doc__.splitlines()[0],
                         sets=("experiment=learned",), tag="learned")  # fmt: skip
