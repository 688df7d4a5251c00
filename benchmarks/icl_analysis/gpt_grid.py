"""The GPT trained here on the shots × δ grid, as a study: `iclr26 run icl_analysis` with no language
model (`sweep=false`), the PARITY task (its GPT trained on random DFAs, PARITY held out), wider and
longer trained than the bench preset's (width 96, 4 heads, 2,000 steps against width 64, 400 steps),
shots 0, 2, 5, 10, 20, the ID split and every δ, 200 items a cell. The GPT is scored by the label
tokens' log-probs (it answers one token). Floors: the majority label and the shots' majority; the
claim: gpt@20 against both, then against kNN and the decision tree fitted on the same 20 exemplars.

    python benchmarks/icl_analysis/gpt_grid.py [--set gpt.steps=3000 ...] [--out runs/benchmarks/icl_gpt_grid]

Resumable: the study's cells and the GPT's checkpoints live in --out. Saves
results/icl_analysis_bench_<tag>.json (default tag gpt_grid). On a GPU: `--set gpt.device=cuda`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import save_preset_result
from iclr26.core.config import parse_overrides
from iclr26.core.runner import run_system
from iclr26.icl_analysis import SYSTEM

GRID = {
    "sweep": "false",
    "tasks": "parity",
    "gpt_tasks": "parity",
    "shots": "0,2,5,10,20",
    "deltas": "0,0.2,0.45,0.65,0.85",
    "items": "200",
    "baselines": "knn,decision_tree",
    "gpt.d_model": "96",
    "gpt.n_head": "4",
    "gpt.n_layer": "2",
    "gpt.steps": "2000",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/icl_gpt_grid"))
    ap.add_argument(
        "--tag", default="gpt_grid", help="suffix of the results file (another size: another tag)"
    )
    args = ap.parse_args()
    overrides = parse_overrides([f"{k}={v}" for k, v in GRID.items()] + args.overrides)
    record, run_dir = run_system(SYSTEM, "bench", overrides, out=args.out, llm="embedded")
    save_preset_result(
        record, run_dir, Path(__file__).parent / "results", "icl_analysis", "bench", "gpt_grid"
    )


if __name__ == "__main__":
    main()
