"""Offline datasets: validation, `.npz` storage, D4RL/Minari HDF5 loaders, scores; env helpers."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from iclr26.pic.data import (
    REFERENCE_RETURNS,
    OfflineDataset,
    d4rl_reference,
    load_d4rl_hdf5,
    load_dataset,
    load_manifest,
    load_minari,
    manifest_path,
    normalized_score,
    save_dataset,
)
from iclr26.pic.evaluation import evaluate, make_env, to_env_action


def _arrays(n: int = 6, obs_dim: int = 3, act_dim: int = 2, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "observations": rng.normal(size=(n, obs_dim)).astype(np.float32),
        "actions": rng.uniform(-1, 1, size=(n, act_dim)).astype(np.float32),
        "rewards": rng.normal(size=n).astype(np.float32),
        "next_observations": rng.normal(size=(n, obs_dim)).astype(np.float32),
        "terminals": np.zeros(n, bool),
        "timeouts": np.zeros(n, bool),
    }


def _ds(**overrides) -> OfflineDataset:
    return OfflineDataset(**(_arrays() | overrides), env_id="Pendulum-v1", name="Pendulum-v1/test")


# ------------------------------------------------------------------------------------ validation


def test_valid_dataset_properties():
    ds = _ds()
    assert (len(ds), ds.obs_dim, ds.act_dim) == (6, 3, 2)
    assert ds.observations.dtype == np.float32 and ds.terminals.dtype == np.bool_


def test_mismatched_lengths_are_named():
    with pytest.raises(ValueError, match=r"different lengths .*'rewards': 5"):
        _ds(rewards=np.zeros(5, np.float32))


def test_nan_row_is_named():
    obs = _arrays()["observations"]
    obs[4, 1] = np.nan
    with pytest.raises(ValueError, match="observations has NaN/inf, first at row 4"):
        _ds(observations=obs)
    rewards = _arrays()["rewards"]
    rewards[2] = np.inf
    with pytest.raises(ValueError, match="rewards has NaN/inf, first at row 2"):
        _ds(rewards=rewards)


def test_out_of_range_actions_are_rejected():
    actions = _arrays()["actions"]
    actions[3, 0] = 1.5
    with pytest.raises(ValueError, match=r"actions must lie in \[-1, 1\].*row 3"):
        _ds(actions=actions)
    actions[3, 0] = 1.0 + 1e-7  # within the tolerance
    assert len(_ds(actions=actions)) == 6


def test_bad_shapes_and_empty():
    with pytest.raises(ValueError, match=r"rewards must be 1-D, got shape \(6, 1\)"):
        _ds(rewards=np.zeros((6, 1), np.float32))
    with pytest.raises(ValueError, match="widths must match"):
        _ds(next_observations=np.zeros((6, 4), np.float32))
    with pytest.raises(ValueError, match="at least one transition"):
        OfflineDataset(**_arrays(n=0), env_id="Pendulum-v1", name="x")


def test_episode_returns_split_at_terminals_and_timeouts():
    rewards = np.array([1, 2, 3, 4, 5, 6], np.float32)
    terminals = np.array([0, 1, 0, 0, 0, 0], bool)
    timeouts = np.array([0, 0, 0, 1, 0, 0], bool)
    ds = _ds(rewards=rewards, terminals=terminals, timeouts=timeouts)
    np.testing.assert_array_equal(ds.episode_returns(), [3.0, 7.0, 11.0])  # the trailing piece counts


def test_concat_cuts_the_seam():
    a, b = _ds(), OfflineDataset(**_arrays(n=4, seed=1), env_id="Pendulum-v1", name="b")
    ab = a.concat(b, "ab")
    assert len(ab) == 10 and ab.name == "ab"
    assert ab.timeouts[5] and not a.timeouts[5]  # a's open last episode is cut, a is unchanged
    np.testing.assert_allclose(ab.episode_returns(), [a.rewards.sum(), b.rewards.sum()], rtol=1e-6)
    with pytest.raises(ValueError, match="env_id differs"):
        a.concat(OfflineDataset(**_arrays(), env_id="Hopper-v5", name="h"), "x")


# -------------------------------------------------------------------------------------- storage


def test_npz_round_trip_is_bitwise_and_has_a_manifest(tmp_path):
    ds = _ds(terminals=np.array([0, 0, 1, 0, 0, 0], bool))
    path = save_dataset(ds, tmp_path / "medium", seed=7, manifest={"behavior": {"step": np.int64(3)}})
    assert path == tmp_path / "medium.npz" and manifest_path(path) == tmp_path / "medium.json"
    back = load_dataset(path)
    for key, value in ds.arrays().items():
        assert getattr(back, key).dtype == value.dtype
        assert getattr(back, key).tobytes() == value.tobytes()
    assert (back.env_id, back.name) == (ds.env_id, ds.name)
    info = load_manifest(path)
    assert (info["env_id"], info["name"], info["N"], info["obs_dim"], info["act_dim"]) == (
        "Pendulum-v1", "Pendulum-v1/test", 6, 3, 2,
    )  # fmt: skip
    assert info["seed"] == 7 and info["behavior"] == {"step": 3}
    assert {"gymnasium", "mujoco", "numpy", "iclr26"} <= set(info["versions"])
    with np.load(path, allow_pickle=False) as f:  # every stored array loads without pickle
        assert all(f[k].dtype != object for k in f.files)
    with pytest.raises(ValueError, match=r"manifest keys \['N'\] are written by save_dataset"):
        save_dataset(ds, tmp_path / "other", manifest={"N": 3})


def test_loading_refuses_pickled_arrays(tmp_path):
    arrays = _arrays() | {"rewards": np.array([1.0, "x", 3.0, 4.0, 5.0, 6.0], dtype=object)}
    np.savez(tmp_path / "evil.npz", **arrays, env_id=np.array("Pendulum-v1"))
    with pytest.raises(ValueError, match="allow_pickle=False"):
        load_dataset(tmp_path / "evil.npz")


def test_load_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset file not found"):
        load_dataset(tmp_path / "absent.npz")
    arrays = _arrays()
    del arrays["timeouts"], arrays["rewards"]
    np.savez(tmp_path / "partial.npz", **arrays)
    with pytest.raises(ValueError, match=r"lacks keys \['rewards', 'timeouts'\]"):
        load_dataset(tmp_path / "partial.npz")
    np.savez(tmp_path / "short.npz", **(_arrays() | {"actions": np.zeros((4, 2), np.float32)}), env_id="E-v0")
    with pytest.raises(ValueError, match="different lengths"):
        load_dataset(tmp_path / "short.npz")


# ------------------------------------------------------------------------------- D4RL and Minari


def test_d4rl_hdf5_with_next_observations(tmp_path):
    a = _arrays(n=5)
    with h5py.File(tmp_path / "hopper_medium.hdf5", "w") as f:
        for key, value in a.items():
            f[key] = value.astype(np.float64) if key in ("observations", "next_observations") else value
        del f["terminals"]
        f["terminals"] = a["terminals"].astype(np.float32)  # flags stored as floats
        f["infos/qpos"] = np.zeros((5, 2))
    ds = load_d4rl_hdf5(tmp_path / "hopper_medium.hdf5", "Hopper-v5")
    assert ds.name == "Hopper-v5/hopper_medium" and len(ds) == 5
    np.testing.assert_array_equal(ds.next_observations, a["next_observations"])


def test_d4rl_hdf5_derives_next_observations_within_episodes(tmp_path):
    obs = np.arange(8, dtype=np.float32)[:, None] * np.ones((1, 2), np.float32)
    # episodes: rows 0-2 cut by a timeout at 2, rows 3-4 terminated at 4, rows 5-7 open at the end
    terminals = np.array([0, 0, 0, 0, 1, 0, 0, 0], bool)
    timeouts = np.array([0, 0, 1, 0, 0, 0, 0, 0], bool)
    with h5py.File(tmp_path / "d.hdf5", "w") as f:
        f["observations"], f["actions"] = obs, np.zeros((8, 1), np.float32)
        f["rewards"], f["terminals"], f["timeouts"] = np.arange(8.0), terminals, timeouts
    ds = load_d4rl_hdf5(tmp_path / "d.hdf5", "Hopper-v5", name="toy")
    # dropped: row 2 (timeout: next obs unknown) and row 7 (last row); the terminal row 4 is kept
    np.testing.assert_array_equal(ds.rewards, [0, 1, 3, 4, 5, 6])
    np.testing.assert_array_equal(ds.next_observations[:, 0], [1, 2, 4, 4, 6, 7])
    np.testing.assert_array_equal(ds.terminals, [0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(ds.timeouts, [0, 1, 0, 0, 0, 1])  # rows before dropped ones are cut
    np.testing.assert_array_equal(ds.episode_returns(), [1, 7, 11])


def test_d4rl_hdf5_missing_keys(tmp_path):
    with h5py.File(tmp_path / "d.hdf5", "w") as f:
        f["observations"], f["actions"] = np.zeros((3, 2)), np.zeros((3, 1))
    with pytest.raises(ValueError, match=r"lacks keys \['rewards', 'terminals', 'timeouts'\]"):
        load_d4rl_hdf5(tmp_path / "d.hdf5", "Hopper-v5")
    with pytest.raises(FileNotFoundError):
        load_d4rl_hdf5(tmp_path / "absent.hdf5", "Hopper-v5")


def _write_minari(root, episodes):
    (root / "data").mkdir(parents=True)
    (root / "data" / "metadata.json").write_text(json.dumps({"dataset_id": "pendulum/toy-v0"}))
    with h5py.File(root / "data" / "main_data.hdf5", "w") as f:
        for i, (obs, actions, rewards, term, trunc) in enumerate(episodes):
            g = f.create_group(f"episode_{i}")
            g["observations"], g["actions"], g["rewards"] = obs, actions, rewards
            g["terminations"], g["truncations"] = term, trunc
            g.create_group("infos")


def test_minari_episodes_become_flat_transitions(tmp_path):
    obs0 = np.arange(4, dtype=np.float64)[:, None] * np.ones((1, 3))  # T = 3
    obs1 = 10 + np.arange(3, dtype=np.float64)[:, None] * np.ones((1, 3))  # T = 2
    episodes = [
        (obs0, np.full((3, 1), 0.5), np.array([1.0, 2, 3]), np.array([0, 0, 1], bool), np.zeros(3, bool)),
        (obs1, np.full((2, 1), -0.5), np.array([4.0, 5]), np.zeros(2, bool), np.zeros(2, bool)),
    ]
    root = tmp_path / "pendulum" / "toy-v0"
    _write_minari(root, episodes)
    for path in (root, root / "data" / "main_data.hdf5"):
        ds = load_minari(path, "Pendulum-v1")
        assert ds.name == "Pendulum-v1/pendulum/toy-v0" and len(ds) == 5
        np.testing.assert_array_equal(ds.observations[:, 0], [0, 1, 2, 10, 11])
        np.testing.assert_array_equal(ds.next_observations[:, 0], [1, 2, 3, 11, 12])
        np.testing.assert_array_equal(ds.terminals, [0, 0, 1, 0, 0])
        np.testing.assert_array_equal(ds.timeouts, [0, 0, 0, 0, 1])  # episode 1 ended open: cut
        np.testing.assert_array_equal(ds.episode_returns(), [6, 9])


def test_minari_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_minari(tmp_path / "absent", "Pendulum-v1")
    bad = (np.zeros((3, 3)), np.zeros((3, 1)), np.zeros(3), np.zeros(3, bool), np.zeros(3, bool))
    _write_minari(tmp_path / "bad", [bad])
    with pytest.raises(ValueError, match=r"episode_0 has 3 observations for 3 actions \(expected T\+1\)"):
        load_minari(tmp_path / "bad", "Pendulum-v1")


# ------------------------------------------------------------------------------------- scores


def test_normalized_score_values():
    lo, hi = REFERENCE_RETURNS["hopper"]
    assert normalized_score(lo, lo, hi) == pytest.approx(0.0)
    assert normalized_score(np.array([hi, hi]), lo, hi) == pytest.approx(100.0)
    assert normalized_score(np.array([1000.0, 2000.0]), 0.0, 3000.0) == pytest.approx(50.0)
    assert normalized_score(-200.0, -1200.0, -150.0) == pytest.approx(100 * 1000 / 1050)
    with pytest.raises(ValueError, match="expert_return equals random_return"):
        normalized_score(1.0, 2.0, 2.0)


def test_d4rl_reference_lookup():
    assert d4rl_reference("Hopper-v5") == (-20.272305, 3234.3)
    assert d4rl_reference("HalfCheetah-v5") == REFERENCE_RETURNS["halfcheetah"]
    assert d4rl_reference("walker2d-medium-v2") == REFERENCE_RETURNS["walker2d"]
    assert d4rl_reference("Pendulum-v1") is None


# --------------------------------------------------------------------------------- environments


def test_unknown_env_id_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown environment id 'Hoper-v5'.*Pendulum-v1.*Hopper-v5"):
        make_env("Hoper-v5")


def test_to_env_action_rescales_to_pendulum_bounds():
    space = make_env("Pendulum-v1").action_space
    assert (space.low[0], space.high[0]) == (-2.0, 2.0)
    for a, want in ((-1.0, -2.0), (0.0, 0.0), (0.5, 1.0), (1.0, 2.0), (3.0, 2.0)):
        np.testing.assert_allclose(to_env_action(np.array([a]), space), [want])
    with pytest.raises(ValueError, match=r"action has shape \(2,\)"):
        to_env_action(np.zeros(2), space)


def test_evaluate_is_seeded():
    zero = evaluate("Pendulum-v1", lambda obs: np.zeros(1), episodes=2, seed=3)
    assert zero.shape == (2,) and np.all((zero < 0) & (zero > -2000))
    np.testing.assert_array_equal(zero, evaluate("Pendulum-v1", lambda obs: np.zeros(1), episodes=2, seed=3))
    assert zero[1] == evaluate("Pendulum-v1", lambda obs: np.zeros(1), episodes=1, seed=4)[0]  # seed + i
