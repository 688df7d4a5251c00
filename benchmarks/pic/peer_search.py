"""PIC peer table construction: exact vs HNSW vs IVF (faiss) time and recall@k, cKDTree at the smallest N.

States are a 17-D Gaussian mixture (Walker2d's observation size): 64 components with per-dimension
scales between 0.1 and 1 (`--data gaussian`: isotropic N(0, I), the hard case). Recall is measured
against the full exact table where it is built (N <= --max-exact), else against a float64
brute-force reference on --ref-queries random rows; the exact table is itself checked against that
reference at every N. Timings are ratios within one run: shared machines are noisy, and OpenMP
threads that outnumber free cores slow faiss's flat search badly (try --threads 1 under load).

    python benchmarks/pic/peer_search.py          # N = 20k, 100k, 200k on 2 threads
    python benchmarks/pic/peer_search.py --data gaussian --sizes 20000 100000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import faiss
import numpy as np
import scipy
from scipy.spatial import cKDTree

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.pic.peers import AUTO_EXACT_MAX_STATES, peer_table, recall_at_k

DIM, K = 17, 10


def mixture_states(n: int, seed: int, dim: int = DIM, components: int = 64) -> np.ndarray:
    """n states from an overlapping Gaussian mixture with anisotropic components."""
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, 2.0, (components, dim))
    scales = np.exp(rng.uniform(np.log(0.1), 0.0, (components, dim)))
    z = rng.integers(0, components, n)
    return (means[z] + scales[z] * rng.standard_normal((n, dim))).astype(np.float32)


def gaussian_states(n: int, seed: int, dim: int = DIM) -> np.ndarray:
    """n isotropic standard-normal states: the hard case for trees and inverted lists."""
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


DATA = {"mixture": mixture_states, "gaussian": gaussian_states}
DATA_NOTE = {
    "mixture": "Gaussian mixture, 64 components, means N(0, 2²), per-dim scales logU(0.1, 1), seed=N",
    "gaussian": "isotropic N(0, I), seed=N",
}


def brute_force_rows(x: np.ndarray, rows: np.ndarray, k: int, chunk: int = 128) -> np.ndarray:
    """The exact k nearest other states of x[rows] by float64 distances (ties: lower index)."""
    x64 = x.astype(np.float64)
    sq = (x64**2).sum(1)
    out = np.empty((rows.size, k), dtype=np.int64)
    for s in range(0, rows.size, chunk):
        r = rows[s : s + chunk]
        d = sq[r, None] + sq[None, :] - 2.0 * x64[r] @ x64.T  # candidates only; re-ranked exactly below
        d[np.arange(r.size), r] = np.inf
        cand = np.argpartition(d, k + 8, axis=1)[:, : k + 8]
        exact = ((x64[cand] - x64[r, None, :]) ** 2).sum(-1)
        exact[cand == r[:, None]] = np.inf
        order = np.lexsort((cand, exact), axis=-1)[:, :k]
        out[s : s + r.size] = np.take_along_axis(cand, order, axis=1)
    return out


def timed(fn):
    """(result, seconds) of fn()."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def ckdtree_peers(x: np.ndarray, k: int, workers: int) -> np.ndarray:
    """k nearest other states by scipy's cKDTree (query k + 1, drop the state itself)."""
    _, idx = cKDTree(x).query(x, k=k + 1, workers=workers)
    own = idx == np.arange(len(x))[:, None]
    own[~own.any(1), -1] = True  # a duplicate outranked the state itself: drop the farthest
    return idx[~own].reshape(len(x), k)


METHODS = {
    "exact": {"method": "exact"},
    "hnsw": {"method": "hnsw"},  # M=32, efSearch=128, one-thread build
    "ivf": {"method": "ivf"},  # nlist≈√N, nprobe=16
    "ivf_np32": {"method": "ivf", "nprobe": 32},
}


def run_size(n: int, args: argparse.Namespace, with_ckdtree: bool) -> list[dict]:
    """Time every method on n states and measure its recall; one result row per method."""
    x = DATA[args.data](n, seed=n)
    queries = np.sort(np.random.default_rng(0).choice(n, min(n, args.ref_queries), replace=False))
    ref = brute_force_rows(x, queries, K)
    tables, seconds = {}, {}
    for name, kw in METHODS.items():
        if name == "exact" and n > args.max_exact:
            continue
        tables[name], seconds[name] = timed(lambda kw=kw: peer_table(x, K, threads=args.threads, **kw))
    if with_ckdtree:
        tables["ckdtree"], seconds["ckdtree"] = timed(lambda: ckdtree_peers(x, K, args.threads))
    rows = []
    for name, table in tables.items():
        row = {
            "n": n,
            "method": name,
            "seconds": round(seconds[name], 3),
            "recall_subset": recall_at_k(table[queries], ref),
            "recall_full": recall_at_k(table, tables["exact"]) if "exact" in tables else None,
            "speedup_vs_exact": round(seconds["exact"] / seconds[name], 2) if "exact" in seconds else None,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000, 200_000])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-exact", type=int, default=100_000, help="largest N with a full exact table")
    ap.add_argument("--ref-queries", type=int, default=2000)
    ap.add_argument("--data", choices=sorted(DATA), default="mixture")
    ap.add_argument("--out", type=Path, default=None, help="default results/peer_search[_<data>].json")
    args = ap.parse_args()
    if args.out is None:
        stem = "peer_search" if args.data == "mixture" else f"peer_search_{args.data}"
        args.out = Path(__file__).parent / "results" / f"{stem}.json"

    rows = [row for n in args.sizes for row in run_size(n, args, with_ckdtree=n == min(args.sizes))]
    print(f"\npeer table, k={K}, {DIM}-D {args.data} states, {args.threads} threads")
    print(f"{'N':>8} {'method':>9} {'seconds':>8} {'x exact':>8} {'recall':>8} {'recall*':>8}")
    for r in rows:
        full = f"{r['recall_full']:.4f}" if r["recall_full"] is not None else "-"
        speed = f"{r['speedup_vs_exact']:.2f}" if r["speedup_vs_exact"] is not None else "-"
        sub = r["recall_subset"]
        print(f"{r['n']:>8} {r['method']:>9} {r['seconds']:>8.2f} {speed:>8} {full:>8} {sub:>8.4f}")
    print(f"recall: vs the full exact table; recall*: vs float64 brute force on {args.ref_queries} rows")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        **provenance(),
        "faiss": faiss.__version__,
        "scipy": scipy.__version__,
        "threads": args.threads,
        "k": K,
        "dim": DIM,
        "data": DATA_NOTE[args.data],
        "max_exact": args.max_exact,
        "params": {
            "hnsw": "M=32, efSearch=128, efConstruction=40 (faiss default), one-thread build",
            "ivf": "nlist=round(sqrt(N)), nprobe=16 (ivf_np32: 32), k-means on a seeded sample",
            "auto_exact_max_states": AUTO_EXACT_MAX_STATES,
        },
        "ref_queries": args.ref_queries,
        "rows": rows,
    }
    args.out.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
