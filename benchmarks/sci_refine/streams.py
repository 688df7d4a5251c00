"""The token claim on templated streams: `iclr26 run sci_refine --preset bench --set experiment=streams`
with the sizes below, with provenance.

    python benchmarks/sci_refine/streams.py   # one stream each of 1k, 4k and 8k characters, SmolLM2

Monitor + Querier + Injector against explicit RAG on the same streams (the paper's 512-character window,
128 overlap); BM25 over the built-here corpus. Sized for SmolLM2 on 2 shared cores. Saves
results/sci_refine_streams_bench.json and its cells; resumes from the run folder's cells.jsonl.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.sci_refine import SYSTEM

SIZES = [
    "experiment=streams",
    "streams.lengths=[1000,4000,8000]",
    "streams.per_length=1",
    "retrieval.mode=bm25",
    "monitor.querier_max_tokens=16",
    "monitor.injector_max_tokens=40",
]

if __name__ == "__main__":
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "sci_refine_streams", __doc__.splitlines()[0], tuple(SIZES)
    )
