"""Variants from one pretrained checkpoint: learning rate, training on the hard level alone,
grafting, the release's two-tier ladder (Planning off), Dr. GRPO's loss. Each variant runs the
bench preset's RL and evaluation (both arms) with one change; the pretraining checkpoint of
`run.py` is reused (same pretraining settings, so the same weights).

    python benchmarks/scaf_grpo/run.py          # first: pretrains and writes the checkpoint
    python benchmarks/scaf_grpo/variants.py
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.runner import run_system
from iclr26.scaf_grpo import SYSTEM

SFT = Path("runs/benchmarks/scaf_grpo/checkpoints/sft.pt")
VARIANTS = {
    "bench (lr 5e-5, levels 2-4)": {},
    "lr 3e-4": {"grpo.lr": "3e-4"},
    "hard level only (train_levels=4)": {"train_levels": "4"},
    "graft": {"scaf.graft": "true"},
    "tiers knowledge+solution": {"scaf.tiers": "knowledge,solution"},
    "loss dr_grpo": {"grpo.loss_type": "dr_grpo"},
}


def main() -> None:
    if not SFT.exists():
        raise SystemExit(f"{SFT} is missing: run benchmarks/scaf_grpo/run.py first")
    rows = []
    for name, over in VARIANTS.items():
        out = Path("runs/benchmarks/scaf_grpo-variants") / re.sub(r"[^\w.-]+", "_", name).strip("_")
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        shutil.copy(SFT, out / "checkpoints" / "sft.pt")
        rec, _ = run_system(SYSTEM, "bench", over, out=out)
        final, training = rec.report.tables[1], rec.report.tables[2]
        for row in final.rows:
            keys = ["variant", "method", "level", "pass@1", "pass@8"]
            rows.append(dict(zip(keys, [name, *row[:4]], strict=True)))
        for row in training.rows:
            rows.append({"variant": name, "method": row[0], "hinted": row[4], "zero_std_after": row[3]})
        print(name, rows[-1], flush=True)
    path = Path(__file__).parent / "results" / "variants.json"
    path.write_text(json.dumps({**provenance(), "rows": rows}, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
