"""The README's F1 tables: `iclr26 run liveweb_ie --preset bench` with provenance.

    python benchmarks/liveweb_ie/run.py      # 24 queries on 5 live local sites, 6 methods, v0 / v1 / v2

Saves results/liveweb_ie_<preset>[_<tag>].json, and copies the run's figures (F1 by type, a VGS
region with its set-of-mark boxes) next to it. Wrappers resume from the run folder's
wrappers.jsonl, so an interrupted benchmark continues where it stopped.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.liveweb_ie import SYSTEM

if __name__ == "__main__":
    results = Path(__file__).parent / "results"
    run_preset_benchmark(SYSTEM, results, "liveweb_ie", __doc__.splitlines()[0])
    latest = max(results.glob("liveweb_ie_*.json"), key=lambda p: p.stat().st_mtime)
    run_dir = Path(json.loads(latest.read_text())["run_dir"])
    for name in ("f1_by_type.png", "vgs_region_marks.png"):
        if (run_dir / name).is_file():
            shutil.copy(run_dir / name, results / f"{latest.stem}_{name}")
