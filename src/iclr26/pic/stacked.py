"""Stacked training: R runs of one algorithm (seeds × datasets) trained as one batched model.

An offline RL update at width 256 is a few small matmuls, so one run leaves a GPU idle: the H200 probe
in SYSTEMS.md gives 229 updates/s for one eager run against 13,200 run-updates/s for 50 runs stacked.
Here run r of R lives at index r of every network's member axis (`EnsembleMLP.stack`), each run keeps
its own minibatch stream (`StackedSampler`), its own noise generator and its own state statistics,
and the algorithms reduce their losses over the batch axis and sum them over runs, so the gradient of
run r is run r's own. Adam is elementwise, so one Adam over stacked weights is R Adams. A stacked run
therefore follows the same trajectory as the run trained alone, to float tolerance (tested in
`tests/pic/test_stacked.py`).

    stack = stack_runs("pic", datasets, seeds=[0, 1, 2], config={"delta": 1.0}, peers=tables)
    history = train_offline(stack.algorithm, stack.sampler, steps, checkpoint_path="stack.pt")
    policies = [stack.algorithm.run(r) for r in range(stack.runs)]   # evaluate each on the CPU

`train_offline` (checkpoints, resume, history) serves a stack unchanged; its metrics are per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclr26.pic.algorithms import ALGORITHMS, make_algorithm
from iclr26.pic.algorithms.common import Algorithm, Batch, BatchSampler, state_stats
from iclr26.pic.data import OfflineDataset
from iclr26.pic.train import run_sampler


class StackedSampler:
    """R samplers drawn together: each `sample()` stacks one batch of every run, (R, B, ...)."""

    def __init__(self, samplers: Sequence[BatchSampler]) -> None:
        if not samplers:
            raise ValueError("StackedSampler needs at least one sampler")
        shapes = {(s.obs_dim, s.act_dim, s.batch_size, s.peers is None) for s in samplers}
        if len(shapes) != 1:
            raise ValueError(
                "stacked samplers must share obs_dim, act_dim, batch_size and whether they carry peers"
            )
        self.samplers = list(samplers)

    @property
    def runs(self) -> int:
        return len(self.samplers)

    def sample(self) -> Batch:
        """One batch per run, stacked along a leading run axis."""
        batches = [s.sample() for s in self.samplers]
        return {k: torch.stack([b[k] for b in batches]) for k in batches[0]}

    def state_dict(self) -> dict[str, Any]:
        """Every run's sampler state."""
        return {"samplers": [s.state_dict() for s in self.samplers]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        if len(state["samplers"]) != self.runs:
            raise ValueError(f"checkpoint has {len(state['samplers'])} runs, this stack has {self.runs}")
        for sampler, s in zip(self.samplers, state["samplers"], strict=True):
            sampler.load_state_dict(s)


@dataclass
class Stack:
    """A stacked algorithm, its sampler, and what each run is (dataset name and seed)."""

    algorithm: Algorithm
    sampler: StackedSampler
    runs_info: list[dict[str, Any]]

    @property
    def runs(self) -> int:
        return len(self.runs_info)


def stack_runs(
    name: str,
    datasets: Sequence[OfflineDataset],
    seeds: Sequence[int],
    config: Any = None,
    *,
    peers: Sequence[np.ndarray | None] | None = None,
    return_range_scales: Sequence[float | None] | None = None,
    device: str | torch.device = "cpu",
) -> Stack:
    """Runs of algorithm `name` for every (dataset, seed), created exactly as one run alone would be
    (`make_algorithm` with the seed and the dataset's state statistics, `run_sampler`), then stacked.
    `peers[i]` is dataset i's peer table (PIC and EPIC), `return_range_scales[i]` its IQL reward scale
    where the dataset is a subsample (None: from its episodes)."""
    if not datasets or not seeds:
        raise ValueError("stack_runs needs at least one dataset and one seed")
    dims = {(ds.obs_dim, ds.act_dim) for ds in datasets}
    if len(dims) != 1:
        raise ValueError(f"stacked datasets must share obs_dim and act_dim, got {sorted(dims)}")
    if ALGORITHMS[name].uses_peers and (peers is None or any(p is None for p in peers)):
        raise ValueError(f"{name!r} needs a peer table for every dataset (peers=...)")
    algos, samplers, info = [], [], []
    for i, ds in enumerate(datasets):
        mean, std = state_stats(ds.observations)
        for seed in seeds:
            algo = make_algorithm(
                name, ds.obs_dim, ds.act_dim, config, seed, device, state_mean=mean, state_std=std
            )
            table = None if peers is None else peers[i]
            scale = None if return_range_scales is None else return_range_scales[i]
            samplers.append(
                run_sampler(name, ds, seed, algo.config, peers=table, device=device, return_range_scale=scale)
            )
            algos.append(algo)
            info.append({"dataset": ds.name, "seed": int(seed)})
    stacked = type(algos[0]).stack(algos)
    return Stack(stacked, StackedSampler(samplers), info)


def actor_states(algo: Algorithm) -> list[dict[str, torch.Tensor]]:
    """Every run's actor and state statistics on the CPU, as `run(r)` would give them (what a GPU run
    sends back for evaluation on the CPU)."""
    out = []
    for r in range(algo.runs):
        single = algo.run(r)
        out.append(
            {f"actor.{k}": v.cpu() for k, v in single.actor.state_dict().items()}
            | {f"normalizer.{k}": v.cpu() for k, v in single.normalizer.state_dict().items()}
        )
    return out
