"""The GPT trained here on the shots × δ grid, as a study: `iclr26 run icl_analysis` with no language
model (`sweep=false`), the PARITY task (its GPT trained on random DFAs, PARITY held out), wider and
longer trained than the bench preset's (width 96, 4 heads, 3,000 steps against width 64, 400 steps),
shots 0, 2, 5, 10, 20, the ID split and every δ, 200 items a cell. The GPT is scored by the label
tokens' log-probs (it answers one token). Floors: the majority label and the shots' majority; the
claim: gpt@20 against both, then against kNN and the decision tree fitted on the same 20 exemplars.

    python benchmarks/icl_analysis/gpt_grid.py [--set gpt.steps=3000 ...] [--out runs/benchmarks/icl_gpt_grid]

Resumable: the study's cells and the GPT's checkpoints live in --out. Saves
results/icl_analysis_bench_<tag>.json (default tag gpt_grid), with `validation_automata_%`: the
trained GPT's accuracy on random automata of its family it never trained on (its validation
automata, 200 of them, 10 queries each) at each shot count, beside the floors on the same queries
(the better constant label, each automaton's exemplars' majority), which says whether it learns in
context at all. Another family (the README's reversal grid): `--set tasks=reversal --set
gpt_tasks=reversal --set gpt.max_len=24 --set gpt.max_shots=10 --set shots=0,2,5,10 --set
gpt.d_model=64 --set gpt.steps=600 --tag gpt_grid_reversal --out
runs/benchmarks/icl_gpt_grid_reversal5`. On a GPU: `--set gpt.device=cuda`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import save_preset_result
from iclr26.core.config import parse_overrides
from iclr26.core.runner import run_system
from iclr26.icl_analysis import SYSTEM
from iclr26.icl_analysis.gpt import FAMILY_OF_TASK, train_icl_gpt, validation_accuracy, validation_floors

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
    "gpt.steps": "3000",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/icl_gpt_grid"))
    ap.add_argument(
        "--tag", default="gpt_grid", help="suffix of the results file (another size: another tag)"
    )
    args = ap.parse_args()
    # the command line's --set wins over the grid's
    overrides = {**parse_overrides([f"{k}={v}" for k, v in GRID.items()]), **parse_overrides(args.overrides)}
    record, run_dir = run_system(SYSTEM, "bench", overrides, out=args.out, llm="embedded")
    path = save_preset_result(
        record, run_dir, Path(__file__).parent / "results", "icl_analysis", "bench", args.tag
    )
    cfg = SYSTEM.config("bench", overrides)
    validation = {}
    for task in cfg.gpt_tasks:  # the trained GPT from its final checkpoint (no further steps)
        gcfg = replace(cfg.gpt, family=FAMILY_OF_TASK[task], seed=cfg.seed)
        model = train_icl_gpt(gcfg, run_dir / "checkpoints" / f"gpt-{task}")
        shots = [k for k in cfg.shots if k <= gcfg.max_shots]
        validation[task] = {
            k: {
                "gpt": round(validation_accuracy(model, k, n_automata=200), 1),
                **{f: None if v is None else round(v, 1) for f, v in validation_floors(gcfg, k, 200).items()},
            }
            for k in shots
        }
        print(f"{task}: validation automata accuracy % by shots {validation[task]}")
    payload = json.loads(path.read_text())
    payload["validation_automata_%"] = validation
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
