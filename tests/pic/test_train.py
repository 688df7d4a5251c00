"""train_offline: history, evaluation timing, and bitwise-exact resume from a checkpoint."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from iclr26.pic.algorithms import ALGORITHMS, BatchSampler, make_algorithm
from iclr26.pic.train import steps_per_second, train_offline

TIMING_KEYS = {"train_time_s", "steps_per_s", "eval_time_s"}


@pytest.fixture
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def make_sampler(seed: int = 0) -> BatchSampler:
    rng = np.random.default_rng(seed)
    n = 64
    obs = rng.normal(size=(n, 3)).astype(np.float32)
    return BatchSampler(
        obs,
        rng.uniform(-1, 1, size=(n, 2)),
        rng.normal(size=n),
        np.roll(obs, -1, axis=0),
        (rng.random(n) < 0.1).astype(np.float32),
        peers=rng.integers(0, n, size=(n, 5)),
        batch_size=16,
        seed=seed,
    )


def make(name: str):
    overrides = {"hidden": (16, 16), **({"num_critics": 3} if name in ("epic", "edac") else {})}
    return make_algorithm(name, 3, 2, overrides, seed=0)


def probe(algo) -> float:
    """A deterministic 'evaluation': depends on the policy, as a return would."""
    return float(algo.act(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)).sum())


class Interrupt(Exception):
    pass


def strip_timing(history: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING_KEYS} for row in history]


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_resume_after_interruption_equals_uninterrupted_run(name, tmp_path, one_thread):
    kw = {"eval_fn": probe, "eval_every": 6, "checkpoint_every": 7, "log_every": 4}
    full_algo = make(name)
    full = train_offline(full_algo, make_sampler(), 20, **kw)

    ckpt = tmp_path / "run.pt"

    def crash(step: int, metrics: dict) -> None:
        if step == 17:  # after the checkpoint at step 14, before the next one
            raise Interrupt

    with pytest.raises(Interrupt):
        train_offline(make(name), make_sampler(), 20, checkpoint_path=ckpt, on_step=crash, **kw)
    resumed_algo = make(name)
    resumed = train_offline(resumed_algo, make_sampler(), 20, checkpoint_path=ckpt, **kw)

    assert strip_timing(resumed) == strip_timing(full)
    a, b = full_algo.state_dict(), resumed_algo.state_dict()
    for key in ("actor", "critic", "value", "critic_target", "actor_target"):
        for t, u in zip(a.get(key, {}).values(), b.get(key, {}).values(), strict=True):
            assert torch.equal(t, u), f"{name}: {key} differs after resume"
    assert a.keys() == b.keys()
    if "generator" in a:  # BC and IQL draw no random numbers, so they keep no generator
        assert torch.equal(a["generator"], b["generator"])
    assert a["total_it"] == b["total_it"] == 20


def test_history_rows_evaluations_and_throughput(tmp_path):
    algo = make("td3_bc")
    seen = []

    def slow_eval(a) -> float:
        time.sleep(0.05)
        return probe(a)

    t0 = time.perf_counter()
    history = train_offline(
        algo,
        make_sampler(),
        10,
        eval_fn=slow_eval,
        eval_every=5,
        log_every=3,
        on_step=lambda s, m: seen.append(s),
    )
    wall = time.perf_counter() - t0
    assert [r["step"] for r in history] == [3, 5, 6, 9, 10]
    assert [("eval_return" in r) for r in history] == [False, True, False, False, True]
    assert seen == list(range(1, 11))
    assert all(r["steps_per_s"] > 0 and "critic_loss" in r for r in history)
    assert history[-1]["train_time_s"] < wall - 0.09  # the two 0.05 s evaluations are not training time
    assert steps_per_second(history) == pytest.approx(10 / history[-1]["train_time_s"])


def test_finished_run_resumes_to_the_same_history_without_training(tmp_path):
    ckpt = tmp_path / "done.pt"
    algo = make("bc")
    first = train_offline(algo, make_sampler(), 5, checkpoint_path=ckpt, log_every=2)
    again = make("bc")
    second = train_offline(again, make_sampler(), 5, checkpoint_path=ckpt, log_every=2)
    assert second == first and again.total_it == 5


def test_checkpoint_of_another_config_is_refused(tmp_path):
    ckpt = tmp_path / "pic.pt"
    train_offline(make("pic"), make_sampler(), 2, checkpoint_path=ckpt)
    other = make_algorithm("pic", 3, 2, {"hidden": (16, 16), "delta": 3.0}, seed=0)
    with pytest.raises(ValueError, match="config"):
        train_offline(other, make_sampler(), 4, checkpoint_path=ckpt)


def test_argument_errors():
    with pytest.raises(ValueError, match="eval_every must be >= 1"):
        train_offline(make("bc"), make_sampler(), 3, eval_every=0)
    with pytest.raises(ValueError, match="steps must be >= 0"):
        train_offline(make("bc"), make_sampler(), -1)
