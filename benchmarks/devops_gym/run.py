"""The README's category table: `iclr26 run devops_gym --preset bench` with provenance.

    python benchmarks/devops_gym/run.py      # 39 built-here tasks: oracle, null, SmolLM2 shell agent

Saves results/devops_gym_<preset>[_<tag>].json. Cells resume from the run folder's cells.jsonl (`core.study`),
so an interrupted benchmark continues where it stopped.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.devops_gym import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "devops_gym", __doc__.splitlines()[0])
