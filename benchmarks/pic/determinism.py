"""Does a behaviour run repeat from its seed? Short SAC runs on Hopper-v5, each in its own process:

    python benchmarks/pic/determinism.py            # 6 runs of 3,000 env steps: minutes

- `straight` and `again`: the same command twice;
- `resumed`: stopped at env step 1,700, rerun, continued from its checkpoint;
- `mkl_avx2`: MKL restricted to its AVX2 code path (what an AVX2-only CPU would run);
- `cbwr_avx2` and `cbwr_avx2_on_avx2`: `MKL_CBWR=AVX2` (generate.py's setting) on this CPU, and on
  top of MKL restricted to AVX2.

Each row: the three evaluation returns (every 1,000 steps) and a hash of the last actor's parameters;
rows with the same hash made bitwise the same run. Saved to `results/pic_determinism.json`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance

RESULTS = Path(__file__).parent / "results" / "pic_determinism.json"
VARIANTS = {  # name: (environment, stop at env step)
    "straight": ({}, 0),
    "again": ({}, 0),
    "resumed": ({}, 1700),
    "mkl_avx2": ({"MKL_ENABLE_INSTRUCTIONS": "AVX2"}, 0),
    "cbwr_avx2": ({"MKL_CBWR": "AVX2"}, 0),
    "cbwr_avx2_on_avx2": ({"MKL_CBWR": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}, 0),
}


class _Stop(Exception):
    """Raised by the progress callback to interrupt a run."""


def child(out: Path, stop_at: int) -> dict:
    """One short SAC run (interrupted at `stop_at` and resumed when > 0); its returns and actor hash."""
    import torch

    from iclr26.pic.behavior import torch_threads, train_behavior
    from iclr26.pic.config import generation_preset
    from iclr26.pic.data import blas_numerics

    cfg = generation_preset(
        "mujoco", agent="sac", total_steps=3000, start_steps=1000, eval_every=1000,
        checkpoint_every=500, eval_episodes=2,
    )  # fmt: skip
    stopped = {"done": stop_at == 0}

    def progress(step: int, total: int, info: dict) -> None:
        if not stopped["done"] and step >= stop_at:
            stopped["done"] = True
            raise _Stop

    with torch_threads(cfg.num_threads):
        threads = torch.get_num_threads()  # what the run used (the block restores the previous count)
        try:
            run = train_behavior("Hopper-v5", out, cfg, progress)[0]
        except _Stop:
            run = train_behavior("Hopper-v5", out, cfg, progress)[0]
    actor = run.snapshots[-1]["actor"]
    digest = hashlib.sha256(b"".join(actor[k].contiguous().numpy().tobytes() for k in sorted(actor)))
    return {
        "eval_returns": [s["eval_return"] for s in run.snapshots],
        "actor_sha256": digest.hexdigest()[:16],
        "numerics": blas_numerics(),
        "mkl_enable_instructions": os.environ.get("MKL_ENABLE_INSTRUCTIONS"),
        "torch_threads": threads,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("OUT", "STOP_AT"), help=argparse.SUPPRESS)
    ap.add_argument("--results", type=Path, default=RESULTS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(Path(a.child[0]), int(a.child[1]))))
        return
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (extra, stop_at) in VARIANTS.items():
            env = {k: v for k, v in os.environ.items() if not k.startswith("MKL_")} | extra
            done = subprocess.run(
                [sys.executable, __file__, "--child", f"{tmp}/{name}", str(stop_at)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            rows[name] = json.loads(done.stdout.strip().splitlines()[-1]) | {"stop_at": stop_at}
            r = rows[name]
            print(
                f"{name:18s} {r['actor_sha256']}  eval {[round(x, 1) for x in r['eval_returns']]}", flush=True
            )
    same = {k: rows[k]["actor_sha256"] == rows["straight"]["actor_sha256"] for k in rows}
    same["cbwr_avx2_on_avx2 == cbwr_avx2"] = (
        rows["cbwr_avx2_on_avx2"]["actor_sha256"] == rows["cbwr_avx2"]["actor_sha256"]
    )
    print("bitwise equal to straight:", same)
    a.results.write_text(
        json.dumps({**provenance(), "runs": rows, "equal_to_straight": same}, indent=1) + "\n"
    )
    print(f"saved {a.results}")


if __name__ == "__main__":
    main()
