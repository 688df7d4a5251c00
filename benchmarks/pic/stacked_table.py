"""The locomotion table from stacked training: BC (a reference), TD3+BC, IQL, PIC and EPIC (N = 10) on
the three tasks × medium / medium-replay, 3 seeds each, every (task, algorithm) trained as one stack of
2 datasets × 3 seeds (`iclr26.pic.stacked`), then each run's actor evaluated on MuJoCo on the CPU.

    # train (resumable: rerun the same command) and evaluate, on the CPU, at 50k steps; EPIC with
    # N = 10 costs about 15x TD3+BC per step on a CPU, so the CPU table runs it with N = 2
    python benchmarks/pic/stacked_table.py --data-dir runs/pic_data --out runs/pic_stacked_50k \
        --tasks Hopper-v5 --epic-critics 2
    python benchmarks/pic/stacked_table.py --evaluate runs/pic_stacked_50k --tag 50k   # the README table
    # compact data for the GPU machine (float16, a seeded subsample, peer tables computed here)
    python benchmarks/pic/stacked_table.py --data-dir runs/pic_data --prepare .picdata

`--evaluate` writes `results/pic_stacked_<tag>.json` and prints the markdown table: normalized score
(D4RL's references and ours) mean ± sd over seeds, the claim check, and run-updates/s per algorithm.
Each stack is evaluated once: its rows are kept in `<out>/evaluations/` with its actors file's hash.
The GPU run (`device_h200.py`) trains from the compact data with the same functions.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core.checkpoint import save_checkpoint, write_text_atomic
from iclr26.core.claim import Claim, judge
from iclr26.core.seeding import derive_seed
from iclr26.pic.algorithms import make_algorithm
from iclr26.pic.algorithms.common import return_range_reward_scale
from iclr26.pic.data import OfflineDataset, d4rl_reference, load_dataset, load_manifest, normalized_score
from iclr26.pic.stacked import Stack, actor_states, stack_runs
from iclr26.pic.train import steps_per_second, train_offline

TASKS = ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5")
DATASETS = ("medium", "medium-replay")
ALGORITHMS = ("bc", "td3_bc", "iql", "pic", "epic")  # BC: a reference, not in the claim
SEEDS = (0, 1, 2)
CONFIGS: dict[str, dict[str, Any]] = {"epic": {"num_critics": 10}}  # the paper's widths (256) elsewhere
ARRAYS = ("observations", "actions", "rewards", "next_observations", "terminals", "timeouts")
K = 10  # peers per state, as the pic system's default
SCORES = ("d4rl_score", "our_score")  # the two normalisations: D4RL's reference returns and ours

# ------------------------------------------------------------------------------------------- data


def prepare(data_dir: Path, out: Path, transitions: int, seed: int = 0) -> None:
    """Compact copies of the datasets for the GPU machine: a seeded uniform subsample of `transitions`
    transitions, arrays in float16 (rewards float32), the subsample's peer table (int32, K = 10), and
    the full dataset's reference returns and IQL reward scale."""
    from iclr26.pic.peers import peer_table  # faiss: here, not on the GPU machine

    out.mkdir(parents=True, exist_ok=True)
    for task in TASKS:
        for name in DATASETS:
            path = data_dir / task / f"{name}.npz"
            ds, manifest = load_dataset(path), load_manifest(path)
            rng = np.random.default_rng(derive_seed(seed, 0, f"{task}/{name}", bits=32))
            idx = np.sort(rng.choice(len(ds), size=min(transitions, len(ds)), replace=False))
            arrays = {k: getattr(ds, k)[idx] for k in ARRAYS}
            peers = peer_table(arrays["observations"], K)
            np.savez_compressed(
                out / f"{task}_{name}.npz",
                **{k: v.astype(np.float16) if v.dtype == np.float32 and k != "rewards" else v
                   for k, v in arrays.items()},
                peers=peers.astype(np.int32),
            )  # fmt: skip
            meta = {
                "env_id": task,
                "dataset": name,
                "source": str(path),
                "source_transitions": len(ds),
                "transitions": len(idx),
                "subsample_seed": seed,
                "k": K,
                "return_range_scale": return_range_reward_scale(ds.rewards, ds.episode_ends()),
                "reference_returns": manifest["reference_returns"],
                "agent": manifest.get("agent", "td3"),
            }
            (out / f"{task}_{name}.json").write_text(json.dumps(meta, indent=1))
            print(f"{task} {name}: {len(idx):,} of {len(ds):,} transitions", flush=True)


def load_compact(folder: Path, task: str, name: str) -> tuple[OfflineDataset, np.ndarray, dict[str, Any]]:
    """A compact dataset (as `prepare` wrote it) in float32, its peer table and its metadata."""
    meta = json.loads((folder / f"{task}_{name}.json").read_text())
    with np.load(folder / f"{task}_{name}.npz") as f:
        arrays = {k: f[k].astype(np.float32) if f[k].dtype == np.float16 else f[k] for k in ARRAYS}
        peers = f["peers"].astype(np.int64)
    ds = OfflineDataset(**arrays, env_id=task, name=f"{task}/{name}")
    return ds, peers, meta


def load_full(data_dir: Path, task: str, name: str) -> tuple[OfflineDataset, np.ndarray, dict[str, Any]]:
    """A generated dataset, its cached peer table (K = 10) and its manifest."""
    from iclr26.pic.peers import cached_peer_table

    path = data_dir / task / f"{name}.npz"
    ds, manifest = load_dataset(path), load_manifest(path)
    peers = cached_peer_table(ds.observations, path.with_suffix(f".peers_k{K}.npy"), K)
    return ds, peers, {"reference_returns": manifest["reference_returns"], "return_range_scale": None,
                       "transitions": len(ds), "agent": manifest.get("agent", "td3")}  # fmt: skip


# ------------------------------------------------------------------------------------------ train


def save_actors(
    path: Path, stack: Stack, data: list[tuple[OfflineDataset, np.ndarray, dict[str, Any]]]
) -> None:
    """Every run's actor with the stack's runs, config and its datasets' metadata (what `evaluate_stacks`
    reads), written atomically. `data` is `load`'s (dataset, peers, metadata) per name in DATASETS."""
    saved = {
        "runs": stack.runs_info,
        "actors": actor_states(stack.algorithm),
        "config": dataclasses.asdict(stack.algorithm.config),
        "data_meta": {name: d[2] for name, d in zip(DATASETS, data, strict=True)},
    }
    save_checkpoint(path, saved)


def train_stacks(
    load,
    out: Path,
    steps: int,
    *,
    tasks: Iterable[str] = TASKS,
    algorithms: Iterable[str] = ALGORITHMS,
    seeds: Iterable[int] = SEEDS,
    device: str = "cpu",
    checkpoint_every: int = 5000,
    log_every: int = 1000,
    on_step=None,
) -> list[dict[str, Any]]:
    """Train every (task, algorithm) stack for `steps` (resuming from `out/checkpoints`), save each
    run's actor in `out/actors/<task>_<algorithm>.pt`, and return one record per stack. `load(task,
    name)` gives (dataset, peers, metadata)."""
    records = []
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    (out / "actors").mkdir(parents=True, exist_ok=True)
    for task in tasks:
        data = [load(task, name) for name in DATASETS]
        for algo in algorithms:
            stack = stack_runs(
                algo,
                [d[0] for d in data],
                list(seeds),
                CONFIGS.get(algo),
                peers=[d[1] for d in data],
                return_range_scales=[d[2]["return_range_scale"] for d in data],
                device=device,
            )
            t0 = time.time()
            history = train_offline(
                stack.algorithm,
                stack.sampler,
                steps,
                checkpoint_path=out / "checkpoints" / f"{task}_{algo}.pt",
                checkpoint_every=checkpoint_every,
                log_every=log_every,
                on_step=on_step,
            )
            rate = steps_per_second(history)
            save_actors(out / "actors" / f"{task}_{algo}.pt", stack, data)
            record = {
                "task": task,
                "algorithm": algo,
                "runs": stack.runs_info,
                "steps": history[-1]["step"] if history else 0,  # a checkpoint further on wins
                "steps_requested": steps,
                "stack_steps_per_s": rate,
                "run_updates_per_s": rate * stack.runs,
                "wall_s": time.time() - t0,  # this process only (a resumed stack's last stretch)
                "config": CONFIGS.get(algo, {}),
                "score_dtype": getattr(stack.algorithm.config, "score_dtype", None),
                "history": history,
            }
            write_text_atomic(out / f"train_{task}_{algo}.json", json.dumps(record))
            records.append(record)
            print(f"{task} {algo}: {steps} steps, {rate * stack.runs:.0f} run-updates/s", flush=True)
    return records


def training_summary(record: dict[str, Any]) -> dict[str, Any]:
    """A stack's training record without its history, with its training time over every resume
    (`wall_s` is the last process's only)."""
    history = record.get("history") or []
    summary = {k: v for k, v in record.items() if k != "history"}
    if history and "train_time_s" in history[-1]:
        summary["train_time_s"] = history[-1]["train_time_s"]
    return summary


# --------------------------------------------------------------------------------------- evaluate


def evaluate_stacks(out: Path, data_meta, episodes: int) -> list[dict[str, Any]]:
    """Every saved run's actor on its task (CPU MuJoCo, `episodes` episodes from the run's evaluation
    seed), with both normalized scores. Reference returns come from the metadata saved with the
    actors (the data the stack trained on); `data_meta(task, name)` serves actors saved without it.
    Each actors file's rows are kept in `out/evaluations/<stem>.json` with the file's sha256 and the
    episode count, so a table built over several sessions evaluates each stack once (evaluation is
    seeded: the same actors give the same rows)."""
    rows = []
    for path in sorted((out / "actors").glob("*.pt")):
        cache = out / "evaluations" / f"{path.stem}.json"
        key = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "episodes": episodes}
        if cache.is_file() and (cached := json.loads(cache.read_text()))["key"] == key:
            rows += cached["rows"]
            print(f"{path.stem}: evaluated before ({cache})", flush=True)
            continue
        stack_rows = _evaluate_actors(path, data_meta, episodes)
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(cache, json.dumps({"key": key, "rows": stack_rows}))
        rows += stack_rows
    return rows


def _evaluate_actors(path: Path, data_meta, episodes: int) -> list[dict[str, Any]]:
    """The rows of one actors file (`evaluate_stacks`)."""
    from iclr26.pic.evaluation import evaluate, make_env

    rows = []
    task, algo = path.stem.split("_", 1)
    saved = torch.load(path, map_location="cpu", weights_only=True)
    env = make_env(task)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    env.close()
    for info, state in zip(saved["runs"], saved["actors"], strict=True):
        single = make_algorithm(algo, obs_dim, act_dim, saved.get("config", CONFIGS.get(algo)))
        single.actor.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("actor.")})
        single.normalizer.load_state_dict(
            {k[11:]: v for k, v in state.items() if k.startswith("normalizer.")}
        )
        seed = derive_seed(info["seed"], 1, bits=32) % 2**31  # as the pic system's evaluation
        returns = evaluate(task, single.act, episodes, seed)
        name = info["dataset"].split("/", 1)[1]
        meta = saved["data_meta"][name] if "data_meta" in saved else data_meta(task, name)
        refs = meta["reference_returns"]
        d4rl = d4rl_reference(task)
        rows.append(
            {
                "task": task,
                "dataset": name,
                "algorithm": algo,
                "seed": info["seed"],
                "return": float(np.mean(returns)),
                "d4rl_score": normalized_score(returns, *d4rl) if d4rl else None,
                "our_score": normalized_score(returns, refs["random"], refs["expert"]),
            }
        )
        print(f"{task} {name} {algo} s{info['seed']}: {rows[-1]['return']:.0f}", flush=True)
    return rows


def _mean_sd(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.1f} ± {sd:.1f}"


def paired_check(rows: list[dict[str, Any]], method: str, baseline: str, score: str) -> dict[str, Any]:
    """`method` against `baseline` on the mean of `score` over the (task, dataset, seed) runs both
    have, judged by core's one rule (± 2 SE of the paired differences). The check as a dict,
    with its verdict and the (task, dataset) cells it covers (while training, not always the mean
    row's)."""
    by = {(r["task"], r["dataset"], r["seed"], r["algorithm"]): r[score] for r in rows}
    keys = sorted({k[:3] for k in by if k[3] == method} & {k[:3] for k in by if k[3] == baseline})
    name = "D4RL" if score == "d4rl_score" else "ours"
    ours, theirs = [by[(*k, method)] for k in keys], [by[(*k, baseline)] for k in keys]
    claim = Claim(f"normalized score ({name}), mean over task × dataset × seed", method, (baseline,))
    units = ["/".join(map(str, k)) for k in keys]
    check = judge(claim, baseline, dict(zip(units, ours, strict=True)), dict(zip(units, theirs, strict=True)))
    cells = sorted({k[:2] for k in keys})
    return dataclasses.asdict(check) | {"verdict": check.verdict, "cells": [list(c) for c in cells]}


def _head(algo: str, records: list[dict[str, Any]]) -> str:
    """An algorithm's column name, with EPIC's ensemble size N as trained."""
    sizes = {r.get("config", {}).get("num_critics") for r in records if r["algorithm"] == algo}
    return algo + "".join(f" (N = {n})" for n in sorted(n for n in sizes if n))


def table(rows: list[dict[str, Any]], records: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The markdown table (D4RL-normalized, ours in brackets), throughput, and the claim check: PIC and
    EPIC at or above TD3+BC and IQL, each pair compared on paired runs (same task, dataset, seed) in
    both normalisations. "At or above" holds unless some pair reads "did not hold". While the table is
    still training, a stack not yet done reads "—" and the mean row covers the cells every compared
    method has (named in the row and in `mean_over_cells`)."""
    algos = [a for a in ALGORITHMS if any(r["algorithm"] == a for r in rows)]
    cells = sorted({(r["task"], r["dataset"]) for r in rows})
    steps = {a: sorted({rec["steps"] for rec in records if rec["algorithm"] == a}) for a in algos}
    heads = [_head(a, records) for a in algos]
    lines = ["| task | dataset | " + " | ".join(heads) + " |", "|---|---|" + "---|" * len(algos)]
    cell_means: dict[tuple[str, str, str], dict[str, float]] = {}  # (task, dataset, algorithm) -> score
    for task, name in cells:
        out = []
        for a in algos:
            sel = [r for r in rows if (r["task"], r["dataset"], r["algorithm"]) == (task, name, a)]
            if not sel:  # a table still training: this stack is not done
                out.append("—")
                continue
            cell_means[(task, name, a)] = {s: statistics.mean(r[s] for r in sel) for s in SCORES}
            d4rl, ours = [r["d4rl_score"] for r in sel], [r["our_score"] for r in sel]
            out.append(f"{_mean_sd(d4rl)} ({_mean_sd(ours)})")
        lines.append(f"| {task} | {name} | " + " | ".join(out) + " |")
    # the mean over the cells where every compared method has runs (BC, a reference, does not decide them)
    compared = [a for a in algos if a != "bc"] or algos
    common = [c for c in cells if all((*c, a) in cell_means for a in compared)]
    average = {
        s: {a: statistics.mean(cell_means[(*c, a)][s] for c in common)
            for a in algos if common and all((*c, a) in cell_means for c in common)}
        for s in SCORES
    }  # fmt: skip
    lines.append(
        f"| **mean** ({len(common)} of {len(cells)} cells) | | "
        + " | ".join(
            f"**{average['d4rl_score'][a]:.1f}** ({average['our_score'][a]:.1f})"
            if a in average["d4rl_score"] else "—"
            for a in algos
        )
        + " |"
    )  # fmt: skip
    reached = [" / ".join(f"{n:,}" for n in steps[a]) for a in algos]
    lines.append("| steps per run | | " + " | ".join(reached) + " |")
    rates: dict[str, list[float]] = {}
    for rec in records:
        rates.setdefault(rec["algorithm"], []).append(rec["run_updates_per_s"])
    throughput = {a: statistics.mean(v) for a, v in rates.items()}
    pairs = [
        paired_check(rows, m, b, s)
        for s in SCORES
        for m in ("pic", "epic")
        for b in ("td3_bc", "iql")
        if {m, b} <= set(algos)
    ]
    claim = {
        "claim": "PIC and EPIC at or above TD3+BC and IQL (paired runs, both normalisations)",
        "mean_scores": average["d4rl_score"],
        "mean_scores_ours": average["our_score"],
        "pairs": pairs,
        "holds": bool(pairs) and all(c["verdict"] != "did not hold" for c in pairs),
        "method_beats_baselines": bool(pairs) and all(c["verdict"] == "held" for c in pairs),
        "mean_over_cells": [list(c) for c in common],
        "steps_per_run": steps,  # more than one value: the stacks of an algorithm stopped at different steps
        "run_updates_per_s": throughput,
        "pic_over_td3_bc_throughput": throughput["pic"] / throughput["td3_bc"]
        if {"pic", "td3_bc"} <= set(throughput)
        else None,
    }
    return "\n".join(lines), claim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=Path("runs/pic_data"),
        help="per task, the chosen agent's datasets (generate.py --summary --link)",
    )
    ap.add_argument("--compact", type=Path, default=None, help="train from `--prepare`d data instead")
    ap.add_argument("--prepare", type=Path, default=None, help="write compact data here and stop")
    ap.add_argument("--transitions", type=int, default=50_000, help="--prepare: transitions per dataset")
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--out", type=Path, default=Path("runs/pic_stacked_50k"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--tasks", nargs="+", default=list(TASKS))
    ap.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS))
    ap.add_argument("--epic-critics", type=int, default=10, help="EPIC's N (10: the paper's MuJoCo setting)")
    ap.add_argument("--evaluate", type=Path, default=None, help="evaluate a trained folder and tabulate")
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--tag", default="50k")
    a = ap.parse_args()
    CONFIGS["epic"] = {"num_critics": a.epic_critics}
    # one thread: width-256 updates and batch-1 rollouts gain nothing from a second, and its waits cost
    # evaluation dearly when training jobs hold the cores (6 Hopper runs: 30 s with two, 7.5 s with one)
    torch.set_num_threads(1)
    if a.prepare:
        prepare(a.data_dir, a.prepare, a.transitions)
        return
    if a.compact:

        def load(task, name):
            return load_compact(a.compact, task, name)
    else:

        def load(task, name):
            return load_full(a.data_dir, task, name)

    if a.evaluate:
        records = [json.loads(p.read_text()) for p in sorted(a.evaluate.glob("train_*.json"))]
        meta = a.evaluate / "data_meta.json"  # for actors saved without their data's metadata
        metas = json.loads(meta.read_text()) if meta.is_file() else {}

        def data_meta(task: str, name: str) -> dict[str, Any]:
            if f"{task}/{name}" not in metas:
                raise SystemExit(
                    f"error: no metadata for {task}/{name}: not in the actors file nor in {meta}"
                )
            return metas[f"{task}/{name}"]

        rows = evaluate_stacks(a.evaluate, data_meta, a.episodes)
        md, claim = table(rows, records)
        print(md)
        print(json.dumps(claim, indent=1))
        result = {**provenance(), "steps": sorted({r["steps"] for r in records}), "episodes": a.episodes,
                  "rows": rows, "claim_check": claim, "table": md,
                  "training": [training_summary(r) for r in records]}  # fmt: skip
        path = Path(__file__).parent / "results" / f"pic_stacked_{a.tag}.json"
        path.write_text(json.dumps(result, indent=1) + "\n")
        print(f"saved {path}")
        return
    a.out.mkdir(parents=True, exist_ok=True)
    meta_path = a.out / "data_meta.json"  # one file for all tasks (tasks may train in separate processes)
    metas = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    metas |= {f"{t}/{n}": load(t, n)[2] for t in a.tasks for n in DATASETS}
    meta_path.write_text(json.dumps(metas, indent=1))
    train_stacks(load, a.out, a.steps, tasks=a.tasks, algorithms=a.algorithms, device=a.device)


if __name__ == "__main__":
    main()
