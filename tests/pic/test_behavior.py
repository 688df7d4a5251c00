"""The online behaviour agents (TD3, SAC) and the D4RL-style dataset recipe: update rules, five
datasets, caching, resume."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.pic.algorithms import SAC, TD3, SACConfig, TD3Config
from iclr26.pic.behavior import check_same_run, snapshot_policy
from iclr26.pic.config import DATASET_NAMES, GenerationConfig
from iclr26.pic.config import generation_preset as preset
from iclr26.pic.data import load_dataset, load_manifest
from iclr26.pic.generation import generate_datasets, medium_snapshot

SMOKE = preset("smoke")  # Pendulum-v1: 600 TD3 steps, 300 transitions per dataset


class _Interrupted(Exception):
    """Stands for Ctrl-C or a killed job in the resume tests."""


class _Recorder:
    """Records progress calls; raises `_Interrupted` at a training step or after a dataset."""

    def __init__(self, stop_at: int | None = None, stop_after: str | None = None) -> None:
        self.calls: list[tuple[int, int, dict]] = []
        self.stop_at, self.stop_after = stop_at, stop_after

    def __call__(self, step: int, total: int, info: dict) -> None:
        self.calls.append((step, total, info))
        at_step = info["phase"] == "train" and step == self.stop_at
        if at_step or (self.stop_after is not None and info.get("name") == self.stop_after):
            raise _Interrupted(f"interrupted at step {step}, {info}")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("pendulum")
    rec = _Recorder()
    paths = generate_datasets("Pendulum-v1", out, SMOKE, on_progress=rec)
    return out, paths, rec


# ------------------------------------------------------------------------------------------ TD3


def _batch(obs_dim=3, act_dim=1, n=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {
        "observations": torch.randn(n, obs_dim, generator=g),
        "actions": torch.rand(n, act_dim, generator=g) * 2 - 1,
        "rewards": torch.randn(n, generator=g),
        "next_observations": torch.randn(n, obs_dim, generator=g),
        "dones": (torch.rand(n, generator=g) < 0.3).float(),
    }


def test_td3_critic_loss_is_clipped_double_q():
    cfg = TD3Config(hidden=(16,), policy_noise=0.0, gamma=0.9)
    agent, batch = TD3.create(3, 1, cfg, seed=0), _batch()
    with torch.no_grad():  # y = r + γ(1 − d) min(Q1', Q2')(s', μ'(s')), no smoothing noise
        a2 = agent.actor_target(batch["next_observations"])[0]
        q2 = agent.critic_target(torch.cat([batch["next_observations"], a2], -1)).squeeze(-1)
        y = batch["rewards"] + 0.9 * (1 - batch["dones"]) * torch.minimum(q2[0], q2[1])
        q = agent.critic(torch.cat([batch["observations"], batch["actions"]], -1)).squeeze(-1)
        want = ((q[0] - y) ** 2).mean() + ((q[1] - y) ** 2).mean()
    assert float(agent.update(batch)["critic_loss"]) == pytest.approx(want.item(), rel=1e-5)


def test_td3_delays_actor_and_target_updates():
    agent = TD3.create(3, 1, TD3Config(hidden=(16,), policy_delay=2, tau=0.5), seed=0)
    actor0 = [p.clone() for p in agent.actor.parameters()]
    target0 = [p.clone() for p in agent.critic_target.parameters()]
    out = agent.update(_batch(seed=1))
    assert "actor_loss" not in out
    assert all(torch.equal(a, b) for a, b in zip(actor0, agent.actor.parameters(), strict=True))
    assert all(torch.equal(a, b) for a, b in zip(target0, agent.critic_target.parameters(), strict=True))
    assert "actor_loss" in agent.update(_batch(seed=2))
    assert not all(torch.equal(a, b) for a, b in zip(actor0, agent.actor.parameters(), strict=True))
    for t0, t, c in zip(target0, agent.critic_target.parameters(), agent.critic.parameters(), strict=True):
        torch.testing.assert_close(t, 0.5 * t0 + 0.5 * c)  # Polyak with τ = 0.5


def test_td3_build_leaves_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a, b = TD3.create(3, 1, TD3Config(hidden=(8,)), seed=5), TD3.create(3, 1, TD3Config(hidden=(8,)), seed=5)
    assert torch.equal(torch.rand(3), expected)
    assert all(torch.equal(x, y) for x, y in zip(a.actor.parameters(), b.actor.parameters(), strict=True))


# -------------------------------------------------------------------------------------- configs


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match=r"start_steps must lie in \[0, total_steps=100\)"):
        GenerationConfig(total_steps=100, start_steps=100)
    with pytest.raises(ValueError, match="eval_every=500 exceeds total_steps=100"):
        GenerationConfig(total_steps=100, start_steps=10, eval_every=500)
    with pytest.raises(ValueError, match="medium_fraction"):
        GenerationConfig(medium_fraction=1.5)
    with pytest.raises(ValueError, match=r"TD3Config\.gamma"):
        TD3Config(gamma=0.0)
    with pytest.raises(ValueError, match="unknown generation preset 'huge'"):
        preset("huge")
    with pytest.raises(ValueError, match=r"unknown GenerationConfig fields \['steps'\]"):
        preset("smoke", steps=3)


def test_unknown_env_id_fails_before_creating_anything(tmp_path):
    with pytest.raises(ValueError, match="unknown environment id 'Pendulum-v9'"):
        generate_datasets("Pendulum-v9", tmp_path / "out", SMOKE)
    assert not (tmp_path / "out").exists()


# -------------------------------------------------------------------------------------- recipe


def _chained(ds) -> bool:
    """Within an episode, each next observation is the following observation."""
    inside = ~(ds.terminals | ds.timeouts)[:-1]
    return bool(np.array_equal(ds.next_observations[:-1][inside], ds.observations[1:][inside]))


def test_five_datasets_with_manifests(generated):
    out, paths, rec = generated
    assert set(paths) == set(DATASET_NAMES)
    sets = {name: load_dataset(p) for name, p in paths.items()}
    summary = json.loads((out / "generation.json").read_text())
    medium_step = summary["snapshots"][summary["medium_snapshot"]]["step"]
    assert [len(sets[n]) for n in ("random", "medium", "expert", "medium-expert")] == [300, 300, 300, 600]
    assert len(sets["medium-replay"]) == min(medium_step, SMOKE.dataset_size)
    for name, ds in sets.items():
        assert ds.env_id == "Pendulum-v1" and ds.name == f"Pendulum-v1/{name}"
        assert ds.act_dim == 1 and np.abs(ds.actions).max() <= 1.0
        assert _chained(ds), name
        assert not ds.terminals.any()  # Pendulum never terminates; its episodes are cut at 200 steps
        info = load_manifest(paths[name])
        assert info["env_id"] == "Pendulum-v1" and info["seed"] == SMOKE.seed and info["N"] == len(ds)
        assert {"gymnasium", "mujoco", "numpy", "torch", "iclr26"} <= set(info["versions"])
        assert info["numerics"] == summary["numerics"] and info["numerics"]["torch_cpu_capability"]
        assert info["numerics"]["mkl_cbwr"] == os.environ.get("MKL_CBWR")
        refs = info["reference_returns"]
        assert refs["random"] < 0 and refs["expert"] < 0 and refs["episodes"] == SMOKE.eval_episodes
        assert "step" in info["behavior"] or name == "medium-expert"
    me = sets["medium-expert"]
    np.testing.assert_array_equal(me.observations, np.concatenate([sets["medium"].observations,
                                                                   sets["expert"].observations]))  # fmt: skip
    medium = load_manifest(paths["medium"])["behavior"]
    expert = load_manifest(paths["expert"])["behavior"]
    assert expert["eval_return"] == max(s["eval_return"] for s in summary["snapshots"])
    assert medium["step"] == medium_step and expert["action_noise"] == SMOKE.expert_noise
    steps = [c[0] for c in rec.calls if c[2]["phase"] == "train"]
    assert steps == list(range(1, SMOKE.total_steps + 1))
    assert [c[2]["name"] for c in rec.calls if c[2]["phase"] == "dataset"] == list(DATASET_NAMES)
    assert sum("eval_return" in c[2] for c in rec.calls) == SMOKE.total_steps // SMOKE.eval_every


def test_finished_datasets_are_cached(generated):
    out, paths, _ = generated
    mtimes = {p: p.stat().st_mtime_ns for p in out.iterdir()}
    rec = _Recorder()
    assert generate_datasets("Pendulum-v1", out, SMOKE, on_progress=rec) == paths
    assert rec.calls == []  # no training step, no dataset written
    assert {p: p.stat().st_mtime_ns for p in out.iterdir()} == mtimes
    with pytest.raises(ValueError, match=r"different GenerationConfig \(dataset_size: 300 -> 301\)"):
        generate_datasets("Pendulum-v1", out, preset("smoke", dataset_size=301))
    with pytest.raises(ValueError, match="belongs to env 'Pendulum-v1'"):
        generate_datasets("MountainCarContinuous-v0", out, SMOKE)


def test_data_generated_before_the_shared_td3_is_still_recognised(generated):
    out, _, _ = generated
    summary = json.loads((out / "generation.json").read_text())
    td3 = summary["config"]["td3"]  # the behaviour agent's policy_delay was called policy_freq then
    summary["config"]["td3"] = {("policy_freq" if k == "policy_delay" else k): v for k, v in td3.items()}
    check_same_run(summary, "Pendulum-v1", SMOKE, out / "generation.json")
    summary["config"]["td3"]["policy_freq"] = 3
    with pytest.raises(ValueError, match="different GenerationConfig"):
        check_same_run(summary, "Pendulum-v1", SMOKE, out / "generation.json")


def test_resume_after_interruption_equals_an_uninterrupted_run(generated, tmp_path):
    _, reference, _ = generated
    stop = _Recorder(stop_at=450)  # checkpoints are taken at episode ends (every 200 steps here)
    with pytest.raises(_Interrupted):
        generate_datasets("Pendulum-v1", tmp_path, SMOKE, on_progress=stop)
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert state["run"]["step"] == 400 and not state["run"]["train_done"]
    assert not any((tmp_path / f"{n}.npz").exists() for n in DATASET_NAMES)
    resumed = _Recorder()
    paths = generate_datasets("Pendulum-v1", tmp_path, SMOKE, on_progress=resumed)
    steps = [c[0] for c in resumed.calls if c[2]["phase"] == "train"]
    assert steps == list(range(401, SMOKE.total_steps + 1))  # continued, not restarted
    for name in DATASET_NAMES:
        a, b = load_dataset(reference[name]), load_dataset(paths[name])
        for key, value in a.arrays().items():
            assert getattr(b, key).tobytes() == value.tobytes(), (name, key)
        ma, mb = load_manifest(reference[name]), load_manifest(paths[name])
        assert ma["behavior"] == mb["behavior"] and ma["reference_returns"] == mb["reference_returns"]
    # the datasets may come from early snapshots: compare the whole final training state as well
    final_a = torch.load(reference["random"].parent / "checkpoint.pt", weights_only=True)
    final_b = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert final_a["rng"] == final_b["rng"]
    for part in ("buffer", "agent"):
        flat_a, flat_b = _flatten(final_a[part]), _flatten(final_b[part])
        assert flat_a.keys() == flat_b.keys()
        for key, value in flat_a.items():
            assert torch.equal(value, flat_b[key]) if torch.is_tensor(value) else value == flat_b[key], key
    snaps_a, snaps_b = final_a["run"]["snapshots"], final_b["run"]["snapshots"]
    assert [s["eval_returns"] for s in snaps_a] == [s["eval_returns"] for s in snaps_b]


def test_resume_while_writing_datasets(generated, tmp_path):
    _, reference, _ = generated
    with pytest.raises(_Interrupted):
        generate_datasets("Pendulum-v1", tmp_path, SMOKE, on_progress=_Recorder(stop_after="medium"))
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == ["medium.npz", "random.npz"]
    resumed = _Recorder()
    paths = generate_datasets("Pendulum-v1", tmp_path, SMOKE, on_progress=resumed)
    assert [c[2]["name"] for c in resumed.calls] == [
        "medium-replay",
        "expert",
        "medium-expert",
    ]  # no training
    for name in DATASET_NAMES:
        a, b = load_dataset(reference[name]), load_dataset(paths[name])
        assert all(getattr(b, k).tobytes() == v.tobytes() for k, v in a.arrays().items()), name


def _flatten(tree, prefix=""):
    if isinstance(tree, dict):
        return {k: v for key, sub in tree.items() for k, v in _flatten(sub, f"{prefix}/{key}").items()}
    if isinstance(tree, list | tuple):
        return {k: v for i, sub in enumerate(tree) for k, v in _flatten(sub, f"{prefix}/{i}").items()}
    return {prefix: tree}


# ------------------------------------------------------------------------------------------ SAC

SAC_SMOKE = preset("smoke", agent="sac", sac=SACConfig(hidden=(32, 32), batch_size=32))


def test_sac_is_edac_with_two_critics_and_no_extra_terms():
    cfg = SACConfig()
    assert (cfg.num_critics, cfg.eta, cfg.delta, cfg.normalize_q, cfg.normalize_states) == (
        2,
        0,
        0,
        False,
        False,
    )
    with pytest.raises(ConfigError, match="eta and normalize_q must stay"):
        SACConfig(eta=0.5)
    with pytest.raises(ConfigError, match=r"GenerationConfig\.agent"):
        preset("smoke", agent="ppo")


def test_sac_explores_by_sampling_and_acts_by_its_mean():
    agent = SAC.create(3, 2, SACConfig(hidden=(16,)), seed=0)
    obs = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    rng = np.random.default_rng(0)
    samples = np.stack([agent.explore(obs, rng) for _ in range(2000)])
    assert samples.shape == (2000, 2) and np.abs(samples).max() < 1
    with torch.no_grad():
        mu, log_std = agent.policy(torch.as_tensor(obs)[None])
    # tanh of a Gaussian sample: its pre-tanh mean and std are μ and σ
    np.testing.assert_allclose(np.arctanh(samples).mean(0), mu[0].numpy(), atol=0.1)
    np.testing.assert_allclose(np.arctanh(samples).std(0), log_std[0].exp().numpy(), rtol=0.1)
    np.testing.assert_allclose(agent.act(obs), np.tanh(mu[0].numpy()), atol=1e-6)


def test_sac_datasets_name_their_agent_and_resume_exactly(tmp_path):
    whole = generate_datasets("Pendulum-v1", tmp_path / "whole", SAC_SMOKE)
    with pytest.raises(_Interrupted):
        generate_datasets("Pendulum-v1", tmp_path / "part", SAC_SMOKE, on_progress=_Recorder(stop_at=450))
    part = generate_datasets("Pendulum-v1", tmp_path / "part", SAC_SMOKE)
    for name in DATASET_NAMES:
        a, b = load_dataset(whole[name]), load_dataset(part[name])
        assert all(getattr(b, k).tobytes() == v.tobytes() for k, v in a.arrays().items()), name
    medium = load_manifest(whole["medium"])
    assert medium["agent"] == "sac" and medium["behavior"]["policy"].startswith("SAC snapshot")
    assert medium["behavior"]["action_noise"] is None  # a SAC snapshot samples its own policy
    assert "td3" not in medium["config"] and medium["config"]["sac"]["num_critics"] == 2
    summary = json.loads((tmp_path / "whole" / "generation.json").read_text())
    state = torch.load(tmp_path / "whole" / "checkpoint.pt", weights_only=True)
    snap = state["run"]["snapshots"][summary["best_snapshot"]]
    assert snap["kind"] == "tanh_gaussian" and set(snap["normalizer"]) == {"mean", "std"}
    # the deterministic snapshot policy is the agent's tanh(μ(s)); the stochastic one samples around it
    agent = SAC.create(3, 1, SAC_SMOKE.sac)
    agent.actor.load_state_dict(snap["actor"])
    obs = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, -2.0]], dtype=np.float32)
    mean_policy = snapshot_policy(snap, 3, 1, SAC_SMOKE.sac.hidden, 0.0, 0)
    np.testing.assert_allclose(mean_policy(obs), agent.act(obs), atol=1e-6)
    sampling = snapshot_policy(snap, 3, 1, SAC_SMOKE.sac.hidden, 0.0, 0, stochastic=True)
    assert not np.allclose(sampling(obs), agent.act(obs))


def test_data_made_before_sac_was_an_option_is_still_recognised(generated):
    out, _, _ = generated
    summary = json.loads((out / "generation.json").read_text())
    del summary["config"]["agent"]  # TD3 data from before the `agent` field
    check_same_run(summary, "Pendulum-v1", SMOKE, out / "generation.json")


def test_medium_is_the_snapshot_closest_to_a_third_before_the_curve_passes_it():
    # a jump past the threshold (SAC on Hopper): the snapshot before the jump is the medium policy
    assert medium_snapshot([20, 400, 720, 2900, 3100], 1000)[0] == 2
    assert medium_snapshot([20, 400, 990, 2900], 1000)[0] == 2
    assert medium_snapshot([20, 400, 1010, 900], 1000)[0] == 2  # never past the first crossing
    assert medium_snapshot([20, 400, 1400], 1000)[0] == 2  # 1400 is closer than 400
    index, rule = medium_snapshot([-5, -3], 10)
    assert index == 1 and "took the closest" in rule
