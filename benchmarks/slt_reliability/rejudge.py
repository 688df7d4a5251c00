"""The study's claim rule applied to the saved bench results made before the port: each detector's test
AUC per translator (the units of the study) from the main table of `results/slt_reliability_bench*.json`,
judged as `core.claim.judge` judges the cells (grounding and META against confidence alone, ± 2 SE of the
paired differences, AUC 0.5 as the floor). The AUCs are the table's, rounded to 3 decimals.

    python benchmarks/slt_reliability/rejudge.py

Saves results/rejudge_bench.json.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.claim import Claim, judge

RESULTS = Path(__file__).parent / "results"
LABEL = "hallucination-detection AUC (test), paired per translator"


def rejudge(path: Path) -> dict:
    """The old claim check of the file and the new rule's checks on its per-translator AUCs."""
    saved = json.loads(path.read_text())
    main = next(t for t in saved["tables"] if t["title"] == "Hallucination detection AUC (test)")
    col = {c: i for i, c in enumerate(main["columns"])}
    auc = {
        k: {f"{r[0]}/{r[1]}": r[col[f"AUC {k}"]] for r in main["rows"]}
        for k in ("grounding", "confidence", "META")
    }
    checks = []
    for method in ("grounding", "META"):
        claim = Claim("auc", method, ("confidence",), floor=0.5, label=LABEL)
        checks.append(dataclasses.asdict(judge(claim, "confidence", auc[method], auc["confidence"])))
    return {"file": path.name, "claim_before": saved["claim_check"], "auc": auc, "claims_after": checks}


def main() -> None:
    files = sorted(RESULTS.glob("slt_reliability_bench*.json"))
    out = {**provenance(), "rejudged": [rejudge(p) for p in files]}
    for r in out["rejudged"]:
        for c in r["claims_after"]:
            lo, hi = c["interval"]
            means = f"{c['method_value']:.3f} vs confidence {c['baseline_value']:.3f}"
            print(f"{r['file']}: {c['method']} {means}: {c['verdict']} [{lo:+.3f}, {hi:+.3f}]")
    dest = RESULTS / "rejudge_bench.json"
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {dest}")


if __name__ == "__main__":
    main()
