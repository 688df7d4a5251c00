"""Gradient steps per second of every offline algorithm on random data, single CPU thread.

The issue's requirement: PIC/EPIC steps/s >= 0.7x TD3+BC's on the same machine. Shape of a D4RL
locomotion update: obs 17, act 6, batch 256, K = 10 peers, width 256, EPIC/EDAC with N = 10 critics.
Algorithms are timed in interleaved rounds (the machine is shared), and each ratio is the median of
the per-round ratios to TD3+BC measured in the same round.

    python benchmarks/pic/throughput.py [--rounds 5] [--seconds 3]
    python benchmarks/pic/throughput.py --stacked 1 6 [--rounds 3]   # the stacked trainer, R runs at once
    python benchmarks/pic/throughput.py ... --tag xeon                   # results/throughput*_xeon.json

`--stacked` times TD3+BC, IQL, PIC and EPIC (N = 10) as stacks of R runs (`iclr26.pic.stacked`, R seeds
on random data) and reports run-updates/s (R × stack steps/s) and PIC / TD3+BC in the same round; it
writes results/throughput_stacked.json. Ratios come with the quartiles of their rounds: on a shared VM a
3 s round's rate varies by ±20%, so use many short rounds (`--rounds 15 --seconds 1`). Both modes also
time the max-min-Q screen in its CPU row blocks against one call (`score_block_rows`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.pic.algorithms import BatchSampler, make_algorithm
from iclr26.pic.algorithms.pic import max_min_q_action, resolve_score_dtype, score_block_rows

OBS, ACT, BATCH, K, N_DATA = 17, 6, 256, 10, 20_000
# label -> (registry name, overrides). PIC/EPIC default: score_dtype "auto", the bf16 screen + float32
# top-2 where the CPU has native bf16 (AVX512-BF16 / AMX), else float32 scoring; the JSON records which.
VARIANTS = {
    "bc": ("bc", {}),
    "td3_bc": ("td3_bc", {}),
    "iql": ("iql", {}),
    "pic": ("pic", {}),
    "pic_float32_scoring": ("pic", {"score_dtype": "float32"}),
    "pic_bf16_only_scoring": ("pic", {"score_dtype": "bfloat16", "rerank_top": 0}),
    "edac_n10": ("edac", {"num_critics": 10}),
    "epic_n2": ("epic", {"num_critics": 2}),  # the locomotion table's EPIC
    "epic_n10": ("epic", {"num_critics": 10}),
    "epic_n10_float32_scoring": ("epic", {"num_critics": 10, "score_dtype": "float32"}),
}
SCORING = {"float32": ("float32", 0), "bf16_rerank2": ("bfloat16", 2), "bf16_only": ("bfloat16", 0)}


def random_sampler(seed: int = 0) -> BatchSampler:
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(N_DATA, OBS)).astype(np.float32)
    return BatchSampler(
        obs,
        rng.uniform(-1, 1, size=(N_DATA, ACT)),
        rng.normal(size=N_DATA),
        np.roll(obs, -1, axis=0),
        np.zeros(N_DATA),
        peers=rng.integers(0, N_DATA, size=(N_DATA, K)),
        batch_size=BATCH,
        seed=seed,
    )


def steps_per_s(algo, sampler: BatchSampler, seconds: float) -> float:
    """Updates per second over at least `seconds` (batches are sampled outside the timer)."""
    batches = [sampler.sample() for _ in range(8)]
    done, elapsed = 0, 0.0
    while elapsed < seconds or done < 4:
        batch = batches[done % len(batches)]
        t0 = time.perf_counter()
        algo.update(batch)
        elapsed += time.perf_counter() - t0
        done += 1
    return done / elapsed


def scoring_inputs(num_critics: int, runs: int = 1) -> tuple[torch.nn.Module, ...]:
    """A fresh critic ensemble (PIC's 2 critics, or EPIC's N), plain or a stack of `runs`, and a batch
    of states, actions and K peer actions per run."""
    name, cfg = ("epic", {"num_critics": num_critics}) if num_critics > 2 else ("pic", {})
    algos = [make_algorithm(name, OBS, ACT, cfg, seed=s) for s in range(runs)]
    critic = (type(algos[0]).stack(algos) if runs > 1 else algos[0]).critic
    lead = (runs,) if runs > 1 else ()
    g = torch.Generator().manual_seed(0)
    obs, act = torch.randn(*lead, BATCH, OBS, generator=g), torch.rand(*lead, BATCH, ACT, generator=g) * 2 - 1
    return critic, obs, act, torch.rand(*lead, BATCH, K, ACT, generator=g) * 2 - 1


def time_scoring(
    inputs: tuple[torch.nn.Module, ...], score_dtype: str, rerank_top: int, block_rows: int | None, reps: int
) -> float:
    """Milliseconds per run per max-min-Q call on `inputs` (`scoring_inputs`), mean over `reps` calls."""
    critic, obs, act, peers = inputs
    runs = obs.shape[0] if obs.dim() == 3 else 1
    t0 = time.perf_counter()
    for _ in range(reps):
        max_min_q_action(critic, obs, act, peers, score_dtype, rerank_top, block_rows)
    return (time.perf_counter() - t0) / reps / runs * 1e3


def scoring_ms(num_critics: int, score_dtype: str, rerank_top: int, reps: int = 10) -> float:
    """Milliseconds per max-min-Q scoring call on B·(K+1) = 2816 pairs, one run, default blocks."""
    inputs = scoring_inputs(num_critics)
    time_scoring(inputs, score_dtype, rerank_top, None, 1)  # warm-up
    return time_scoring(inputs, score_dtype, rerank_top, None, reps)


def blocks_vs_one_call(num_critics: int, runs: int, rounds: int = 15, reps: int = 3) -> dict[str, float]:
    """The default scoring (this CPU's dtype, top-2 re-rank) in its row blocks and in one call, ms per
    run, interleaved in `rounds`; medians, and the median per-round ratio (blocks / one call)."""
    mode = (resolve_score_dtype("auto", "cpu"), 2)
    pairs = BATCH * (K + 1)
    inputs = scoring_inputs(num_critics, runs)
    blocks, one = [], []
    for _ in range(rounds):
        blocks.append(time_scoring(inputs, *mode, None, reps))
        one.append(time_scoring(inputs, *mode, pairs, reps))
    return {
        "critics": num_critics,
        "runs": runs,
        "block_rows": min(score_block_rows(inputs[0], pairs, "cpu"), pairs),
        "blocks_ms_per_run": statistics.median(blocks),
        "one_call_ms_per_run": statistics.median(one),
        "blocks_over_one_call": statistics.median(b / o for b, o in zip(blocks, one, strict=True)),
    }


STACKED = {"td3_bc": {}, "iql": {}, "pic": {}, "epic_n10": {"num_critics": 10}}


def round_ratios(rates: list[float], base: list[float]) -> dict[str, float]:
    """The median and quartiles of per-round ratios rates / base (the rounds' spread is the noise)."""
    ratios = [a / b for a, b in zip(rates, base, strict=True)]
    q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
    return {"median": statistics.median(ratios), "q1": q1, "q3": q3}


def results_path(stem: str, tag: str) -> Path:
    """results/<stem>.json, or results/<stem>_<tag>.json for a tagged (other machine's) run."""
    return Path(__file__).parent / "results" / f"{stem}{'_' + tag if tag else ''}.json"


def stacked(sizes: list[int], rounds: int, seconds: float, tag: str = "") -> None:
    """Run-updates/s of stacks of R runs per algorithm, interleaved rounds; PIC / TD3+BC per round."""
    from iclr26.pic.data import OfflineDataset
    from iclr26.pic.peers import peer_table
    from iclr26.pic.stacked import stack_runs

    rng = np.random.default_rng(0)
    obs = rng.normal(size=(N_DATA, OBS)).astype(np.float32)
    ds = OfflineDataset(
        observations=obs,
        actions=rng.uniform(-1, 1, (N_DATA, ACT)).astype(np.float32),
        rewards=rng.normal(size=N_DATA).astype(np.float32),
        next_observations=obs,
        terminals=np.zeros(N_DATA, bool),
        timeouts=np.arange(N_DATA) % 1000 == 999,
        name="random",
        env_id="Random-v0",
    )
    peers = peer_table(obs, K)
    stacks = {
        (label, r): stack_runs(label.split("_n")[0], [ds], list(range(r)), ov, peers=[peers])
        for label, ov in STACKED.items()
        for r in sizes
    }
    rates: dict[tuple[str, int], list[float]] = {key: [] for key in stacks}
    for i in range(rounds):
        for key, st in stacks.items():
            rates[key].append(steps_per_s(st.algorithm, st.sampler, seconds) * st.runs)
        print(
            f"round {i + 1}: " + ", ".join(f"{k[0]}×{k[1]} {v[-1]:.0f}" for k, v in rates.items()), flush=True
        )
    rows = []
    for label in STACKED:
        for r in sizes:
            vs_td3 = round_ratios(rates[(label, r)], rates[("td3_bc", r)])
            rows.append(
                {
                    "algorithm": label,
                    "runs": r,
                    "run_updates_per_s_median": statistics.median(rates[(label, r)]),
                    "run_updates_per_s_rounds": rates[(label, r)],
                    "ratio_to_td3_bc": vs_td3["median"],
                    "ratio_to_td3_bc_quartiles": vs_td3,
                }
            )
    print(f"\n{'algorithm':10s} {'runs':>4s} {'run-updates/s':>14s} {'x td3_bc':>9s}")
    for row in rows:
        print(f"{row['algorithm']:10s} {row['runs']:4d} {row['run_updates_per_s_median']:14.1f} "
              f"{row['ratio_to_td3_bc']:9.2f}")  # fmt: skip
    blocks = [blocks_vs_one_call(n, r) for n in (2, 10) for r in sizes]
    print("scoring per run, row blocks vs one call:", blocks)
    path = results_path("throughput_stacked", tag)
    setup = {"obs_dim": OBS, "act_dim": ACT, "batch": BATCH, "K": K, "hidden": [256, 256],
             "torch_threads": 1, "rounds": rounds, "seconds_per_round": seconds,
             "default_score_dtype": resolve_score_dtype("auto", "cpu")}  # fmt: skip
    payload = {**provenance(), "setup": setup, "rows": rows, "scoring_blocks_vs_one_call": blocks,
               "load_average_1_5_15min_at_end": list(os.getloadavg())}  # fmt: skip
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"saved {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0, help="timed seconds per algorithm per round")
    ap.add_argument("--stacked", type=int, nargs="+", default=None, help="stack sizes R to time instead")
    ap.add_argument("--tag", default="", help="results/throughput[_stacked]_<tag>.json (another machine)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.stacked:
        stacked(args.stacked, args.rounds, args.seconds, args.tag)
        return

    sampler = random_sampler()
    algos = {label: make_algorithm(name, OBS, ACT, ov, seed=0) for label, (name, ov) in VARIANTS.items()}
    for algo in algos.values():  # warm-up (allocator, first-call overheads)
        for _ in range(3):
            algo.update(sampler.sample())
    per_round: dict[str, list[float]] = {label: [] for label in algos}
    for r in range(args.rounds):
        for label, algo in algos.items():
            per_round[label].append(steps_per_s(algo, sampler, args.seconds))
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in per_round.items()), flush=True)

    rows = []
    for label, (name, ov) in VARIANTS.items():
        vs_td3 = round_ratios(per_round[label], per_round["td3_bc"])
        vs_edac = round_ratios(per_round[label], per_round["edac_n10"]) if name in ("epic", "edac") else None
        rows.append(
            {
                "algorithm": label,
                "registry_name": name,
                "overrides": ov,
                "steps_per_s_median": statistics.median(per_round[label]),
                "steps_per_s_rounds": per_round[label],
                "ratio_to_td3_bc": vs_td3["median"],
                "ratio_to_td3_bc_quartiles": vs_td3,
                "ratio_to_edac_n10": vs_edac["median"] if vs_edac else None,
            }
        )
    scoring = {f"n{n}_{label}": scoring_ms(n, *mode) for n in (2, 10) for label, mode in SCORING.items()}
    blocks = blocks_vs_one_call(10, 1)  # a plain N = 10 screen is 28k member-rows: scored in blocks
    print("EPIC (N = 10) scoring, row blocks vs one call (ms):", blocks)
    print(f"\n{'algorithm':24s} {'steps/s':>8s} {'x td3_bc':>9s} {'x edac':>7s}")
    for row in rows:
        edac = f"{row['ratio_to_edac_n10']:.2f}" if row["ratio_to_edac_n10"] is not None else ""
        name, sps, x_td3 = row["algorithm"], row["steps_per_s_median"], row["ratio_to_td3_bc"]
        print(f"{name:24s} {sps:8.1f} {x_td3:9.2f} {edac:>7s}")
    print("max-min-Q scoring, ms per call on 2816 pairs:", {k: round(v, 1) for k, v in scoring.items()})

    path = results_path("throughput", args.tag)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        **provenance(),
        "default_score_dtype": resolve_score_dtype("auto", "cpu"),
        "setup": {
            "obs_dim": OBS,
            "act_dim": ACT,
            "batch": BATCH,
            "K": K,
            "hidden": [256, 256],
            "dataset": N_DATA,
            "torch_threads": 1,
            "rounds": args.rounds,
            "seconds_per_round": args.seconds,
        },
        "rows": rows,
        "scoring_ms_per_call": scoring,
        "scoring_blocks_vs_one_call": blocks,
        "load_average_1_5_15min_at_end": list(os.getloadavg()),  # the machine is shared
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
