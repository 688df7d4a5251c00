"""D4RL's dataset recipe on a locally trained behaviour agent (Fu et al. 2020, Sec. 5).

D4RL built its locomotion datasets from one online run: `random` (a uniform-random policy), `expert`
(the final/best policy), `medium` (a policy at about a third of expert performance), `medium-replay`
(the replay buffer until that policy) and `medium-expert` (medium ∪ expert). D4RL used SAC; the agent
here is SAC or TD3 (`GenerationConfig.agent`, `behavior.py`), and every manifest names it. A SAC
snapshot collects by sampling its own policy (as D4RL's did); a TD3 snapshot adds Gaussian noise.

`generate_datasets` trains (or resumes) the behaviour agent, picks the snapshots, and writes each
dataset with a JSON manifest beside it; finished datasets are kept and never recomputed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.seeding import derive_seed
from iclr26.pic.behavior import (
    BehaviorRun,
    ProgressCallback,
    check_same_run,
    snapshot_policy,
    torch_threads,
    train_behavior,
    uniform_policy,
)
from iclr26.pic.config import DATASET_NAMES, GenerationConfig
from iclr26.pic.data import (
    OfflineDataset,
    blas_numerics,
    d4rl_reference,
    library_versions,
    load_dataset,
    manifest_path,
    save_dataset,
)
from iclr26.pic.evaluation import evaluate, make_env
from iclr26.pic.replay import ReplayBuffer, collect


def generate_datasets(
    env_id: str,
    out_dir: str | os.PathLike,
    cfg: GenerationConfig | None = None,
    on_progress: ProgressCallback | None = None,
) -> dict[str, Path]:
    """D4RL's recipe on `env_id`: train the behaviour agent online, then write the five datasets of
    `DATASET_NAMES`.

    Returns the `.npz` path of each dataset (a JSON manifest lies beside each). Resumes from
    `out_dir/checkpoint.pt`; returns at once when every dataset and `out_dir/generation.json` exist.
    `on_progress(step, total_steps, info)` is called after every training step (info: phase, losses,
    eval_return, episode_return) and after each dataset is written (info: phase="dataset", name, path).
    """
    cfg = GenerationConfig() if cfg is None else cfg
    if not isinstance(cfg, GenerationConfig):
        raise TypeError(f"cfg must be a GenerationConfig, got {type(cfg).__name__}")
    out = Path(out_dir)
    paths = {name: out / f"{name}.npz" for name in DATASET_NAMES}
    summary_path = out / "generation.json"
    if summary_path.is_file() and all(p.is_file() and manifest_path(p).is_file() for p in paths.values()):
        check_same_run(json.loads(summary_path.read_text()), env_id, cfg, summary_path)
        return paths
    make_env(env_id).close()  # fail early on an unknown env id, before creating out_dir
    out.mkdir(parents=True, exist_ok=True)
    with torch_threads(cfg.num_threads):
        run, buffer, obs_dim, act_dim = train_behavior(env_id, out, cfg, on_progress)
        summary = _write_datasets(env_id, cfg, run, buffer, obs_dim, act_dim, paths, on_progress)
    write_text_atomic(summary_path, json.dumps(summary, indent=2))  # last: its presence means complete
    return paths


def medium_snapshot(eval_returns: list[float], threshold: float) -> tuple[int, str]:
    """D4RL's medium, "a policy trained to ~1/3 of expert performance", stopped early: of the snapshots
    up to the first whose eval return reaches `threshold` (random + fraction·(best − random)), the one
    closest to it (the earlier on a tie). A curve that jumps past the threshold (SAC on Hopper went
    from 720 to 2,902 in 20k steps) would otherwise make "medium" near-expert. Returns the index and
    the rule in words."""
    reached = [i for i, r in enumerate(eval_returns) if r >= threshold]
    if not reached:  # the run never beat the random policy: no snapshot is "a third of the way"
        i = min(range(len(eval_returns)), key=lambda j: (abs(eval_returns[j] - threshold), j))
        return i, f"no snapshot reached {threshold:.4g} (best <= random); took the closest"
    i = min(range(reached[0] + 1), key=lambda j: (abs(eval_returns[j] - threshold), j))
    return i, f"closest to {threshold:.4g} of the snapshots up to the first that reaches it (#{reached[0]})"


def _write_datasets(
    env_id: str,
    cfg: GenerationConfig,
    run: BehaviorRun,
    buffer: ReplayBuffer,
    obs_dim: int,
    act_dim: int,
    paths: dict[str, Path],
    on_progress: ProgressCallback | None,
) -> dict[str, Any]:
    """Choose the behaviour policies from the snapshots and write each missing dataset."""
    snaps = run.snapshots
    best = max(range(len(snaps)), key=lambda i: (snaps[i]["eval_return"], -i))
    # reference returns on held-out seeds (not the ones the snapshots were selected on)
    ref_seed = derive_seed(cfg.seed, 0, "reference")
    random_returns = evaluate(
        env_id,
        uniform_policy(act_dim, derive_seed(cfg.seed, 0, "reference-random")),
        cfg.eval_episodes,
        ref_seed,
    )
    hidden, agent = cfg.agent_config().hidden, cfg.agent.upper()
    best_policy = snapshot_policy(snaps[best], obs_dim, act_dim, hidden, 0.0, 0)
    expert_returns = evaluate(env_id, best_policy, cfg.eval_episodes, ref_seed)
    random_return, expert_return = float(random_returns.mean()), float(expert_returns.mean())
    threshold = random_return + cfg.medium_fraction * (snaps[best]["eval_return"] - random_return)
    medium, medium_rule = medium_snapshot([sn["eval_return"] for sn in snaps], threshold)

    def behaviour(i: int, noise: float, role: str) -> dict[str, Any]:
        if cfg.agent == "sac":
            policy, noise_info = f"SAC snapshot ({role}), sampling its tanh-Gaussian policy", None
        else:
            policy, noise_info = (
                f"TD3 snapshot ({role}) + N(0, {noise}²) action noise, clipped to [-1, 1]",
                noise,
            )
        return {
            "policy": policy,
            "step": snaps[i]["step"],
            "eval_return": snaps[i]["eval_return"],
            "eval_episodes": cfg.eval_episodes,
            "action_noise": noise_info,
        }

    replay_stop = snaps[medium]["step"]
    replay_start = max(0, replay_stop - cfg.dataset_size)
    common = {
        "generator": f"iclr26.pic.generation.generate_datasets (online {agent}; D4RL used SAC)",
        "agent": cfg.agent,
        "reference_returns": {
            "random": random_return,
            "expert": expert_return,
            "episodes": cfg.eval_episodes,
            "random_policy": "uniform in [-1, 1]",
            "expert_policy": f"best {agent} snapshot (step {snaps[best]['step']}), deterministic, "
            "held-out seeds",
            "d4rl": d4rl_reference(env_id),
        },
        "config": cfg.identity(),
        "numerics": blas_numerics(),
    }
    medium_info = behaviour(medium, cfg.medium_noise, "medium") | {
        "rule": medium_rule,
        "threshold": threshold,
    }
    specs: dict[str, dict[str, Any]] = {
        "random": {
            "behavior": {"policy": "uniform random in [-1, 1]", "step": 0, "eval_return": random_return}
        },
        "medium": {"behavior": medium_info},
        "medium-replay": {
            "behavior": {
                "policy": f"{agent}'s online replay buffer (random warm-up, exploration) to medium",
                "step": replay_stop,
                "eval_return": snaps[medium]["eval_return"],
                "transitions": [replay_start, replay_stop],
                "rule": "all of it"
                if replay_start == 0
                else f"the {cfg.dataset_size} most recent (dataset_size)",
            }
        },
        "expert": {"behavior": behaviour(best, cfg.expert_noise, "best eval return")},
        "medium-expert": {
            "behavior": {
                "parts": ["medium", "expert"],
                "medium": medium_info,
                "expert": behaviour(best, cfg.expert_noise, "best eval return"),
            }
        },
    }

    def build(name: str) -> OfflineDataset:
        full = f"{env_id}/{name}"
        if name == "random":
            act = uniform_policy(act_dim, derive_seed(cfg.seed, 0, "collect-random"))
            return collect(
                env_id, act, cfg.dataset_size, derive_seed(cfg.seed, 0, "collect-random-episode"), full
            )
        if name in ("medium", "expert"):
            i, noise = (medium, cfg.medium_noise) if name == "medium" else (best, cfg.expert_noise)
            seed = derive_seed(cfg.seed, 0, f"collect-{name}")
            act = snapshot_policy(snaps[i], obs_dim, act_dim, hidden, noise, seed, stochastic=True)
            return collect(
                env_id, act, cfg.dataset_size, derive_seed(cfg.seed, 0, f"collect-{name}-episode"), full
            )
        if name == "medium-replay":
            return buffer.dataset(replay_start, replay_stop, env_id, full)
        return load_dataset(paths["medium"]).concat(load_dataset(paths["expert"]), full)

    datasets: dict[str, Any] = {}
    for name in DATASET_NAMES:
        path = paths[name]
        if not (path.is_file() and manifest_path(path).is_file()):
            ds = build(name)
            returns = ds.episode_returns()
            stats = {"mean_episode_return": float(returns.mean())}
            save_dataset(ds, path, seed=cfg.seed, manifest=common | specs[name] | {"dataset": name} | stats)
            if on_progress is not None:
                on_progress(
                    cfg.total_steps, cfg.total_steps, {"phase": "dataset", "name": name, "path": str(path)}
                )
        datasets[name] = path.name
    return {
        "env_id": env_id,
        "config": cfg.identity(),
        "versions": library_versions(),
        "numerics": common["numerics"],
        "train_seconds": run.train_seconds,
        "snapshots": [{"step": s["step"], "eval_return": s["eval_return"]} for s in snaps],
        "best_snapshot": best,
        "medium_snapshot": medium,
        "medium_rule": medium_rule,
        "reference_returns": common["reference_returns"],
        "training_episode_returns": run.episode_returns,
        "datasets": datasets,
    }
