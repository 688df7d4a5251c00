"""What the one claim rule says about the saved bench run: the model agent against the always-FAIL
floor on tasks passed, paired over the 39 built-here tasks, with the floor measured by the ported study.

    python benchmarks/scienceboard/run.py --set agents=always_fail --tag floors
    python benchmarks/scienceboard/rule_change.py

The model agent's outcomes come from `results/scienceboard_bench.json` (the 2026-12-04 bench, run before
the port: its per-task table), the floor's from `results/scienceboard_bench_floors.json` (the same 39
tasks on the real apps, run through `core.study`). The claim is the one `system.study` declares
before a run (there against each floor run; the random-click floor was not run at this scale);
`core.claim.judge` gives the check. Saves results/rule_change_bench.json.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.claim import Claim, judge

RESULTS = Path(__file__).parent / "results"


def per_task(path: Path) -> dict[str, dict[str, float]]:
    """agent -> task -> 1.0 / 0.0, from a saved run's per-task table."""
    table = next(
        t for t in json.loads(path.read_text())["tables"] if t["title"] == "Per task: success by agent"
    )
    return {
        col: {r[0]: float(r[i] == "pass") for r in table["rows"] if r[i] in ("pass", "fail")}
        for i, col in enumerate(table["columns"][3:], 3)
    }


def main() -> None:
    old_path, floors_path = RESULTS / "scienceboard_bench.json", RESULTS / "scienceboard_bench_floors.json"
    old, floors = per_task(old_path), per_task(floors_path)
    if set(old["llm"]) != set(floors["always_fail"]):
        raise SystemExit("the floors run is not on the bench's tasks: rerun it")
    claim = Claim("success", "llm", ("always_fail",), interval="bootstrap", floor=0.0)
    check = judge(claim, "always_fail", old["llm"], floors["always_fail"])
    passed = sorted(t for t, v in floors["always_fail"].items() if v)
    means = f"llm {check.method_value:.3f} vs always-FAIL {check.baseline_value:.3f}"
    print(f"{means}: {check.verdict} ({check.rule})")
    out = {
        **provenance(),
        "inputs": [old_path.name, floors_path.name],
        "tasks": check.n,
        "always_fail_passes": passed,
        "before": json.loads(old_path.read_text())["claim_check"],
        "after": asdict(check),
    }
    (RESULTS / "rule_change_bench.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {RESULTS / 'rule_change_bench.json'}")


if __name__ == "__main__":
    main()
