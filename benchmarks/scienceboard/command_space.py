"""The command action space (issue 60): SmolLM2 with command('text') against SmolLM2 with pyautogui,
the reference solution in the command space and the floors, on KAlgebra, PyMOL and GRASS tasks that
end in a state (3 per domain), two turns each, with provenance.

    python benchmarks/scienceboard/command_space.py   # experiment=command, per_domain=3, max_steps=2

Saves results/command_space_bench.json (the domain table per arm, the model arms' actions, the
per-task verdicts, the standard table and the claim) and its ledger (command_space_bench.cells.jsonl).
Cells resume from the run folder's cells.jsonl (`--out`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.scienceboard import SYSTEM

SETS = ("experiment=command", "per_domain=3", "max_steps=2", "figures=false")

if __name__ == "__main__":
    run_preset_benchmark(
        SYSTEM, Path(__file__).parent / "results", "command_space", __doc__.splitlines()[0], SETS
    )
