"""The generated houses of the bench's split: rooms, floor area and objects per house (the README's
"Scenes" line). Builds (or resumes) the bench split with its defaults and counts.

    python benchmarks/conavbench/scene_stats.py [--data runs/conavbench_data]

Saves results/scene_stats.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.conavbench.config import NavConfig
from iclr26.conavbench.splits import build_split


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("runs/conavbench_data"))
    args = ap.parse_args()
    cfg = NavConfig()
    split = build_split(cfg.seed, n_single=cfg.n_single, n_collab=cfg.n_collab, n_scenes=cfg.n_scenes,
                        jobs=cfg.jobs, out=args.data)  # fmt: skip
    rows = [
        {"scene": s.id, "rooms": len(s.rooms), "objects": len(s.objects),
         "area_m2": round(sum((r.x1 - r.x0) * (r.y1 - r.y0) for r in s.rooms), 1)}
        for s in split.scenes.values()
    ]  # fmt: skip
    summary = {k: [min(r[k] for r in rows), max(r[k] for r in rows)] for k in ("rooms", "area_m2", "objects")}
    out = Path(__file__).parent / "results" / "scene_stats.json"
    payload = {**provenance(), "scenes": len(rows), "range": summary, "area": "sum of the room rectangles"}
    out.write_text(json.dumps(payload | {"per_scene": rows}, indent=1) + "\n")
    print(json.dumps(payload, indent=1))


if __name__ == "__main__":
    main()
