"""The README's F1 tables: `iclr26 run liveweb_ie --preset bench` with provenance.

    python benchmarks/liveweb_ie/run.py      # 24 queries, 5 local sites, 8 methods (floors too), v0/v1/v2/v4

Saves results/liveweb_ie_<preset>[_<tag>].json and the run's figures next to it (F1 by type, a VGS
region with its set-of-mark boxes). Cells (a method on a query) resume from the run folder's
cells.jsonl, so an interrupted benchmark continues where it stopped.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.liveweb_ie import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "liveweb_ie", __doc__.splitlines()[0])
