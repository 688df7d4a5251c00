"""Which part of DeepFaith's objective matters: the full objective (Algorithm 1's dynamic weight)
with subsets sampled from the explainer or uniformly, and each loss alone (L_PC only: learning the
filtered priors; L_LC only: self-supervised). Each variant's average rank against the same prior
methods, per task, from one run (same target models, priors and supervision for every variant).

    python benchmarks/deepfaith/ablation.py [--set train.epochs=80] [--out runs/benchmarks/deepfaith_ablation]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core import RunContext
from iclr26.core.config import config_to_dict, parse_overrides, with_changes
from iclr26.deepfaith import SYSTEM
from iclr26.deepfaith.system import METHOD, run_task

VARIANTS = {
    "DeepFaith (α schedule, subsets from σ(s))": {
        "train.objective": "deepfaith",
        "train.sampling": "explainer",
    },
    "DeepFaith (α schedule, uniform subsets)": {"train.objective": "deepfaith", "train.sampling": "uniform"},
    "L_PC only (fit the filtered priors)": {"train.objective": "pattern", "train.sampling": "explainer"},
    "L_LC only (self-supervised)": {"train.objective": "local", "train.sampling": "explainer"},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/deepfaith_ablation"))
    args = ap.parse_args()
    base = SYSTEM.config("bench", parse_overrides(args.overrides))
    args.out.mkdir(parents=True, exist_ok=True)
    ctx = RunContext(args.out)
    ranks: dict[str, dict[str, float]] = {v: {} for v in VARIANTS}
    for task in base.tasks:
        for label, change in VARIANTS.items():
            done = args.out / f"{task}-{change['train.objective']}-{change['train.sampling']}.json"
            if done.exists():
                r = json.loads(done.read_text())
            else:
                r = run_task(with_changes(base, change), task, ctx)
                done.write_text(json.dumps(r))
            ranks[label][task] = r["ranks"]["avg"][METHOD]
            ctx.log(f"{task} · {label}: average rank {ranks[label][task]:.2f}")
    rows = [
        [label, *[ranks[label][t] for t in base.tasks], statistics.fmean(ranks[label].values())]
        for label in VARIANTS
    ]
    payload = {
        **provenance(),
        "config": config_to_dict(base),
        "columns": ["variant", *base.tasks, "mean"],
        "rows": rows,
        "note": "average rank of the variant among itself and the prior methods (1 = most faithful)",
    }
    out = Path(__file__).parent / "results" / "ablation_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print("| " + " | ".join(payload["columns"]) + " |")
    for row in rows:
        print("| " + " | ".join(f"{c:.2f}" if isinstance(c, float) else str(c) for c in row) + " |")
    print(f"saved {out}")


if __name__ == "__main__":
    main()
