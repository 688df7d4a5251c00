"""PIC peer table: exactness against brute force, ANN recall, duplicates, determinism, cache, gather."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("faiss")

from iclr26.pic import peers
from iclr26.pic.peers import (
    cached_peer_table,
    gather_peer_actions,
    peer_table,
    recall_at_k,
    sidecar_path,
)


def brute_force_peers(x: np.ndarray, k: int) -> np.ndarray:
    """Reference: argsort of float64 pairwise squared distances, self excluded, ties by lower index."""
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    return np.argsort(d, axis=1, kind="stable")[:, :k]


def peer_distances(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Squared distance from each state to each of its listed peers, (N, k)."""
    return ((x[table] - x[:, None, :]) ** 2).sum(-1)


@pytest.fixture(scope="module")
def gauss_5k() -> tuple[np.ndarray, np.ndarray]:
    """5000 random 17-D states (no exact ties) and their exact k=10 peer table."""
    x = np.random.default_rng(0).standard_normal((5000, 17))
    return x, peer_table(x, 10, "exact")


@pytest.mark.parametrize(("n", "d", "k"), [(2, 3, 1), (300, 6, 7), (500, 17, 20)])
def test_exact_matches_brute_force(n: int, d: int, k: int) -> None:
    x = np.random.default_rng(n).standard_normal((n, d))
    table = peer_table(x, k, "exact", batch=128)
    assert table.dtype == np.int64 and table.shape == (n, k)
    np.testing.assert_array_equal(table, brute_force_peers(x, k))


def test_exact_is_precise_far_from_origin() -> None:
    # states at ~1e4 with unit spread: faiss's float32 ‖x‖² + ‖y‖² − 2x·y would scramble the order
    x = 1e4 + np.random.default_rng(1).standard_normal((400, 5))
    np.testing.assert_array_equal(peer_table(x, 8, "exact"), brute_force_peers(x, 8))


def test_normalize_standardizes_each_dimension() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 4)) * np.array([100.0, 1.0, 0.01, 5.0])
    x[:, 3] = 7.0  # a constant dimension is left unscaled, not divided by zero
    z = (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1.0)
    got = peer_table(x, 6, "exact", normalize=True)
    np.testing.assert_array_equal(got, brute_force_peers(z, 6))
    assert not np.array_equal(got, peer_table(x, 6, "exact"))  # the scale of dimension 0 dominated


def test_auto_is_exact_on_small_datasets(gauss_5k) -> None:
    x, exact = gauss_5k
    np.testing.assert_array_equal(peer_table(x, 10), exact)


def test_exact_fixture_matches_brute_force(gauss_5k) -> None:
    x, exact = gauss_5k
    rows = np.random.default_rng(3).choice(len(x), 200, replace=False)
    d = ((x[rows, None, :] - x[None, :, :]) ** 2).sum(-1)
    d[np.arange(rows.size), rows] = np.inf
    np.testing.assert_array_equal(exact[rows], np.argsort(d, axis=1, kind="stable")[:, :10])


def test_hnsw_recall(gauss_5k) -> None:
    x, exact = gauss_5k
    assert recall_at_k(peer_table(x, 10, "hnsw"), exact) >= 0.95


def test_ivf_recall(gauss_5k) -> None:
    # isotropic 17-D Gaussian is IVF's worst case: nprobe=16 of ~71 lists finds ≈0.89; 32 lists ≈0.98
    x, exact = gauss_5k
    assert recall_at_k(peer_table(x, 10, "ivf", nprobe=32), exact) >= 0.9


def test_ivf_probing_every_list_is_exact(gauss_5k) -> None:
    x, exact = gauss_5k
    np.testing.assert_array_equal(peer_table(x, 10, "ivf", nlist=20, nprobe=20), exact)


def test_ivf_short_lists_fall_back_to_exact() -> None:
    # 60 lists over 300 states: probing one list often yields fewer than k + 1 candidates
    x = np.random.default_rng(4).standard_normal((300, 3))
    table = peer_table(x, 12, "ivf", nlist=60, nprobe=1)
    assert (table >= 0).all() and (table != np.arange(300)[:, None]).all()
    assert all(len(set(row)) == 12 for row in table.tolist())


@pytest.mark.parametrize("method", ["exact", "hnsw", "ivf"])
def test_duplicate_states(method: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((600, 6))
    x[:40] = x[0]  # 40 copies of one state: more than k + 1 + margin identical neighbours
    x[100:103] = x[100]  # a triple
    k = 10
    table = peer_table(x, k, method, nlist=8, nprobe=8)
    rows = np.arange(len(x))[:, None]
    assert (table != rows).all(), "a state is listed as its own peer"
    assert all(len(set(row)) == k for row in table.tolist()), "a row repeats a peer"
    assert (table >= 0).all() and (table < len(x)).all()
    # every listed peer set is a valid k-nearest set: its distances are the k smallest non-self ones
    ref = brute_force_peers(x, k)
    np.testing.assert_allclose(
        np.sort(peer_distances(x, table), axis=1), np.sort(peer_distances(x, ref), axis=1), atol=1e-12
    )
    assert set(table[0]) <= set(range(1, 40)), "duplicates of state 0 are its nearest peers"
    assert {101, 102} <= set(table[100][:2].tolist())


def test_all_states_identical() -> None:
    table = peer_table(np.ones((25, 3)), 24, "exact")
    assert (np.sort(table, axis=1) == np.array([[j for j in range(25) if j != i] for i in range(25)])).all()


@pytest.mark.parametrize("method", ["exact", "hnsw", "ivf"])
def test_deterministic_and_thread_independent(gauss_5k, method: str) -> None:
    x, _ = gauss_5k
    first = peer_table(x, 10, method, seed=3, threads=2)
    np.testing.assert_array_equal(first, peer_table(x, 10, method, seed=3, threads=2))
    np.testing.assert_array_equal(first, peer_table(x, 10, method, seed=3, threads=1))
    np.testing.assert_array_equal(first, peer_table(x, 10, method, seed=3, batch=777))


def test_threads_setting_is_restored(gauss_5k) -> None:
    faiss = pytest.importorskip("faiss")
    before = faiss.omp_get_max_threads()
    peer_table(gauss_5k[0][:500], 5, "hnsw", threads=1)
    assert faiss.omp_get_max_threads() == before


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, ValueError, "k must be >= 1"),
        ({"k": 2.5}, TypeError, "k must be an int"),
        ({"k": True}, TypeError, "k must be an int"),
        ({"k": 50}, ValueError, r"k larger than the dataset: k=50 .* N=50"),
        ({"k": 80}, ValueError, r"k larger than the dataset: k=80 .* N=50"),
        ({"method": "kdtree"}, ValueError, r"method must be one of .*'kdtree'"),
        ({"nlist": 51, "method": "ivf"}, ValueError, "nlist=51"),
        ({"hnsw_m": 1}, ValueError, "hnsw_m must be >= 2"),
        ({"threads": 0}, ValueError, "threads must be >= 1"),
    ],
)
def test_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    x = np.random.default_rng(6).standard_normal((50, 3))
    args = {"k": 5, "method": "exact", **kwargs}
    with pytest.raises(error, match=match):
        peer_table(x, args.pop("k"), args.pop("method"), **args)


@pytest.mark.parametrize(
    ("obs", "match"),
    [
        (np.zeros(10), r"2-D .* shape \(10,\)"),
        (np.zeros((4, 5, 3)), r"2-D .* shape \(4, 5, 3\)"),
        (np.zeros((10, 0)), "no state dimensions"),
    ],
)
def test_bad_shapes(obs: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        peer_table(obs, 1)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_states(bad: float) -> None:
    x = np.random.default_rng(7).standard_normal((30, 3))
    x[17, 1] = bad
    with pytest.raises(ValueError, match=r"NaN or inf in 1 of 30 rows \(first at row 17\)"):
        peer_table(x, 3)


def test_recall_at_k() -> None:
    exact = np.array([[1, 2, 3, 4], [0, 2, 3, 4]])
    assert recall_at_k(exact, exact) == 1.0
    assert recall_at_k(np.array([[4, 3, 9, 8], [0, 2, 3, 4]]), exact) == pytest.approx(0.75)
    assert recall_at_k(np.array([[9, 9, 9, 9], [5, 6, 7, 8]]), exact) == 0.0
    with pytest.raises(ValueError, match="same rows"):
        recall_at_k(exact[:1], exact)


def test_cache_hit_and_sidecar(tmp_path, monkeypatch) -> None:
    x = np.random.default_rng(8).standard_normal((400, 5)).astype(np.float32)
    path = tmp_path / "data" / "peers.npy"
    table = cached_peer_table(x, path, 6, "hnsw", seed=1)
    meta = json.loads(sidecar_path(path).read_text())
    assert meta["k"] == 6 and meta["n"] == 400 and meta["method"] == "hnsw"
    assert meta["params"] == {"normalize": False, "seed": 1, "hnsw_m": 32, "ef_search": 128}
    assert len(meta["observations_blake2b"]) == 40 and meta["faiss"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["peers.npy", "peers.npy.json"]  # no tmp left

    def no_search(*args, **kwargs):
        raise AssertionError("a matching cache was recomputed")

    monkeypatch.setattr(peers, "peer_table", no_search)
    np.testing.assert_array_equal(cached_peer_table(x.copy(), path, 6, "hnsw", seed=1), table)
    # batch and threads do not change the table, so they do not invalidate it
    np.testing.assert_array_equal(cached_peer_table(x, path, 6, "hnsw", seed=1, batch=64, threads=1), table)


@pytest.mark.parametrize(
    "change",
    ["data", "k", "method", "normalize", "torn"],
)
def test_stale_cache_is_recomputed(tmp_path, monkeypatch, change: str) -> None:
    x = np.random.default_rng(9).standard_normal((300, 4))
    path = tmp_path / "peers.npy"
    cached_peer_table(x, path, 5, "exact")
    calls = []
    real = peers.peer_table
    monkeypatch.setattr(peers, "peer_table", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    k, method, kw = 5, "exact", {}
    if change == "data":
        x = x.copy()
        x[123, 2] += 1e-6
    elif change == "k":
        k = 7
    elif change == "method":
        method = "ivf"
    elif change == "normalize":
        kw = {"normalize": True}
    else:  # a table that no longer matches its sidecar (e.g. replaced by another writer)
        np.save(path, np.zeros((300, 5), dtype=np.int64))
    table = cached_peer_table(x, path, k, method, **kw)
    assert calls == [1]
    np.testing.assert_array_equal(table, real(x, k, method, **kw))
    np.testing.assert_array_equal(np.load(path), table)
    assert json.loads(sidecar_path(path).read_text())["k"] == k


def test_cache_rejects_bad_arguments(tmp_path) -> None:
    x = np.zeros((10, 2))
    with pytest.raises(ValueError, match=r"must end in \.npy"):
        cached_peer_table(x, tmp_path / "peers.bin", 3)
    with pytest.raises(TypeError, match="unknown peer_table parameters"):
        cached_peer_table(x, tmp_path / "peers.npy", 3, ef_construction=40)


def test_gather_peer_actions() -> None:
    n, k, act_dim = 50, 4, 3
    actions = torch.randn(n, act_dim)
    table = torch.from_numpy(peer_table(np.random.default_rng(10).standard_normal((n, 5)), k, "exact"))
    idx = torch.tensor([0, 7, 7, 49])
    got = gather_peer_actions(actions, table, idx)
    assert got.shape == (4, k, act_dim)
    for b, i in enumerate(idx.tolist()):
        for j in range(k):
            assert torch.equal(got[b, j], actions[table[i, j]])
    with pytest.raises(ValueError, match="table has 50 rows but actions has 49"):
        gather_peer_actions(actions[:49], table, idx)
    with pytest.raises(ValueError, match=r"idx \(B,\)"):
        gather_peer_actions(actions, table, idx[None])
