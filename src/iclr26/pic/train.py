"""The offline training loop: gradient steps, periodic evaluation, checkpoints that resume exactly.

A checkpoint holds the algorithm's state (networks, optimizers, its RNG, step counter), the sampler's
RNG, the history so far and the partly filled logging window, so a run interrupted after a checkpoint
and resumed from it produces bitwise the same parameters and history as an uninterrupted run (timing
fields aside). Throughput (`steps_per_s`) counts gradient steps only: evaluation and checkpoint
writing are timed separately.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.seeding import derive_seed
from iclr26.pic.algorithms import ALGORITHMS
from iclr26.pic.algorithms.common import Algorithm, BatchSampler, return_range_reward_scale
from iclr26.pic.data import OfflineDataset

HistoryRow = dict[str, Any]


class _Window:
    """Running sums of the metrics since the last history row. Sums stay tensors on the algorithm's
    device until a row is written (no per-step wait for a GPU); a stack's metrics are per run."""

    def __init__(self, sums: dict[str, Any] | None = None, counts: dict[str, int] | None = None) -> None:
        self.sums: dict[str, Any] = dict(sums or {})
        self.counts = dict(counts or {})
        self.time_s = 0.0
        self.steps = 0

    def add(self, metrics: dict[str, Any]) -> None:
        for k, v in metrics.items():
            value = v.detach() if torch.is_tensor(v) else float(v)
            total = self.sums.get(k, 0.0)
            if torch.is_tensor(total) and torch.is_tensor(value):
                total = total.to(value.device)  # a window restored from a checkpoint sits on the CPU
            self.sums[k] = total + value
            self.counts[k] = self.counts.get(k, 0) + 1

    def means(self) -> dict[str, float | list[float]]:
        return {k: _plain(v / self.counts[k]) for k, v in self.sums.items()}

    def state(self) -> dict[str, Any]:
        return {"sums": {k: _plain(v) for k, v in self.sums.items()}, "counts": self.counts}


def _wait_for_device(metrics: dict[str, Any]) -> float:
    """Wait for the queued GPU work behind `metrics` (if any is on a CUDA device); the seconds waited.
    A CUDA update returns once its kernels are queued, so a step's own time misses their run time:
    adding this wait where a history row is written makes the row's rate the device's."""
    device = next((v.device for v in metrics.values() if torch.is_tensor(v) and v.is_cuda), None)
    if device is None:
        return 0.0
    t0 = time.perf_counter()
    torch.cuda.synchronize(device)
    return time.perf_counter() - t0


def _plain(x: Any) -> float | list[float]:
    """A float, or a list of floats for a per-run (R,) tensor or list."""
    if torch.is_tensor(x):
        return x.item() if x.dim() == 0 else x.tolist()
    return [float(v) for v in x] if isinstance(x, list) else float(x)


def train_offline(
    algo: Algorithm,
    sampler: BatchSampler,
    steps: int,
    *,
    eval_fn: Callable[[Algorithm], float] | None = None,
    eval_every: int = 5000,
    checkpoint_path: Path | str | None = None,
    checkpoint_every: int = 10_000,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
    log_every: int = 1000,
) -> list[HistoryRow]:
    """Run `steps` gradient steps (resuming from `checkpoint_path` if it exists); returns the history.

    History rows are written every `log_every` steps, at every evaluation and at the end; each has
    `step`, the window means of the algorithm's metrics, `steps_per_s` (window), `train_time_s`
    (cumulative, gradient steps only) and, at evaluations, `eval_return` and `eval_time_s`.
    `on_step(step, metrics)` is called after every gradient step.
    """
    for name, value in (
        ("eval_every", eval_every),
        ("checkpoint_every", checkpoint_every),
        ("log_every", log_every),
    ):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    path = Path(checkpoint_path) if checkpoint_path is not None else None

    step, history, window, train_time = 0, [], _Window(), 0.0
    if path is not None and path.exists():
        ckpt = load_checkpoint(path, "cpu")
        algo.load_state_dict(ckpt["algorithm"])
        sampler.load_state_dict(ckpt["sampler"])
        step, history, train_time = int(ckpt["step"]), list(ckpt["history"]), float(ckpt["train_time_s"])
        sums = {k: torch.tensor(v) if isinstance(v, list) else v for k, v in ckpt["window"]["sums"].items()}
        window = _Window(sums, ckpt["window"]["counts"])

    def checkpoint() -> None:
        if path is not None:
            payload = {
                "algorithm": algo.state_dict(),
                "sampler": sampler.state_dict(),
                "step": step,
                "history": history,
                "window": window.state(),
                "train_time_s": train_time,
            }
            save_checkpoint(path, payload)

    while step < steps:
        t0 = time.perf_counter()
        metrics = algo.update(sampler.sample())
        dt = time.perf_counter() - t0
        step += 1
        train_time += dt
        window.time_s += dt
        window.steps += 1
        window.add(metrics)
        if on_step is not None:
            on_step(step, metrics)

        evaluate = eval_fn is not None and (step % eval_every == 0 or step == steps)
        if evaluate or step % log_every == 0 or step == steps:
            waited = _wait_for_device(metrics)
            train_time += waited
            window.time_s += waited
            row: HistoryRow = {"step": step, **window.means(), "train_time_s": train_time}
            row["steps_per_s"] = window.steps / window.time_s if window.time_s > 0 else float("nan")
            if evaluate:
                assert eval_fn is not None
                t_eval = time.perf_counter()
                row["eval_return"] = float(eval_fn(algo))
                row["eval_time_s"] = time.perf_counter() - t_eval
            history.append(row)
            window = _Window()
        if step % checkpoint_every == 0 or step == steps:
            checkpoint()
    return history


def run_sampler(
    name: str,
    ds: OfflineDataset,
    seed: int,
    config: Any,
    *,
    peers: np.ndarray | None = None,
    device: str | torch.device = "cpu",
    return_range_scale: float | None = None,
) -> BatchSampler:
    """The minibatch stream of one run of algorithm `name` with `seed` on `ds`: the algorithm's batch
    size, time-limit cuts that still bootstrap (dones = terminals only), the peer table where the
    algorithm uses peers, and IQL's reward scaling by 1000 / (return range) (Kostrikov et al. 2021),
    from `ds`'s episodes unless `return_range_scale` gives it (a subsample has no whole episodes)."""
    scale = 1.0
    if getattr(config, "return_range_scaling", False):
        scale = return_range_scale or return_range_reward_scale(ds.rewards, ds.episode_ends())
    return BatchSampler(
        ds.observations,
        ds.actions,
        ds.rewards,
        ds.next_observations,
        ds.terminals.astype(np.float32),
        peers=peers if ALGORITHMS[name].uses_peers else None,
        batch_size=config.batch_size,
        seed=derive_seed(seed, 0, bits=32),
        device=device,
        reward_scale=scale,
    )


def steps_per_second(history: list[HistoryRow]) -> float:
    """Gradient steps per second over the whole run (evaluation and checkpoints excluded)."""
    if not history or history[-1]["train_time_s"] <= 0:
        return float("nan")
    return history[-1]["step"] / history[-1]["train_time_s"]
