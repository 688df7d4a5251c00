"""The `pic` system: generate D4RL-style datasets (TD3 behaviour agent), build each dataset's peer
table once, train the offline algorithms over seeds, and report normalized scores, learning curves
and gradient steps/s measured in the same run."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table, resolve_device
from iclr26.core.done import read_done, write_done
from iclr26.core.records import pyplot, save_figure
from iclr26.core.seeding import derive_seed
from iclr26.core.system import preset_table
from iclr26.pic.algorithms import make_algorithm
from iclr26.pic.algorithms.common import state_stats
from iclr26.pic.config import PICSystemConfig, every_algorithm
from iclr26.pic.data import OfflineDataset, d4rl_reference, load_dataset, load_manifest, normalized_score
from iclr26.pic.evaluation import evaluate
from iclr26.pic.generation import generate_datasets
from iclr26.pic.peers import cached_peer_table
from iclr26.pic.train import run_sampler, steps_per_second, train_offline


def _shared(cfg: PICSystemConfig, value: Callable[[Any], str]) -> str:
    """One setting of the algorithms run, as text: their common value, or each distinct one."""
    return "/".join(dict.fromkeys(value(cfg.algorithm_config(a)) for a in cfg.algorithms))


def _width(hidden: tuple[int, ...]) -> str:
    return str(hidden[0]) if len(set(hidden)) == 1 else "x".join(map(str, hidden))


def _references(manifest: dict, env_id: str) -> dict[str, tuple[float, float]]:
    """(random, expert) returns to normalize by: our datasets' own, and D4RL's where it has the task."""
    refs = {}
    own = manifest.get("reference_returns") or {}
    if "random" in own and "expert" in own:
        refs["ours"] = (float(own["random"]), float(own["expert"]))
    d4rl = d4rl_reference(env_id)
    if d4rl is not None:
        refs["d4rl"] = d4rl
    return refs


def run(cfg: PICSystemConfig, ctx: RunContext) -> Report:
    """Generate (or reuse) datasets, then train and evaluate every algorithm on each."""
    device = resolve_device(cfg.device)
    torch.set_num_threads(cfg.threads)
    data_dir = Path(cfg.data_dir) if cfg.data_dir else ctx.out_dir / "data"
    gen = cfg.generation_config()
    with ctx.progress("behaviour TD3 (env steps)", total=gen.total_steps) as advance:
        last = [0]

        def on_progress(step: int, total: int, info: dict) -> None:
            if step > last[0]:
                advance(step - last[0])
                last[0] = step

        paths = generate_datasets(cfg.env_id, data_dir / cfg.env_id, gen, on_progress)

    results: dict[tuple[str, str], list[dict]] = {}
    total = len(cfg.datasets) * len(cfg.algorithms) * cfg.seeds * cfg.steps
    with ctx.progress("offline training (gradient steps)", total=total) as advance:
        for ds_name in cfg.datasets:
            ds: OfflineDataset = load_dataset(paths[ds_name])
            manifest = load_manifest(paths[ds_name])
            refs = _references(manifest, cfg.env_id)
            peers = cached_peer_table(
                ds.observations, paths[ds_name].with_suffix(f".peers_k{cfg.k}.npy"), cfg.k, cfg.peer_method
            )
            mean, std = state_stats(ds.observations)
            for algo_name in cfg.algorithms:
                for s in range(cfg.seed, cfg.seed + cfg.seeds):
                    done_path = ctx.out_dir / "runs" / f"{ds_name}-{algo_name}-s{s}.json"
                    prior = read_done(done_path)
                    if prior is not None:
                        results.setdefault((ds_name, algo_name), []).append(prior)
                        advance(cfg.steps)
                        continue
                    algo_cfg = cfg.algorithm_config(algo_name)
                    algo = make_algorithm(
                        algo_name, ds.obs_dim, ds.act_dim, algo_cfg, seed=s,
                        device=device, state_mean=mean, state_std=std,
                    )  # fmt: skip
                    sampler = run_sampler(algo_name, ds, s, algo.config, peers=peers, device=device)
                    # evaluation episodes seed+i, never shared across seeds
                    eval_seed = derive_seed(s, 1, bits=32) % 2**31

                    def eval_fn(a, eval_seed=eval_seed) -> float:
                        return float(np.mean(evaluate(cfg.env_id, a.act, cfg.eval_episodes, seed=eval_seed)))

                    counted = [0]

                    def on_step(step: int, metrics: dict, counted=counted) -> None:
                        counted[0] += 1
                        advance()

                    history = train_offline(
                        algo,
                        sampler,
                        cfg.steps,
                        eval_fn=eval_fn,
                        eval_every=cfg.eval_every,
                        checkpoint_path=ctx.checkpoint_dir / f"{ds_name}-{algo_name}-s{s}.pt",
                        checkpoint_every=cfg.checkpoint_every,
                        on_step=on_step,
                    )
                    advance(cfg.steps - counted[0])  # steps restored from a checkpoint
                    evals = [
                        (h["step"], h["eval_return"]) for h in history if h.get("eval_return") is not None
                    ]
                    final = evals[-1][1]
                    rec = {
                        "dataset": ds_name,
                        "algorithm": algo_name,
                        "seed": s,
                        "final_return": final,
                        "curve": evals,
                        "steps_per_s": steps_per_second(history),
                        "normalized": {k: normalized_score(final, *v) for k, v in refs.items()},
                        "algorithm_config": dataclasses.asdict(algo.config),  # every default, as run
                    }
                    write_done(done_path, rec)
                    results.setdefault((ds_name, algo_name), []).append(rec)
                    rate = rec["steps_per_s"]
                    ctx.log(f"{ds_name} {algo_name} seed {s}: return {final:.1f}, {rate:.0f} steps/s")
    return _report(cfg, ctx, results)


def _report(cfg: PICSystemConfig, ctx: RunContext, results: dict[tuple[str, str], list[dict]]) -> Report:
    refs = sorted({k for recs in results.values() for r in recs for k in r["normalized"]})
    rows = []
    for (ds_name, algo_name), recs in results.items():
        row = [f"{cfg.env_id}/{ds_name}", algo_name]
        for ref in refs:
            vals = [r["normalized"][ref] for r in recs]
            row += [statistics.fmean(vals), statistics.stdev(vals) if len(vals) > 1 else 0.0]
        row.append(statistics.fmean(r["final_return"] for r in recs))
        rows.append(row)
    cols = ["dataset", "algorithm"]
    for ref in refs:
        cols += [f"normalized ({ref})", "sd"]
    cols.append("return")
    table = Table(
        f"Normalized score after {cfg.steps} gradient steps, mean over {cfg.seeds} seed(s), "
        f"{cfg.eval_episodes} evaluation episodes each",
        cols,
        rows,
        caption="normalized = 100·(R − R_random)/(R_expert − R_random); 'ours' uses the random and expert "
        "policies of our own generated data, 'd4rl' D4RL's reference returns (MuJoCo tasks only).",
    )
    speed_rows = [
        [a, statistics.fmean(r["steps_per_s"] for (d, aa), recs in results.items() if aa == a for r in recs)]
        for a in cfg.algorithms
    ]
    base = next((r[1] for r in speed_rows if r[0] == "td3_bc"), None)
    batch, width = _shared(cfg, lambda c: str(c.batch_size)), _shared(cfg, lambda c: _width(c.hidden))
    speed = Table(
        f"Gradient steps/s on this machine ({cfg.threads} thread(s), batch {batch}, width {width})",
        ["algorithm", "steps/s", "× TD3+BC"],
        [[a, v, v / base if base else float("nan")] for a, v in speed_rows],
    )
    claim = None
    ref = "ours" if "ours" in refs else (refs[0] if refs else None)
    method = next((a for a in ("pic", "epic") if a in cfg.algorithms), None)
    if ref and method and "td3_bc" in cfg.algorithms:

        def per_seed(a: str) -> list[float]:
            return [r["normalized"][ref] for (d, aa), recs in results.items() if aa == a for r in recs]

        claim = ClaimCheck.paired(f"normalized score ({ref}), mean over datasets and seeds", method,
                                  per_seed(method), "td3_bc", per_seed("td3_bc"))  # fmt: skip
    return Report(tables=[table, speed], figures=[_curves(results, cfg, ctx)], claim_check=claim)


def _curves(results: dict[tuple[str, str], list[dict]], cfg: PICSystemConfig, ctx: RunContext) -> str:
    plt = pyplot()

    fig, axes = plt.subplots(1, len(cfg.datasets), figsize=(5 * len(cfg.datasets), 3.6), squeeze=False)
    for ax, ds_name in zip(axes[0], cfg.datasets, strict=True):
        for i, algo_name in enumerate(cfg.algorithms):
            recs = results.get((ds_name, algo_name), [])
            if not recs:
                continue
            steps = [s for s, _ in recs[0]["curve"]]
            ys = np.array([[v for _, v in r["curve"]] for r in recs])
            ax.plot(steps, ys.mean(0), label=algo_name, color=f"C{i}")
            if len(recs) > 1:
                ax.fill_between(steps, ys.min(0), ys.max(0), color=f"C{i}", alpha=0.2)
        ax.set_title(f"{cfg.env_id}/{ds_name}")
        ax.set_xlabel("gradient step")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("evaluation return")
    axes[0][0].legend()
    fig.suptitle("Offline RL on locally generated D4RL-style data (mean, min–max over seeds)")
    return save_figure(fig, ctx.out_dir, "learning_curves")


PRESETS = preset_table(
    bench=PICSystemConfig(),
    smoke=dict(
        generation="smoke",
        datasets=("medium",),
        algorithms=("bc", "td3_bc", "iql", "pic", "epic", "edac"),
        seeds=1,
        steps=40,
        k=5,
        eval_every=20,
        eval_episodes=1,
        checkpoint_every=20,
        **every_algorithm(hidden=(32, 32), batch_size=32, num_critics=3),
    ),
    # the tour: the same comparison (PIC vs TD3+BC and BC) on one Pendulum dataset, 1 seed, shorter
    demo=dict(
        datasets=("medium",),
        algorithms=("bc", "td3_bc", "pic"),
        seeds=1,
        steps=1000,
        eval_every=250,
        eval_episodes=3,
        checkpoint_every=500,
    ),
    # The paper's locomotion setting: D4RL-scale data generated here (hours of CPU per task; run the
    # generation in the background first), 1M gradient steps, GPU if present.
    paper=dict(
        env_id="Hopper-v5",
        generation="mujoco",
        datasets=("medium", "medium-replay"),
        algorithms=("bc", "td3_bc", "iql", "pic", "epic"),
        seeds=3,
        steps=1_000_000,
        gen_dataset_size=0,
        k=10,
        eval_every=5000,
        eval_episodes=10,
        checkpoint_every=10_000,
        device="auto",
        **every_algorithm(hidden=(256, 256), num_critics=10),
    ),
)
SYSTEM = implemented_system("pic", presets=PRESETS, run=run)
