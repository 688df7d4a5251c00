"""Peer table: the K nearest other dataset states of every dataset state (PIC, OpenReview bPWCIJyp1K).

PIC's peers of a state s are its K nearest dataset states under L2 on states, s itself excluded
(K = 10–20); the candidate set for the actor target is {a(s)} ∪ {a(p) : p ∈ peers(s)}. Queries only
ever come from the dataset, so the whole table is searched once per dataset with a real
nearest-neighbour index (faiss: exact flat, HNSW or IVF), cached beside the dataset, and training
only gathers rows from it (`gather_peer_actions`).

Every method returns candidates that are re-ranked by float64 L2 distance with ties broken by the
lower dataset index, so results do not depend on faiss's float32 ‖x‖² + ‖y‖² − 2x·y expansion,
on BLAS thread count, or on how faiss orders equal distances.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.core.checkpoint import atomic_write, write_text_atomic

METHODS = ("auto", "exact", "hnsw", "ivf")
AUTO_EXACT_MAX_STATES = 50_000  # "auto" uses exact flat search up to this many states, HNSW above
_RERANK_MARGIN = 4  # extra candidates searched beyond k + 1 so the exact float64 re-rank has slack
_RERANK_CHUNK = 8192  # rows re-ranked at once: bounds the (rows, k + 1 + margin, dim) float64 buffer
_IVF_TRAIN_PER_LIST = 256  # k-means sample size per inverted list (faiss's max_points_per_centroid)
_IVF_MIN_PER_LIST = 39  # faiss warns below this many training points per list
_CACHE_FORMAT = 1
# Parameters that change the table for each resolved method (batch and threads never do).
_RESULT_PARAMS = {
    "exact": ("normalize",),
    "hnsw": ("normalize", "seed", "hnsw_m", "ef_search"),
    "ivf": ("normalize", "seed", "nlist", "nprobe"),
}
_DEFAULTS: dict[str, Any] = {
    "normalize": False,
    "seed": 0,
    "hnsw_m": 32,
    "ef_search": 128,
    "nlist": None,
    "nprobe": 16,
    "batch": 65536,
    "threads": None,
}


def _faiss() -> Any:
    """Import faiss, or say which extra installs it."""
    try:
        import faiss
    except ImportError as err:  # pragma: no cover - faiss is in the `rl` extra
        raise ImportError("the peer table needs faiss: pip install 'iclr26[rl]' (faiss-cpu)") from err
    return faiss


@contextlib.contextmanager
def _faiss_threads(n: int | None) -> Iterator[None]:
    """Set faiss's OpenMP thread count inside the block (None leaves it) and restore it after."""
    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    if n is not None:
        faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def _check_observations(observations: np.ndarray) -> np.ndarray:
    """Return observations as a finite 2-D float array, or raise naming what is wrong."""
    obs = np.asarray(observations)
    if obs.ndim != 2:
        raise ValueError(f"observations must be 2-D (N states, state_dim), got shape {obs.shape}")
    if not (np.issubdtype(obs.dtype, np.floating) or np.issubdtype(obs.dtype, np.integer)):
        raise TypeError(f"observations must be a real numeric array, got dtype {obs.dtype}")
    if obs.shape[1] == 0:
        raise ValueError(f"observations have no state dimensions, shape {obs.shape}")
    finite = np.isfinite(obs).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise ValueError(
            f"observations contain NaN or inf in {bad.size} of {obs.shape[0]} rows "
            f"(first at row {int(bad[0])}); clean or drop those states before building the peer table"
        )
    return obs


def _check_int(name: str, value: Any, low: int) -> int:
    """An integer parameter >= low, or a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _resolve_method(method: str, n: int) -> str:
    """The concrete search method for `method` on n states."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "auto":
        return "exact" if n <= AUTO_EXACT_MAX_STATES else "hnsw"
    return method


def _default_nlist(n: int) -> int:
    """IVF list count: about √N, capped so every list gets faiss's minimum of training points."""
    return max(1, min(round(math.sqrt(n)), n // _IVF_MIN_PER_LIST))


def _prepare(obs: np.ndarray, normalize: bool) -> tuple[np.ndarray, np.ndarray]:
    """Centered (and, with normalize, unit-variance) states as float64 for re-ranking and float32 for faiss.

    Centering leaves L2 distances unchanged and shrinks ‖x‖², which is what limits the precision of
    faiss's float32 ‖x‖² + ‖y‖² − 2x·y; dimensions with zero variance are left unscaled.
    """
    x64 = obs.astype(np.float64)
    x64 -= x64.mean(axis=0)
    if normalize:
        std = x64.std(axis=0)
        x64 /= np.where(std > 0, std, 1.0)
    return x64, np.ascontiguousarray(x64, dtype=np.float32)


def _build_index(
    method: str, x32: np.ndarray, seed: int, hnsw_m: int, ef_search: int, nlist: int, nprobe: int
) -> Any:
    """A faiss index over x32 for `method`, built on one OpenMP thread so it is deterministic."""
    faiss = _faiss()
    n, d = x32.shape
    # faiss's parallel HNSW insertion links points under per-node locks in thread-scheduling order,
    # so the graph (hence the neighbours) may depend on the thread count and timing; IVF's k-means
    # sums per thread. One thread for the build makes the table a function of the data and seed only.
    with _faiss_threads(1):
        if method == "exact":
            index = faiss.IndexFlatL2(d)
            index.add(x32)
        elif method == "hnsw":
            index = faiss.IndexHNSWFlat(d, hnsw_m)
            index.hnsw.rng = faiss.RandomGenerator(seed)  # the level draws of the HNSW insertion
            index.add(x32)
            index.hnsw.efSearch = ef_search
        else:
            index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, nlist)
            index.cp.seed = seed
            rng = np.random.default_rng(seed)
            n_train = min(n, _IVF_TRAIN_PER_LIST * nlist)
            sample = np.sort(rng.choice(n, size=n_train, replace=False))
            index.train(x32[sample])
            index.add(x32)
            index.nprobe = min(nprobe, nlist)
    return index


def _rerank(x64: np.ndarray, rows: np.ndarray, cand: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest candidates of each row other than the row itself, by float64 L2 then index.

    cand holds faiss results (-1 = missing). The query's own index is dropped wherever it appears —
    only that index, never other zero-distance duplicates — and when it is absent the k nearest of
    the rest are kept, i.e. the last candidate is dropped. Returns (indices, ok) where ok marks rows
    that had k valid candidates.
    """
    out = np.empty((rows.size, k), dtype=np.int64)
    ok = np.empty(rows.size, dtype=bool)
    for s in range(0, rows.size, _RERANK_CHUNK):
        r, c = rows[s : s + _RERANK_CHUNK], cand[s : s + _RERANK_CHUNK]
        valid = (c >= 0) & (c != r[:, None])
        safe = np.where(c >= 0, c, 0)
        diff = x64[safe] - x64[r][:, None, :]
        dist = np.einsum("bmd,bmd->bm", diff, diff)
        dist[~valid] = np.inf
        order = np.lexsort((np.where(valid, c, np.iinfo(np.int64).max), dist), axis=-1)[:, :k]
        out[s : s + r.size] = np.take_along_axis(c, order, axis=1)
        ok[s : s + r.size] = np.isfinite(np.take_along_axis(dist, order, axis=1)).all(axis=1)
    return out, ok


def peer_table(
    observations: np.ndarray,
    k: int,
    method: str = "auto",
    *,
    normalize: bool = False,
    seed: int = 0,
    hnsw_m: int = 32,
    ef_search: int = 128,
    nlist: int | None = None,
    nprobe: int = 16,
    batch: int = 65536,
    threads: int | None = None,
) -> np.ndarray:
    """Indices (N, k) int64 of each state's k nearest other dataset states, nearest first.

    Parameters
    ----------
    observations : (N, state_dim) array of dataset states, finite.
    k : peers per state, 1 <= k < N (the paper's K, 10–20).
    method : "exact" (faiss IndexFlatL2), "hnsw" (IndexHNSWFlat), "ivf" (IndexIVFFlat trained on a
        seeded sample), or "auto" (exact up to AUTO_EXACT_MAX_STATES states, hnsw above).
    normalize : standardize each state dimension before measuring distances.
    seed : HNSW level draws; IVF training sample and k-means initialisation.
    hnsw_m, ef_search : HNSW graph degree and search beam (raised to k + 1 + margin if smaller).
    nlist, nprobe : IVF list count (default ≈ √N, at most N / 39) and lists scanned per query.
    batch : queries searched at once (memory bound; the result does not depend on it).
    threads : faiss OpenMP threads for the search (None: faiss's current setting). Index builds
        always run on one thread, so the table depends only on the data, method, parameters and seed.

    Rows an approximate index cannot fill with k valid peers are searched again exactly.
    """
    obs = _check_observations(observations)
    n = obs.shape[0]
    k = _check_int("k", k, 1)
    if k >= n:
        fix = f"use k <= {n - 1}" if n > 1 else "a state needs at least one other state to have peers"
        raise ValueError(
            f"k larger than the dataset: k={k} peers need at least k + 1 states, but N={n}; {fix}"
        )
    resolved = _resolve_method(method, n)
    seed = _check_int("seed", seed, 0)
    hnsw_m = _check_int("hnsw_m", hnsw_m, 2)
    ef_search = _check_int("ef_search", ef_search, 1)
    nprobe = _check_int("nprobe", nprobe, 1)
    batch = _check_int("batch", batch, 1)
    if threads is not None:
        threads = _check_int("threads", threads, 1)
    if nlist is None:
        nlist = _default_nlist(n)
    elif _check_int("nlist", nlist, 1) > n:
        raise ValueError(f"nlist={nlist} inverted lists need at least as many states to train, but N={n}")

    m = min(n, k + 1 + _RERANK_MARGIN)  # candidates per query: self + k peers + re-rank slack
    x64, x32 = _prepare(obs, bool(normalize))
    index = _build_index(resolved, x32, seed, hnsw_m, max(ef_search, m), int(nlist), nprobe)
    table = np.empty((n, k), dtype=np.int64)
    missing: list[np.ndarray] = []
    with _faiss_threads(threads):
        for s in range(0, n, batch):
            rows = np.arange(s, min(n, s + batch))
            _, cand = index.search(x32[rows], m)
            table[rows], ok = _rerank(x64, rows, cand, k)
            missing.append(rows[~ok])
        redo = np.concatenate(missing)
        if redo.size:  # an HNSW graph or the probed IVF lists returned fewer than k other states
            flat = _build_index("exact", x32, seed, hnsw_m, ef_search, 1, 1)
            _, cand = flat.search(x32[redo], m)
            table[redo], ok = _rerank(x64, redo, cand, k)
            assert ok.all(), "exact search returned fewer than k other states"
    return table


def recall_at_k(approx: np.ndarray, exact: np.ndarray) -> float:
    """Mean over rows of the fraction of exact neighbours that the approximate row contains."""
    approx, exact = np.asarray(approx), np.asarray(exact)
    if approx.ndim != 2 or exact.ndim != 2 or approx.shape[0] != exact.shape[0]:
        raise ValueError(
            f"approx and exact must be 2-D tables with the same rows, got {approx.shape} and {exact.shape}"
        )
    if exact.shape[1] == 0:
        raise ValueError("exact has no neighbour columns")
    found = (exact[:, :, None] == approx[:, None, :]).any(axis=2)
    return float(found.mean())


def _observations_hash(obs: np.ndarray) -> str:
    """blake2b of the states' dtype, shape and bytes."""
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{obs.dtype.str}{obs.shape}".encode())
    h.update(np.ascontiguousarray(obs).tobytes())
    return h.hexdigest()


def _table_hash(table: np.ndarray) -> str:
    """blake2b of a peer table's bytes (ties the .npy to its sidecar)."""
    return hashlib.blake2b(np.ascontiguousarray(table).tobytes(), digest_size=20).hexdigest()


def sidecar_path(cache_path: Path) -> Path:
    """The JSON sidecar that describes a cached peer table: `<name>.npy.json`."""
    cache_path = Path(cache_path)
    return cache_path.with_name(cache_path.name + ".json")


def _load_cache(cache_path: Path, key: dict[str, Any]) -> np.ndarray | None:
    """The cached table if its sidecar matches key and the table matches its sidecar, else None."""
    meta_path = sidecar_path(cache_path)
    if not (cache_path.is_file() and meta_path.is_file()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        if any(meta.get(name) != value for name, value in key.items()):
            return None
        table = np.load(cache_path, allow_pickle=False)
    except (OSError, ValueError, json.JSONDecodeError):
        return None  # unreadable or torn cache: recompute
    if (
        table.dtype != np.int64
        or table.shape != (key["n"], key["k"])
        or _table_hash(table) != meta.get("table_blake2b")
    ):
        return None
    return table


def cached_peer_table(
    observations: np.ndarray, cache_path: Path, k: int, method: str = "auto", **kw: Any
) -> np.ndarray:
    """The peer table cached at `cache_path` if built from these states and settings, else build and save it.

    `cache_path` is a `.npy` file; `<cache_path>.json` records k, the method, N, a blake2b hash of
    the states, the parameters that change the result, the faiss version and a hash of the table.
    Any mismatch (other data, k, method, parameters; for approximate methods, another faiss) or a
    torn/unreadable pair means the table is recomputed and both files are replaced atomically.
    `kw` are `peer_table`'s keyword parameters.
    """
    cache_path = Path(cache_path)
    if cache_path.suffix != ".npy":
        raise ValueError(f"cache_path must end in .npy, got {cache_path}")
    unknown = sorted(set(kw) - set(_DEFAULTS))
    if unknown:
        raise TypeError(f"unknown peer_table parameters {unknown}; accepted: {sorted(_DEFAULTS)}")
    obs = _check_observations(observations)
    n = obs.shape[0]
    resolved = _resolve_method(method, n)
    params = {**_DEFAULTS, **kw}
    if resolved == "ivf" and params["nlist"] is None:
        params["nlist"] = _default_nlist(n)
    faiss_version = _faiss().__version__
    key: dict[str, Any] = {  # compared with the sidecar after a JSON round trip (numpy ints -> int)
        "format": _CACHE_FORMAT,
        "k": k,
        "n": n,
        "dim": obs.shape[1],
        "method": resolved,
        "params": {name: params[name] for name in _RESULT_PARAMS[resolved]},
        "observations_blake2b": _observations_hash(obs),
    }
    if resolved != "exact":  # exact results are re-ranked in float64, so faiss's version cannot change them
        key["faiss"] = faiss_version
    key = json.loads(json.dumps(key, default=int))
    table = _load_cache(cache_path, key)
    if table is not None:
        return table
    table = peer_table(obs, k, method, **kw)
    meta = {
        **key,
        "requested_method": method,
        "faiss": faiss_version,
        "table_blake2b": _table_hash(table),
    }
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(cache_path, lambda f: np.save(f, table, allow_pickle=False))
    write_text_atomic(sidecar_path(cache_path), json.dumps(meta, indent=1) + "\n")
    return table


def gather_peer_actions(actions: torch.Tensor, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Peer actions (B, k, act_dim) = actions[table[idx]] for batch state indices idx (B,).

    actions: (N, act_dim) dataset actions; table: (N, k) peer table on the same device; the one
    per-step operation of the peer constraint (no search during training).
    """
    if actions.dim() != 2 or table.dim() != 2 or idx.dim() != 1:
        raise ValueError(
            "expected actions (N, act_dim), table (N, k), idx (B,), got "
            f"{tuple(actions.shape)}, {tuple(table.shape)}, {tuple(idx.shape)}"
        )
    if table.shape[0] != actions.shape[0]:
        raise ValueError(
            f"table has {table.shape[0]} rows but actions has {actions.shape[0]}: "
            "build the peer table on the same dataset as the actions"
        )
    return actions[table[idx]]
