"""The GPT trained here: does it learn in context? One model per task family at the module's
default size (2 layers, width 64, 2500 steps), scored on held-out random automata of its family
(never trained on) and on the real task's ID and δ = 0.85 test splits, against shots.

    python benchmarks/icl_analysis/gpt_icl.py [--steps 2500] [--families dfa,pattern]

Training checkpoints go to runs/benchmarks/icl_gpt/<family> (an interrupted run resumes).
Saves results/gpt_icl.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.icl_analysis.gpt import (
    FAMILIES,
    TASK_OF_FAMILY,
    GPTConfig,
    evaluate_gpt,
    train_icl_gpt,
    validation_accuracy,
)
from iclr26.icl_analysis.tasks import TASKS, make_splits

SHOTS = (0, 2, 5, 10, 20)
TASK_SHOTS = (0, 5, 20)
DELTA = 0.85


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=GPTConfig().steps)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--items", type=int, default=200, help="test items per real-task cell")
    ap.add_argument("--automata", type=int, default=200, help="held-out automata per shot count")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/icl_gpt"))
    a = ap.parse_args()
    torch.set_num_threads(1)  # the bench figure in GPTConfig's docstring is for one core
    rows = []
    for family in a.families.split(","):
        cfg = GPTConfig(family=family, steps=a.steps)
        start = time.perf_counter()
        model = train_icl_gpt(cfg, a.out / family)
        train_s = time.perf_counter() - start
        task = TASK_OF_FAMILY[family]
        splits = make_splits(TASKS[task], 0, n_test=a.items, n_ood=a.items)
        row = {
            "family": family,
            "held_out_task": task,
            "steps": cfg.steps,
            "train_seconds": round(train_s, 1),
            "final_loss": round(sum(model.losses[-50:]) / len(model.losses[-50:]), 4),
            "held_out_automata_%": {
                k: round(validation_accuracy(model, k, n_automata=a.automata), 1) for k in SHOTS
            },
            "task_%": {
                f"{k} shots, δ={d:g}": round(evaluate_gpt(model, task, splits, k, d, a.items).punish, 1)
                for k in TASK_SHOTS
                for d in (0.0, DELTA)
            },
            "task_label_share_%": round(100 * sum(it.label for it in splits.test) / len(splits.test), 1),
        }
        rows.append(row)
        print(json.dumps(row))
    out = Path(__file__).parent / "results" / "gpt_icl.json"
    out.write_text(json.dumps({**provenance(), "rows": rows}, indent=1, ensure_ascii=False) + "\n")
    print(f"saved {out}")


if __name__ == "__main__":
    main()
