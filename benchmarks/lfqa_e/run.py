"""The README's runs: `iclr26 run lfqa_e --preset bench` with provenance.

    python benchmarks/lfqa_e/run.py                        # the built-here set, every metric, SmolLM2 judging
    git -C <bare copy of YuchenFan48/LFQA-E> show HEAD:data/unified_benchmark_zh.json > /tmp/zh.json
    python benchmarks/lfqa_e/run.py --set data=/tmp/zh.json --set judge_items=60 --tag zh   # a release file

Saves results/lfqa_e_<preset>[_<tag>].json and the figures beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.lfqa_e import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "lfqa_e", __doc__.splitlines()[0])
