"""Trained on one compare type, tested on the other: `iclr26 run lfqa_e --set experiment=transfer` on
the released Chinese file (bench preset, the sizes below), with provenance.

    git -C <bare copy of YuchenFan48/LFQA-E> show HEAD:data/unified_benchmark_zh.json \
        > /tmp/unified_benchmark_zh.json
    python benchmarks/lfqa_e/transfer.py --set data=/tmp/unified_benchmark_zh.json

The evaluator (reference-based) and the reward model (reference-free), MiniLM fine-tuned here, each
trained once on the human_vs_model and once on the model_vs_model comparisons of half the questions
(as many pairs of each type), tested on both types' comparisons of the other half. Sized for 2 shared
cores (35 minutes at load average 5-8): 40 steps of 8 pairs at 128 word pieces per model. Saves
results/lfqa_e_transfer_bench.json and its cells; resumes from the run folder (cells.jsonl and each
model's checkpoint folder).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
sys.path.insert(0, str(Path(__file__).parent))
from _release import require_data

from _meta import run_preset_benchmark
from iclr26.lfqa_e import SYSTEM

SIZES = (
    "experiment=transfer",
    "metrics=trained_evaluator,reward_model",
    "evaluator.steps=40",
    "reward.steps=40",
    "evaluator.max_length=128",
    "reward.max_length=128",
)

if __name__ == "__main__":
    require_data(sys.argv[1:])
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "lfqa_e_transfer", __doc__.splitlines()[0], SIZES
    )
