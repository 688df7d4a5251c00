"""The `pic` system: generate D4RL-style datasets (TD3 behaviour agent), build each dataset's peer
table once, train the offline algorithms over seeds, and report normalized scores, learning curves
and gradient steps/s measured in the same run."""

from __future__ import annotations

import dataclasses
import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.core import ClaimCheck, Report, RunContext, Table, resolve_device
from iclr26.core.records import pyplot, save_figure
from iclr26.pic.algorithms import ALGORITHMS, BatchSampler, make_algorithm
from iclr26.pic.algorithms.common import return_range_reward_scale, state_stats
from iclr26.pic.behavior import DATASET_NAMES, GENERATION_PRESETS, generate_datasets, preset
from iclr26.pic.data import OfflineDataset, d4rl_reference, load_dataset, load_manifest, normalized_score
from iclr26.pic.evaluation import evaluate
from iclr26.pic.peers import METHODS, cached_peer_table
from iclr26.pic.train import steps_per_second, train_offline


@dataclass(frozen=True)
class PICSystemConfig:
    """Everything the run uses; defaults are the `demo` preset (Pendulum-v1, CPU)."""

    env_id: str = "Pendulum-v1"
    generation: str = "pendulum"  # a `behavior.GENERATION_PRESETS` name
    gen_total_steps: int = 0  # 0: the generation preset's; else online TD3 env steps
    gen_dataset_size: int = 20_000  # 0: the preset's; else transitions per dataset
    data_dir: str = ""  # "": <run dir>/data; a path shares the generated datasets between runs
    datasets: tuple[str, ...] = ("medium", "medium-replay")
    algorithms: tuple[str, ...] = ("bc", "td3_bc", "pic", "epic")
    seeds: int = 2
    seed: int = 0  # first seed (data generation uses it too)
    steps: int = 3000  # gradient steps per (algorithm, dataset, seed)
    batch_size: int = 256
    hidden: int = 64  # width of both hidden layers of every network (the paper: 256)
    k: int = 10  # peers per state
    peer_method: str = "auto"
    delta: float = 1.0  # δ of PIC/EPIC's peer constraint
    num_critics: int = 5  # EPIC's ensemble size (the paper: 5–20; 10 on MuJoCo)
    eval_every: int = 500
    eval_episodes: int = 5
    checkpoint_every: int = 1000
    threads: int = 1  # torch CPU threads (1 was fastest on 2 cores for 256-wide MLPs)
    device: str = "cpu"
    # more algorithm-config fields, applied to every algorithm whose config has them; from the CLI as
    # JSON: --set 'extra={"score_dtype": "float32", "rerank_top": 0}'
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.generation not in GENERATION_PRESETS:
            raise ValueError(
                f"generation must be one of {sorted(GENERATION_PRESETS)}, got {self.generation!r}"
            )
        bad = [d for d in self.datasets if d not in DATASET_NAMES]
        if bad or not self.datasets:
            raise ValueError(f"datasets: unknown {bad}; choose from {DATASET_NAMES}")
        bad = [a for a in self.algorithms if a not in ALGORITHMS]
        if bad or not self.algorithms:
            raise ValueError(f"algorithms: unknown {bad}; choose from {sorted(ALGORITHMS)}")
        if self.peer_method not in METHODS:
            raise ValueError(f"peer_method must be one of {METHODS}, got {self.peer_method!r}")
        for name in ("seeds", "steps", "batch_size", "hidden", "k", "eval_every", "eval_episodes", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.gen_total_steps < 0 or self.gen_dataset_size < 0:
            raise ValueError("gen_total_steps and gen_dataset_size must be >= 0 (0: the preset's)")
        known = {f.name for a in self.algorithms for f in dataclasses.fields(ALGORITHMS[a].config_cls)}
        unknown = sorted(set(self.extra) - known)
        if unknown:
            raise ValueError(
                f"extra: {unknown} are not config fields of any of {list(self.algorithms)}; "
                f"valid: {sorted(known)}"
            )


def _generation_config(cfg: PICSystemConfig):
    over = {"seed": cfg.seed}
    if cfg.gen_total_steps:
        over["total_steps"] = cfg.gen_total_steps
    if cfg.gen_dataset_size:
        over["dataset_size"] = cfg.gen_dataset_size
    return preset(cfg.generation, **over)


def _algo_overrides(name: str, cfg: PICSystemConfig) -> dict:
    """The run's shared settings for one algorithm: only the fields its config has; δ only where peers
    are used (EDAC shares EPIC's config but keeps δ = 0)."""
    spec = ALGORITHMS[name]
    fields = {f.name for f in dataclasses.fields(spec.config_cls)}
    wanted = {"hidden": (cfg.hidden, cfg.hidden), "num_critics": cfg.num_critics}
    if spec.uses_peers:
        wanted["delta"] = cfg.delta
    wanted |= cfg.extra
    return {k: v for k, v in wanted.items() if k in fields}


def _stream_seed(seed: int, stream: int) -> int:
    """Independent seeds per purpose (0: sampler, 1: evaluation) derived from a run's seed."""
    return int(np.random.SeedSequence([seed, stream]).generate_state(1)[0])


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
    gen = _generation_config(cfg)
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
                    if done_path.is_file():
                        results.setdefault((ds_name, algo_name), []).append(json.loads(done_path.read_text()))
                        advance(cfg.steps)
                        continue
                    algo = make_algorithm(
                        algo_name, ds.obs_dim, ds.act_dim, _algo_overrides(algo_name, cfg), seed=s,
                        device=device, state_mean=mean, state_std=std,
                    )  # fmt: skip
                    dones = ds.terminals.astype(np.float32)  # time-limit cuts still bootstrap
                    # IQL's β assumes rewards scaled by 1000 / (return range) (Kostrikov et al. 2021)
                    scale = (
                        return_range_reward_scale(ds.rewards, ds.episode_ends())
                        if algo_name == "iql"
                        else 1.0
                    )
                    sampler = BatchSampler(
                        ds.observations, ds.actions, ds.rewards, ds.next_observations, dones,
                        peers=peers if ALGORITHMS[algo_name].uses_peers else None,
                        batch_size=cfg.batch_size, seed=_stream_seed(s, 0), device=device, reward_scale=scale,
                    )  # fmt: skip
                    eval_seed = (
                        _stream_seed(s, 1) % 2**31
                    )  # evaluation episodes seed+i never shared across seeds

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
                    done_path.parent.mkdir(parents=True, exist_ok=True)
                    done_path.write_text(json.dumps(rec))
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
    speed = Table(
        f"Gradient steps/s on this machine ({cfg.threads} thread(s), batch {cfg.batch_size}, "
        f"width {cfg.hidden})",
        ["algorithm", "steps/s", "× TD3+BC"],
        [[a, v, v / base if base else float("nan")] for a, v in speed_rows],
    )
    claim = None
    ref = "ours" if "ours" in refs else (refs[0] if refs else None)
    method = next((a for a in ("pic", "epic") if a in cfg.algorithms), None)
    if ref and method and "td3_bc" in cfg.algorithms:

        def per_seed(a: str) -> list[float]:
            return [r["normalized"][ref] for (d, aa), recs in results.items() if aa == a for r in recs]

        m, b = per_seed(method), per_seed("td3_bc")
        gaps = np.subtract(m, b)
        margin = float(2 * gaps.std(ddof=1) / np.sqrt(len(gaps))) if len(gaps) > 1 else 0.0
        claim = ClaimCheck(f"normalized score ({ref}), mean over datasets and seeds", method,
                           float(np.mean(m)), "td3_bc", float(np.mean(b)), margin=margin)  # fmt: skip
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
