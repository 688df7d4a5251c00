"""What the one claim rule says about the saved bench run: VGS against each HTML-snapshot baseline,
paired over the 24 queries, with the empty-extraction floor measured by the ported study.

    python benchmarks/liveweb_ie/run.py --set methods=oracle,null,empty,rules --tag floors
    python benchmarks/liveweb_ie/rule_change.py

The model arms come from `results/liveweb_ie_bench.json` (the 2026-12-04 bench, run before the port:
its per-query F1 table at v0, printed to 0.1 point); the floors from `results/liveweb_ie_bench_floors.json`
(the same queries, sites and pages, run through `core.study`; no model). The claim is the one
`system.study` declares before a run; `core.claim.judge` gives each check, `worst` the verdict.
Saves results/rule_change_bench.json with the old claim check beside the new ones.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.claim import Claim, judge, worst

RESULTS = Path(__file__).parent / "results"
ARMS = {"VGS": "vgs", "CoT": "cot", "Reflexion": "reflexion", "AutoScraper": "autoscraper",
        "empty extraction": "empty", "oracle": "oracle", "autoscraper (rules)": "rules"}  # fmt: skip


def per_query(path: Path) -> dict[str, dict[str, float]]:
    """arm -> query -> F1 (%) at v0, from a saved run's per-query table."""
    run = json.loads(path.read_text())
    table = next(t for t in run["tables"] if t["title"].startswith("F1 (%) per query at v0"))
    out: dict[str, dict[str, float]] = {}
    for i, col in enumerate(table["columns"][2:], 2):
        if col in ARMS:
            out[ARMS[col]] = {r[0]: float(r[i]) for r in table["rows"] if r[i] != ""}
    return out


def main() -> None:
    old_path, floors_path = RESULTS / "liveweb_ie_bench.json", RESULTS / "liveweb_ie_bench_floors.json"
    old, floors = per_query(old_path), per_query(floors_path)
    if set(old["oracle"]) != set(floors["empty"]) or old["oracle"] != floors["oracle"]:
        raise SystemExit("the floors run is not on the bench's queries (or its oracle differs): rerun it")
    claim = Claim(
        "f1_v0", "vgs", ("cot", "reflexion", "autoscraper"), interval="bootstrap", floor_arm="empty"
    )
    checks = [judge(claim, b, old["vgs"], old[b], floors["empty"]) for b in claim.baselines]
    for c in checks:
        print(f"VGS {c.method_value:.2f} vs {c.baseline} {c.baseline_value:.2f}: {c.verdict} ({c.rule})")
    print(f"claim: {worst(checks).verdict}")
    out = {
        **provenance(),
        "inputs": [old_path.name, floors_path.name],
        "queries": len(old["vgs"]),
        "floor_mean": sum(floors["empty"].values()) / len(floors["empty"]),
        "floor_queries_above_zero": sum(v > 0 for v in floors["empty"].values()),
        "before": json.loads(old_path.read_text())["claim_check"],
        "after": [asdict(c) for c in checks],
        "verdict": worst(checks).verdict,
    }
    (RESULTS / "rule_change_bench.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {RESULTS / 'rule_change_bench.json'}")


if __name__ == "__main__":
    main()
