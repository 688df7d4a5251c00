"""EPIC's δ × ensemble-size ablation: the paper's "coupling effect" (a moderate peer constraint δ keeps
the policy in distribution, so a small critic ensemble suffices) on the bench preset's Pendulum data.

    python benchmarks/pic/coupling.py                         # N ∈ {2, 10} × δ ∈ {0, 1, 3}, 2 seeds
    python benchmarks/pic/coupling.py --critics 2 5 10 --deltas 0 1 --seeds 3 --steps 5000

Each cell is one `bench` run of EPIC alone (δ = 0 is EDAC's critic objective with EPIC's normalized
actor loss, no constraint). The datasets are generated once into `--data-dir` and shared; finished
runs are reused when the command is repeated (run folders under `--out`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.ledger import CELLS_FILE, read_cells
from iclr26.core.runner import run_system
from iclr26.pic import SYSTEM


def cell(run_dir: Path) -> dict[str, dict[str, float]]:
    """Per dataset: mean and sd over seeds of the normalized score (ours), and mean steps/s."""
    per: dict[str, list[dict]] = {}
    for cell in read_cells(run_dir / CELLS_FILE).values():  # the study's ledger: one record per (arm, unit)
        if "steps_per_s" in cell.metrics:  # a trained algorithm, not a floor
            per.setdefault(cell.unit.split("/")[0], []).append(cell.metrics)
    out = {}
    for ds, recs in per.items():
        scores = [r["normalized_ours"] for r in recs]
        out[ds] = {
            "mean": statistics.fmean(scores),
            "sd": statistics.stdev(scores) if len(scores) > 1 else 0.0,
            "seeds": len(scores),
            "scores": scores,
            "steps_per_s": statistics.fmean(r["steps_per_s"] for r in recs),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--critics", type=int, nargs="+", default=[2, 10])
    ap.add_argument("--deltas", type=float, nargs="+", default=[0.0, 1.0, 3.0])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--data-dir", default="runs/pic_data_bench")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/pic_coupling"))
    a = ap.parse_args()
    t0, cells = time.time(), []
    for n in a.critics:
        for delta in a.deltas:
            over = {
                "algorithms": "epic",
                "epic.num_critics": str(n),
                "epic.delta": str(delta),
                "seeds": str(a.seeds),
                "steps": str(a.steps),
                "data_dir": a.data_dir,
            }
            name = f"n{n}_delta{delta:g}_seeds{a.seeds}_steps{a.steps}"  # one folder per distinct run
            _, run_dir = run_system(SYSTEM, "bench", over, out=a.out / name)
            cells.append({"num_critics": n, "delta": delta, "run_dir": str(run_dir), **cell(run_dir)})
            print(f"N={n} δ={delta:g}: " + ", ".join(
                f"{ds} {v['mean']:.1f} ± {v['sd']:.1f}" for ds, v in cells[-1].items() if isinstance(v, dict)
            ), flush=True)  # fmt: skip
    path = Path(__file__).parent / "results" / "pic_coupling.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {**provenance(), "wall_time_s": time.time() - t0, "args": vars(a) | {"out": str(a.out)}}
    path.write_text(json.dumps(payload | {"cells": cells}, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
