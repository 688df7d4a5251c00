"""Generate the locomotion datasets (the `mujoco` generation preset) into a shared data dir, resumably.

    python benchmarks/pic/generate.py HalfCheetah-v5 Walker2d-v5      # runs/pic_data/<env>/
    python benchmarks/pic/generate.py Hopper-v5 --seed 1 --data-dir runs/pic_data_seed1

Progress (env step, seconds, latest evaluation return) is printed every 5,000 env steps. An
interrupted run continues from `<data dir>/<env>/checkpoint.pt` when the same command is rerun.
The locomotion driver (`locomotion.py`) then reuses these datasets when given the same seed.
"""

from __future__ import annotations

import argparse
import time

from iclr26.pic.behavior import generate_datasets, preset


def _progress(env_id: str):
    """A progress callback that prints every 5,000 env steps and each written dataset."""
    t0, last = time.time(), {"eval": float("nan")}

    def progress(step: int, total: int, info: dict) -> None:
        if info.get("eval_return") is not None:
            last["eval"] = info["eval_return"]
        took = f"{env_id} {time.time() - t0:.0f}s"
        if info.get("phase") == "dataset":
            print(f"{took} wrote {info['name']} -> {info['path']}", flush=True)
        elif step % 5000 == 0:
            print(f"{took} step {step}/{total} eval {last['eval']:.1f}", flush=True)

    return progress


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("envs", nargs="+")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", default="runs/pic_data")
    ap.add_argument("--total-steps", type=int, default=0, help="0: the preset's (300k)")
    a = ap.parse_args()
    for env_id in a.envs:
        over = {"seed": a.seed} | ({"total_steps": a.total_steps} if a.total_steps else {})
        t0 = time.time()
        paths = generate_datasets(
            env_id, f"{a.data_dir}/{env_id}", preset("mujoco", **over), _progress(env_id)
        )
        print(f"{env_id} done in {time.time() - t0:.0f}s: {sorted(paths)}", flush=True)


if __name__ == "__main__":
    main()
