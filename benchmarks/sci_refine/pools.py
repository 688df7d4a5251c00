"""Refinement on candidate pools of known quality: `iclr26 run sci_refine --set experiment=pools`
(bench preset) with the sizes below, with provenance.

    python benchmarks/sci_refine/pools.py    # 2 questions × p in {0.34, 0.67}, pools of 3, SmolLM2

Scripted proposers (each gold with probability p, else one of two wrong answers); selector alone, HSR +
selector and QAIR call the run's model; majority vote and a random pick are floors. Sized for SmolLM2 on
2 shared cores (about a generated token a second when loaded): few units, short calls. Saves
results/sci_refine_pools_bench.json and its cells; resumes from the run folder's cells.jsonl.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.sci_refine import SYSTEM

SIZES = [
    "experiment=pools",
    "pools.n_questions=2",
    "pools.p=[0.34,0.67]",
    "max_tokens=48",
    "refine.eval_max_tokens=24",
    "refine.select_max_tokens=12",
    "n_distractors=100",
]

if __name__ == "__main__":
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "sci_refine_pools", __doc__.splitlines()[0], tuple(SIZES)
    )
