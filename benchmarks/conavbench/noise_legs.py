"""Why collaboration can raise step-level SR: under noisy actuation with dead reckoning, a leg's
success falls with its length. The oracle's waypoint follower runs every step-protocol leg of a
split at several noise settings; success by leg length, and greedy single vs collaborative
step-level SR on the collaborative episodes.

    python benchmarks/conavbench/noise_legs.py

Saves results/noise_legs.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.conavbench import agents as A
from iclr26.conavbench.sim import SimConfig
from iclr26.conavbench.splits import build_split

SETTINGS = ((0.0, 0.0), (0.15, 0.0), (0.15, 2.0), (0.15, 6.0))
"""(forward noise s.d. as a share of each 0.25 m step, turn noise s.d. in degrees)."""
BINS = ((0, 3), (3, 6), (6, 9), (9, 12), (12, 1e9))


def main() -> None:
    split = build_split(0, n_single=120, n_collab=120, n_scenes=12, jobs=2)
    indices = A.index_scenes(split.scenes)
    collab = [e for e in split.all if e.kind == "collaborative"]
    rows = []
    for fwd, turn in SETTINGS:
        cfg = A.EvalConfig(sim=SimConfig(forward_noise=fwd, turn_noise=turn))
        ev = A.evaluate(split.all, indices, A.OraclePolicy(), protocol="step", config=cfg)
        legs = [(r.subtask_gt_lengths[0], r.subtask_successes[0]) for r in ev.records]
        by_bin = {}
        for lo, hi in BINS:
            hits = [ok for length, ok in legs if lo <= length < hi]
            label = f"{lo}-{hi} m" if hi < 1e9 else f">= {lo} m"
            by_bin[label] = {
                "legs": len(hits),
                "success": round(100 * sum(hits) / len(hits), 1) if hits else None,
            }
        single = A.evaluate(collab, indices, A.GreedySinglePolicy(), protocol="step", config=cfg).metrics
        together = A.evaluate(collab, indices, A.CollaborativePlanner(), protocol="step", config=cfg).metrics
        rows.append({"forward_noise": fwd, "turn_noise_deg": turn, "legs": len(legs), "by_length": by_bin,
                     "step_sr_greedy": round(100 * single["step_sr"], 1),
                     "step_sr_collaborative": round(100 * together["step_sr"], 1)})  # fmt: skip
        print(rows[-1], flush=True)
    out = Path(__file__).parent / "results" / "noise_legs.json"
    out.write_text(json.dumps({**provenance(), "episodes": len(split.all), "rows": rows}, indent=1) + "\n")
    print(f"saved {out}")


if __name__ == "__main__":
    main()
