"""GLoW's memory structure without language (issue 60), and the hard games' floors.

    python benchmarks/glow/structure.py                 # the structure study on the hard suite
    python benchmarks/glow/structure.py --hard          # the floors: random, uniform Go-Explore, no-op

The structure study: a scripted noisy-walkthrough policy (the walkthrough's command with probability p,
else a random valid action) under frontier + multi-path advantage, frontier alone, uniform Go-Explore
and no memory, p in {0.1, 0.3, 0.5}, 3 seeds, at 1,000 env steps, beside the random and no-op floors
(`iclr26.glow.structure`). `--hard`: random play and uniform Go-Explore (no LLM) on the hard suite at
1,000 env steps, with the oracle and null checks. Other `--set` items override these defaults. Saves
results/glow_bench_structure.json (or _hard.json); resumes from the run folder's cells.jsonl.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.glow import SYSTEM

STRUCTURE = {"experiment": "structure", "suite": "hard", "step_budget": "1000", "explore_steps": "20"}
HARD = {"suite": "hard", "agents": "random,go_explore,noop,oracle,null", "step_budget": "1000"}


if __name__ == "__main__":
    hard = "--hard" in sys.argv
    sys.argv = [a for a in sys.argv if a != "--hard"]
    tag = "hard" if hard else "structure"
    sets = tuple(f"{k}={v}" for k, v in (HARD if hard else STRUCTURE).items())
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "glow", __doc__.splitlines()[0], sets,
        tag=tag, out=Path(f"runs/benchmarks/glow_{tag}"),
    )  # fmt: skip
