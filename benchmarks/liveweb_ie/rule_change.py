"""What the one claim rule says about a run saved before the port: VGS against each HTML-snapshot
baseline that ran, paired over the queries, with the empty-extraction floor measured by the ported
study on the same queries and pages.

    python benchmarks/liveweb_ie/run.py --set methods=oracle,null,empty,rules --tag floors
    python benchmarks/liveweb_ie/rule_change.py                  # the bench
    python benchmarks/liveweb_ie/run.py --preset demo --set methods=oracle,null,empty,rules --tag floors
    python benchmarks/liveweb_ie/rule_change.py --preset demo    # the demo

The model arms come from the old run (`results/liveweb_ie_bench.json`, the 2026-12-04 bench; for the
demo `results/liveweb_ie_demo_cd6ecd9.json`, the demo at cd6ecd9 as `compare_tables.py` ran it on
2026-12-07): its per-query F1 table at v0, printed to 0.1 point. The floors come from
`results/liveweb_ie_<preset>_floors.json` (no model). The claim is the one `system.study` declares
before a run; `core.claim.judge` gives each check, `worst` the verdict. Saves
results/rule_change_<preset>.json with the old claim check beside the new ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.claim import Claim, judge, worst

RESULTS = Path(__file__).parent / "results"
ARMS = {"VGS": "vgs", "CoT": "cot", "Reflexion": "reflexion", "AutoScraper": "autoscraper",
        "empty extraction": "empty", "oracle": "oracle", "autoscraper (rules)": "rules",
        "autoscraper (rules; learns from first-page ground truth)": "rules"}  # fmt: skip
# (saved runs name the rule-based row either way)


def per_query(path: Path) -> dict[str, dict[str, float]]:
    """arm -> query -> F1 (%) at v0, from a saved run's per-query table (a benchmark's JSON, or a run
    folder's results.json)."""
    run = json.loads(path.read_text())
    tables = run["tables"] if "tables" in run else run["report"]["tables"]
    table = next(t for t in tables if t["title"].startswith("F1 (%) per query at v0"))
    out: dict[str, dict[str, float]] = {}
    for i, col in enumerate(table["columns"][2:], 2):
        if col in ARMS:
            out[ARMS[col]] = {r[0]: float(r[i]) for r in table["rows"] if r[i] != ""}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bench", choices=("bench", "demo"))
    preset = ap.parse_args().preset
    old_name = "liveweb_ie_bench.json" if preset == "bench" else "liveweb_ie_demo_cd6ecd9.json"
    old_path, floors_path = RESULTS / old_name, RESULTS / f"liveweb_ie_{preset}_floors.json"
    old, floors = per_query(old_path), per_query(floors_path)
    if set(old["oracle"]) != set(floors["empty"]) or old["oracle"] != floors["oracle"]:
        raise SystemExit("the floors run is not on the old run's queries (or its oracle differs): rerun it")
    baselines = tuple(b for b in ("cot", "reflexion", "autoscraper") if b in old)
    claim = Claim("f1_v0", "vgs", baselines, interval="bootstrap", floor_arm="empty")
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
        "before": _claim_check(json.loads(old_path.read_text())),
        "after": [asdict(c) for c in checks],
        "verdict": worst(checks).verdict,
    }
    path = RESULTS / f"rule_change_{preset}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {path}")


def _claim_check(run: dict) -> dict | None:
    return run["claim_check"] if "claim_check" in run else run["report"]["claim_check"]


if __name__ == "__main__":
    main()
