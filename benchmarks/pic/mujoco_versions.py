"""Is the MuJoCo version behind the slow Hopper learning? The same policies under two MuJoCo versions.

    python benchmarks/pic/mujoco_versions.py                                   # the installed MuJoCo
    pip install --target /tmp/mj3 --no-deps mujoco==3.3.7
    PYTHONPATH=/tmp/mj3 python benchmarks/pic/mujoco_versions.py               # an older one

For Hopper-v5 and Walker2d-v5: the zero-action and uniform-random policies' episode lengths and
returns (20 episodes each), and the deterministic return of the first and last snapshots of a
behaviour run (`--data-dir`, its checkpoints), 10 episodes from fixed seeds. Writes
`results/mujoco_<version>.json`; compare two versions' files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.pic.behavior import snapshot_policy
from iclr26.pic.evaluation import evaluate, make_env

TASKS = ("Hopper-v5", "Walker2d-v5")


def fixed_policy_stats(env_id: str, kind: str, episodes: int = 20) -> dict[str, float]:
    """Mean episode length and return of zero or uniform-random actions, episode i from seed i."""
    env = make_env(env_id)
    lengths, returns = [], []
    for ep in range(episodes):
        rng = np.random.default_rng(ep)
        env.reset(seed=ep)
        total, t = 0.0, 0
        for t in range(1000):  # noqa: B007  (t is the episode length after the loop)
            a = (
                np.zeros(env.action_space.shape)
                if kind == "zero"
                else rng.uniform(-1, 1, env.action_space.shape)
            )
            _, r, term, trunc, _ = env.step(a.astype(np.float32))
            total += float(r)
            if term or trunc:
                break
        lengths.append(t + 1)
        returns.append(total)
    env.close()
    return {"mean_length": float(np.mean(lengths)), "mean_return": float(np.mean(returns))}


def main() -> None:
    import mujoco

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path("runs/pic_data_sac"))
    a = ap.parse_args()
    out = {**provenance(), "mujoco": mujoco.__version__, "tasks": {}}
    for env_id in TASKS:
        row = {kind: fixed_policy_stats(env_id, kind) for kind in ("zero", "uniform")}
        ckpt = a.data_dir / env_id / "checkpoint.pt"
        if ckpt.is_file():
            snaps = torch.load(ckpt, weights_only=True)["run"]["snapshots"]
            row["snapshots"] = []
            for snap in (snaps[0], snaps[-1]):
                obs_dim = snap["actor"]["layers.0.weight"].shape[1]
                out_dim = snap["actor"][f"layers.{len(snap['actor']) // 2 - 1}.bias"].shape[-1]
                act_dim = out_dim // 2 if snap.get("kind") == "tanh_gaussian" else out_dim
                hidden = tuple(w.shape[-1] for k, w in snap["actor"].items() if k.endswith("weight"))[:-1]
                returns = evaluate(env_id, snapshot_policy(snap, obs_dim, act_dim, hidden, 0.0, 0), 10, 12345)
                row["snapshots"].append({"step": snap["step"], "mean_return": float(returns.mean())})
        out["tasks"][env_id] = row
        print(mujoco.__version__, env_id, json.dumps(row), flush=True)
    path = Path(__file__).parent / "results" / f"mujoco_{mujoco.__version__}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
