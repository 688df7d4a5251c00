"""Cost of oracle tiered FCI (the baseline the paper's query-specific discovery is measured
against): CI tests run and wall time on one random tiered graph per size (5 tiers, expected
degree 2, n/10 latents).

    python benchmarks/tiered_pruning/fci_cost.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.tiered_pruning import OracleCITest, random_tiered_dag, tiered_fci

SIZES = (20, 50, 100)


def main() -> None:
    rows = []
    for n in SIZES:
        g = random_tiered_dag(n, n_tiers=5, expected_degree=2.0, n_latents=n // 10, seed=0)
        res = tiered_fci(OracleCITest(g.dag, g.observed), g.tiers)
        rows.append(
            {"nodes": n, "tests": res.n_tests, "by_stage": res.tests_by_stage, "seconds": res.seconds}
        )
        print(rows[-1], flush=True)
    path = Path(__file__).parent / "results" / "fci_cost.json"
    path.write_text(json.dumps({**provenance(), "rows": rows}, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
