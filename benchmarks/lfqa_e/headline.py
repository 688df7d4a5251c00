"""The headline: every static metric and the floors on the whole released Chinese file, with provenance.

    git -C <bare copy of YuchenFan48/LFQA-E> show HEAD:data/unified_benchmark_zh.json \
        > /tmp/unified_benchmark_zh.json
    python benchmarks/lfqa_e/headline.py --set data=/tmp/unified_benchmark_zh.json

Static metrics need no training split, so every comparison is scored (`train_share=0`, as the paper
did); the majority-class floor is then the most frequent label of the file. Nothing here is trained
and no LLM judges (SmolLM2 cannot fit most Chinese pairs in its 2,048-token slots), so each static
metric is the method of a claim against the three floors. Saves
results/lfqa_e_headline_bench_whole_zh.json, its cells and figures (`_whole_zh`, the default `--tag`:
the built-here bench's figures keep their names); resumes from the run folder's cells.jsonl.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
sys.path.insert(0, str(Path(__file__).parent))
from _release import require_data

from _meta import run_preset_benchmark
from iclr26.lfqa_e import SYSTEM
from iclr26.lfqa_e.static import STATIC_METRICS

SIZES = ("train_share=0", f"metrics={','.join(STATIC_METRICS)}")

if __name__ == "__main__":
    require_data(sys.argv[1:])
    run_preset_benchmark(
        SYSTEM,
        Path(__file__).parent / "results",
        "lfqa_e_headline",
        __doc__.splitlines()[0],
        SIZES,
        tag="whole_zh",
    )
