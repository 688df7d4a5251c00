"""Ablation of LaplacianAttention on the bench tasks: the local depthwise conv, the feature map
(injective / row / none), λ and the Newton–Schulz iterations; 3 seeds each, same budget as the
bench preset (so the default row equals the bench run's `laplacian` row).

    python benchmarks/laplacianformer/ablation.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.runner import run_system
from iclr26.laplacianformer import SYSTEM

VARIANTS = {
    "default (injective, conv 3, λ=4, 20 NS)": {},
    "no local conv": {"local_conv": "0"},
    "row normalization": {"normalization": "row"},
    "no normalization": {"normalization": "none"},
    "λ = 16": {"lam": "16"},
    "5 NS iterations": {"ns_iters": "5"},
}


def main() -> None:
    rows = []
    for name, over in VARIANTS.items():
        out = Path("runs/benchmarks/laplacianformer-ablation") / name.split(" (")[0].replace(" ", "_")
        rec, _ = run_system(
            SYSTEM, "bench", {"attentions": "laplacian", "scaling_lengths": "", **over}, out=out
        )
        t = rec.report.tables[0]
        row = dict(zip(t.columns, t.rows[0], strict=True))
        rows.append({"variant": name, **row})
        print(name, row, flush=True)
    path = Path(__file__).parent / "results" / "ablation.json"
    path.write_text(json.dumps({**provenance(), "rows": rows}, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
