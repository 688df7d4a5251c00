"""Stacked training equals training each run alone: R (dataset, seed) runs of one algorithm trained as
one batched model give every run's losses and weights of the run trained by itself."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26.pic.algorithms import make_algorithm
from iclr26.pic.algorithms.common import state_stats
from iclr26.pic.data import OfflineDataset
from iclr26.pic.networks import EnsembleMLP
from iclr26.pic.peers import peer_table
from iclr26.pic.stacked import StackedSampler, actor_states, stack_runs
from iclr26.pic.train import run_sampler, train_offline

TINY = {"hidden": (32, 32), "batch_size": 16}
CONFIGS = {
    "bc": TINY,
    "td3_bc": TINY,
    "iql": TINY,
    "pic": {**TINY, "score_dtype": "float32"},
    "epic": {**TINY, "num_critics": 3, "eta": 0.5, "score_dtype": "float32"},
    "edac": {**TINY, "num_critics": 3},
}
STEPS = 12


def _dataset(seed: int, n: int = 120, obs_dim: int = 3, act_dim: int = 2) -> OfflineDataset:
    """Random transitions in episodes of 40 steps (the last one cut by the time limit)."""
    rng = np.random.default_rng(seed)
    obs = rng.normal(loc=seed, size=(n, obs_dim)).astype(np.float32)
    ends = np.zeros(n, dtype=bool)
    ends[39::40] = True
    return OfflineDataset(
        observations=obs,
        actions=rng.uniform(-1, 1, (n, act_dim)).astype(np.float32),
        rewards=rng.normal(size=n).astype(np.float32),
        next_observations=obs + rng.normal(scale=0.1, size=obs.shape).astype(np.float32),
        terminals=rng.uniform(size=n) < 0.02,
        timeouts=ends,
        name=f"toy-{seed}",
        env_id="Toy-v0",
    )


DATASETS = [_dataset(0), _dataset(1)]
PEERS = [peer_table(ds.observations, k=4, method="exact") for ds in DATASETS]
SEEDS = [3, 7]


def _alone(name: str, ds: OfflineDataset, peers: np.ndarray, seed: int):
    mean, std = state_stats(ds.observations)
    algo = make_algorithm(name, ds.obs_dim, ds.act_dim, CONFIGS[name], seed, state_mean=mean, state_std=std)
    sampler = run_sampler(name, ds, seed, algo.config, peers=peers)
    history = train_offline(algo, sampler, STEPS, log_every=1)
    return algo, history


@pytest.mark.parametrize(
    "name, datasets, seeds",
    [(name, 2, 2) for name in sorted(CONFIGS)] + [("pic", 1, 1), ("epic", 1, 1)],  # and a stack of one
)
def test_stacked_runs_equal_runs_trained_alone(name, datasets, seeds):
    stack = stack_runs(name, DATASETS[:datasets], SEEDS[:seeds], CONFIGS[name], peers=PEERS[:datasets])
    assert stack.runs == datasets * seeds and stack.algorithm.runs == stack.runs
    assert [r["dataset"] for r in stack.runs_info] == [
        ds.name for ds in DATASETS[:datasets] for _ in SEEDS[:seeds]
    ]
    stacked_history = train_offline(stack.algorithm, stack.sampler, STEPS, log_every=1)
    for r, info in enumerate(stack.runs_info):
        ds_index = [ds.name for ds in DATASETS].index(info["dataset"])
        algo, history = _alone(name, DATASETS[ds_index], PEERS[ds_index], info["seed"])
        # every logged loss of run r, step by step
        for row, mine in zip(stacked_history, history, strict=True):
            for key, value in mine.items():
                if key in ("step",) or key.endswith("_s"):
                    continue
                np.testing.assert_allclose(row[key][r], value, rtol=1e-4, atol=1e-5, err_msg=f"{key} {r}")
        # and the weights it ends with
        single = stack.algorithm.run(r)
        for part in single.MODULES:
            mine_state, alone_state = getattr(single, part).state_dict(), getattr(algo, part).state_dict()
            for key, value in alone_state.items():
                torch.testing.assert_close(mine_state[key], value, rtol=1e-4, atol=1e-5, msg=f"{part}.{key}")
        obs = DATASETS[ds_index].observations[:5]
        np.testing.assert_allclose(single.act(obs), algo.act(obs), rtol=1e-4, atol=1e-5)


def test_stacked_checkpoint_resumes_exactly(tmp_path):
    def fresh():
        return stack_runs("pic", DATASETS, SEEDS, CONFIGS["pic"], peers=PEERS)

    whole = fresh()
    train_offline(whole.algorithm, whole.sampler, 8, log_every=2)
    part = fresh()
    path = tmp_path / "stack.pt"
    train_offline(part.algorithm, part.sampler, 4, checkpoint_path=path, checkpoint_every=4, log_every=2)
    resumed = fresh()
    history = train_offline(
        resumed.algorithm, resumed.sampler, 8, checkpoint_path=path, checkpoint_every=4, log_every=2
    )
    assert [h["step"] for h in history] == [2, 4, 6, 8]
    a, b = whole.algorithm.state_dict(), resumed.algorithm.state_dict()
    for part in ("actor", "actor_target", "critic", "critic_target"):
        assert all(torch.equal(x, y) for x, y in zip(a[part].values(), b[part].values(), strict=True))
    assert [
        torch.equal(torch.as_tensor(x), torch.as_tensor(y))
        for x, y in zip(a["generator"], b["generator"], strict=True)
    ] == [True] * 4


def test_actor_states_are_each_runs_policy():
    stack = stack_runs("td3_bc", DATASETS, SEEDS, CONFIGS["td3_bc"])
    states = actor_states(stack.algorithm)
    assert len(states) == 4
    for r, state in enumerate(states):
        single = stack.algorithm.run(r)
        assert torch.equal(state["normalizer.mean"], single.normalizer.mean)
        for k, v in single.actor.state_dict().items():
            assert torch.equal(state[f"actor.{k}"], v)


def test_ensemble_stack_and_run_round_trip():
    nets = [EnsembleMLP(4, 1, (8,), ensemble=2) for _ in range(3)]
    stacked = EnsembleMLP.stack(nets)
    assert stacked.runs == 3 and stacked.ensemble == 2
    x = torch.randn(3, 5, 4)
    values = stacked.values(x)  # (R, E, B): run r's members see run r's batch
    assert values.shape == (3, 2, 5)
    for r, net in enumerate(nets):
        torch.testing.assert_close(values[r], net.values(x[r]))
        back = stacked.run(r)
        for a, b in zip(back.parameters(), net.parameters(), strict=True):
            assert torch.equal(a, b)
    with pytest.raises(ValueError, match="one-run networks of one shape"):
        EnsembleMLP.stack([nets[0], EnsembleMLP(4, 1, (9,), ensemble=2)])


def test_stacking_errors_name_the_problem():
    a = make_algorithm("td3_bc", 3, 2, TINY, seed=0)
    b = make_algorithm("td3_bc", 3, 2, {**TINY, "alpha": 1.0}, seed=1)
    with pytest.raises(ValueError, match="runs of one config"):
        type(a).stack([a, b])
    with pytest.raises(ValueError, match="needs a peer table"):
        stack_runs("pic", DATASETS, SEEDS, CONFIGS["pic"])
    with pytest.raises(ValueError, match="share obs_dim"):
        StackedSampler(
            [
                run_sampler("bc", DATASETS[0], 0, a.config),
                run_sampler("bc", _dataset(2, obs_dim=4), 0, a.config),
            ]
        )


@pytest.mark.parametrize("name", ["td3_bc", "epic"])
def test_a_stack_draws_from_its_own_generators(name):
    """Stacking copies each run's generator: drawing from the stack leaves the runs' streams alone."""
    runs = [make_algorithm(name, 3, 2, CONFIGS[name], seed=s) for s in SEEDS]
    before = [a.generator.get_state() for a in runs]
    stacked = type(runs[0]).stack(runs)
    assert all(g is not a.generator for g, a in zip(stacked.generator, runs, strict=True))
    stacked.randn((len(runs), 4), torch.device("cpu"))
    assert all(torch.equal(a.generator.get_state(), b) for a, b in zip(runs, before, strict=True))
