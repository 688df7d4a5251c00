"""The `pic` system: generate D4RL-style datasets (TD3 behaviour agent), build each dataset's peer
table once, then run the study (`core.study`): every offline algorithm and two floors (random actions,
an untrained actor) over dataset × seed, the claim PIC vs TD3+BC with the one claim rule; report
normalized scores, learning curves and gradient steps/s measured in the same run."""

from __future__ import annotations

import dataclasses
import functools
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table, resolve_device
from iclr26.core.claim import Claim
from iclr26.core.records import pyplot, save_figure
from iclr26.core.seeding import derive_seed
from iclr26.core.study import Arm, Role, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.pic.algorithms import make_algorithm
from iclr26.pic.algorithms.common import state_stats
from iclr26.pic.config import PICSystemConfig, every_algorithm
from iclr26.pic.data import (
    OfflineDataset,
    d4rl_reference,
    jsonable,
    load_dataset,
    load_manifest,
    normalized_score,
)
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


FLOORS = (
    Arm("random", "floor", floor="random action"),
    Arm("untrained", "floor", floor="untrained"),
)
"""What any row is judged against: uniform random actions (normalized score ≈ 0 by construction on our
data: the same policy made R_random) and the method's networks at initialization, no gradient step."""


def _role(name: str) -> Role:
    return "method" if name in ("pic", "epic") else "baseline"


Refs = dict[str, dict[str, tuple[float, float]]]  # dataset -> reference name -> (random, expert) returns


def study(cfg: PICSystemConfig, paths: dict[str, Path], refs_by_dataset: Refs) -> Study:
    """pic as a study: every algorithm (PIC and EPIC the methods, the rest baselines) and the floors,
    over dataset × seed; the claim is the method against TD3+BC on the normalized score, with the random
    floor as its floor (both at or below random actions on every unit: uninformative)."""
    refs = sorted({r for refs in refs_by_dataset.values() for r in refs})
    arms = [Arm(a, _role(a)) for a in cfg.algorithms] + list(FLOORS)
    units = [
        Unit(f"{d}/s{s}", s, {"dataset": d})
        for d in cfg.datasets
        for s in range(cfg.seed, cfg.seed + cfg.seeds)
    ]
    ref = "ours" if "ours" in refs else (refs[0] if refs else None)
    method = next((a for a in ("pic", "epic") if a in cfg.algorithms), None)
    claims = []
    if ref and method and "td3_bc" in cfg.algorithms:
        label = f"normalized score ({ref}), mean over datasets and seeds"
        claims.append(Claim(f"normalized_{ref}", method, ("td3_bc",), label=label, floor_arm="random"))
    metrics = [f"normalized_{r}" for r in refs] + ["final_return"]
    measure = functools.partial(_measure, cfg, paths, refs_by_dataset)
    return Study("pic", arms, units, measure, claims=claims, metrics=metrics, config=cfg, seed=cfg.seed,
                 views=functools.partial(_views, cfg))  # fmt: skip


def run(cfg: PICSystemConfig, ctx: RunContext) -> Report:
    """Generate (or reuse) datasets and their peer tables, then run the study: every algorithm and floor
    on each dataset × seed (`core.study.run_study`: resumable from `cells.jsonl`, `--jobs` at once)."""
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
    refs: Refs = {}
    for ds_name in cfg.datasets:  # the peer tables are built here once, before any cell loads them
        ds = load_dataset(paths[ds_name])
        cached_peer_table(ds.observations, _peers_path(cfg, paths[ds_name]), cfg.k, cfg.peer_method)
        refs[ds_name] = _references(load_manifest(paths[ds_name]), cfg.env_id)
    return run_study(study(cfg, paths, refs), ctx).report


def _peers_path(cfg: PICSystemConfig, data_path: Path) -> Path:
    return data_path.with_suffix(f".peers_k{cfg.k}.npy")


def _measure(
    cfg: PICSystemConfig, paths: dict[str, Path], refs_by_dataset: Refs, arm: Arm, unit: Unit, ctx: RunContext
) -> dict[str, Any]:
    """One cell: train `arm` (an algorithm) on the unit's dataset with the unit's seed and evaluate it, or
    evaluate a floor policy there."""
    torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    ds_name, s = unit.params["dataset"], unit.seed
    ds: OfflineDataset = load_dataset(paths[ds_name])
    refs = refs_by_dataset[ds_name]
    eval_seed = derive_seed(s, 1, bits=32) % 2**31  # evaluation episodes seed+i, never shared across seeds
    mean, std = state_stats(ds.observations)

    def score(final: float) -> dict[str, Any]:
        return {"final_return": final} | {
            f"normalized_{k}": normalized_score(final, *v) for k, v in refs.items()
        }

    if arm.role == "floor":
        if arm.name == "random":
            rng = np.random.default_rng(derive_seed(s, "random floor"))
            act = lambda obs: rng.uniform(-1.0, 1.0, ds.act_dim)  # noqa: E731
        else:
            name = next((a for a in ("pic", "epic") if a in cfg.algorithms), cfg.algorithms[0])
            config = cfg.algorithm_config(name)
            untrained = make_algorithm(
                name, ds.obs_dim, ds.act_dim, config, seed=s, device=device, state_mean=mean, state_std=std
            )
            act = untrained.act
        return score(float(np.mean(evaluate(cfg.env_id, act, cfg.eval_episodes, seed=eval_seed))))
    peers = cached_peer_table(ds.observations, _peers_path(cfg, paths[ds_name]), cfg.k, cfg.peer_method)
    algo_cfg = cfg.algorithm_config(arm.name)
    algo = make_algorithm(arm.name, ds.obs_dim, ds.act_dim, algo_cfg, seed=s, device=device,
                          state_mean=mean, state_std=std)  # fmt: skip
    sampler = run_sampler(arm.name, ds, s, algo.config, peers=peers, device=device)

    def eval_fn(a) -> float:
        return float(np.mean(evaluate(cfg.env_id, a.act, cfg.eval_episodes, seed=eval_seed)))

    history = train_offline(
        algo,
        sampler,
        cfg.steps,
        eval_fn=eval_fn,
        eval_every=cfg.eval_every,
        checkpoint_path=ctx.checkpoint_dir / f"{ds_name}-{arm.name}-s{s}.pt",
        checkpoint_every=cfg.checkpoint_every,
    )
    evals = [(h["step"], h["eval_return"]) for h in history if h.get("eval_return") is not None]
    return score(evals[-1][1]) | {
        "steps_per_s": steps_per_second(history),
        "curve": evals,
        "algorithm_config": jsonable(dataclasses.asdict(algo.config)),  # every default, as run
    }


def _views(cfg: PICSystemConfig, result: StudyResult, ctx: RunContext) -> Report:
    """pic's own tables and figure, from the cells: the normalized-score table (floors below the
    algorithms), the throughput table and the learning curves."""
    results: dict[tuple[str, str], list[dict]] = {}
    for arm in result.study.arms:
        for cell in result.records(arm.name):
            unit = next(u for u in result.study.units if u.key == cell.unit)
            m = cell.metrics
            normalized = {
                k.removeprefix("normalized_"): v for k, v in m.items() if k.startswith("normalized_")
            }
            rec = {"dataset": unit.params["dataset"], "algorithm": arm.name, "seed": cell.seed,
                   "final_return": m["final_return"], "normalized": normalized, "curve": m.get("curve", []),
                   "steps_per_s": m.get("steps_per_s")}  # fmt: skip
            results.setdefault((unit.params["dataset"], arm.name), []).append(rec)
    order = {d: i for i, d in enumerate(cfg.datasets)}
    trained = {k: v for k, v in results.items() if k[1] in cfg.algorithms}
    trained = dict(sorted(trained.items(), key=lambda kv: (order[kv[0][0]], cfg.algorithms.index(kv[0][1]))))
    floor_names = [f.name for f in FLOORS]
    floors = {k: v for k, v in results.items() if k[1] not in cfg.algorithms}
    floors = dict(sorted(floors.items(), key=lambda kv: (order[kv[0][0]], floor_names.index(kv[0][1]))))
    return _report(cfg, ctx, trained, floors)


def _report(
    cfg: PICSystemConfig,
    ctx: RunContext,
    results: dict[tuple[str, str], list[dict]],
    floors: dict[tuple[str, str], list[dict]],
) -> Report:
    refs = sorted({k for recs in results.values() for r in recs for k in r["normalized"]})
    rows = []
    for (ds_name, algo_name), recs in [*results.items(), *floors.items()]:
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
        "policies of our own generated data, 'd4rl' D4RL's reference returns (MuJoCo tasks only). Floors, "
        "below the algorithms: 'random' (uniform random actions) and 'untrained' (the method's networks "
        "at initialization, no gradient step).",
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
    return Report(tables=[table, speed], figures=[_curves(results, cfg, ctx)])


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
