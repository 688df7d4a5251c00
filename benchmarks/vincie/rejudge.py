"""The saved bench run (`results/vincie_bench.json`, before the port to `core.study`) judged by the
one claim rule: vincie against pairwise on success at the last turn, copy-the-input as the floor.

The old file keeps only each arm's success rate over the sessions, not the sessions themselves. A
rate of 0% (or 100%) over 0/1 values fixes every session's value, so the per-session values, and the
rule's verdict, follow from the file exactly; any other rate cannot be split into sessions and this
script refuses it (rerun the bench instead).

    python benchmarks/vincie/rejudge.py     # writes results/vincie_bench_rejudged.json
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


def sessions(rate_percent: float, n: int) -> list[float]:
    """The 0/1 success of each of `n` sessions, when a rate fixes them (0% or 100%)."""
    if rate_percent not in (0.0, 100.0):
        raise SystemExit(f"a rate of {rate_percent}% does not fix each session's value; rerun the bench")
    return [rate_percent / 100] * n


def main() -> None:
    old = json.loads((RESULTS / "vincie_bench.json").read_text())
    success = next(t for t in old["tables"] if t["title"].startswith("Success at turn k"))
    n, turns = old["config"]["bench_sessions"], old["config"]["turns"]
    last = success["columns"].index(f"turn {turns}")
    rates = {row[0]: row[last] for row in success["rows"]}
    per_session = {arm: dict(enumerate(sessions(rates[arm], n))) for arm in ("vincie", "pairwise", "copy")}
    claim = Claim(f"success_t{turns}", "vincie", ("pairwise",), interval="bootstrap", floor_arm="copy",
                  label=f"success at turn {turns}")  # fmt: skip
    check = judge(claim, "pairwise", per_session["vincie"], per_session["pairwise"], per_session["copy"])
    out = {
        **provenance(),
        "source": "benchmarks/vincie/results/vincie_bench.json",
        "source_date": old["date"],
        "old_claim_check": old["claim_check"],
        "success_at_last_turn_percent": {arm: rates[arm] for arm in per_session},
        "sessions": n,
        "claim_check": asdict(check),
    }
    (RESULTS / "vincie_bench_rejudged.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"{check.metric}: vincie {check.method_value} vs pairwise {check.baseline_value} over {check.n} "
          f"sessions, copy floor: {check.verdict} ({check.rule})")  # fmt: skip


if __name__ == "__main__":
    main()
