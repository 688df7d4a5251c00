"""Scaf-GRPO variants from one pretrained checkpoint: learning rate, grafting, and the
release's two-tier ladder (Planning off). Each variant runs the demo preset's RL and evaluation
with one change; the pretraining checkpoint of `run.py` is reused (same pretraining settings).

    python benchmarks/scaf_grpo/run.py          # first: pretrains and writes the checkpoint
    python benchmarks/scaf_grpo/variants.py
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.runner import run_system
from iclr26.scaf_grpo import SYSTEM

SFT = Path("runs/benchmarks/scaf_grpo/checkpoints/sft.pt")
VARIANTS = {
    "lr 3e-4 (demo default)": {},
    "lr 5e-5": {"lr": "5e-5"},
    "lr 5e-5, graft": {"lr": "5e-5", "graft": "true"},
    "lr 5e-5, tiers knowledge+solution": {"lr": "5e-5", "tiers": "knowledge,solution"},
}


def main() -> None:
    if not SFT.exists():
        raise SystemExit(f"{SFT} is missing: run benchmarks/scaf_grpo/run.py first")
    rows = []
    for name, over in VARIANTS.items():
        out = Path("runs/benchmarks/scaf_grpo-variants") / name.replace(" ", "_").replace(",", "")
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        shutil.copy(SFT, out / "checkpoints" / "sft.pt")
        rec, _ = run_system(SYSTEM, "demo", over, out=out)
        final, training = rec.report.tables[1], rec.report.tables[2]
        for row in final.rows:
            if row[0] == "scaf_grpo":
                rows.append({"variant": name, "level": row[1], "pass@1": row[2], "pass@8": row[3]})
        scaf = next(r for r in training.rows if r[0] == "scaf_grpo")
        rows.append({"variant": name, "hinted": scaf[4], "zero_std_after": scaf[3], "rungs": scaf[5]})
        print(name, rows[-1], flush=True)
    path = Path(__file__).parent / "results" / "variants.json"
    path.write_text(json.dumps({**provenance(), "rows": rows}, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
