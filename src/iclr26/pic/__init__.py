"""PIC and EPIC: offline RL with a peer-influenced constraint ("Efficient Offline Reinforcement
Learning via Peer-Influenced Constraint", ICLR 2026, OpenReview bPWCIJyp1K), on D4RL-style data
generated here.

Public API:
- data: `OfflineDataset`, `save_dataset` / `load_dataset`, `load_d4rl_hdf5`, `load_minari`,
  `normalized_score`; generation: `generate_datasets(env_id, out_dir, GenerationConfig)`;
- peers: `peer_table(observations, k, method)`, `cached_peer_table`, `gather_peer_actions`;
- algorithms: `make_algorithm("bc" | "td3_bc" | "iql" | "pic" | "epic" | "edac", ...)`,
  `BatchSampler`, `train_offline`; networks: `EnsembleMLP`;
- `SYSTEM` for `iclr26 run pic`.
"""

from dataclasses import replace as _replace

from iclr26.catalog import implemented_system
from iclr26.pic.algorithms import ALGORITHMS, BatchSampler, make_algorithm
from iclr26.pic.behavior import DATASET_NAMES, GenerationConfig, generate_datasets
from iclr26.pic.data import (
    OfflineDataset,
    load_d4rl_hdf5,
    load_dataset,
    load_minari,
    normalized_score,
    save_dataset,
)
from iclr26.pic.networks import EnsembleMLP
from iclr26.pic.peers import cached_peer_table, gather_peer_actions, peer_table
from iclr26.pic.system import PICSystemConfig, run
from iclr26.pic.train import train_offline

__all__ = [
    "ALGORITHMS",
    "DATASET_NAMES",
    "BatchSampler",
    "EnsembleMLP",
    "GenerationConfig",
    "OfflineDataset",
    "PICSystemConfig",
    "cached_peer_table",
    "gather_peer_actions",
    "generate_datasets",
    "load_d4rl_hdf5",
    "load_dataset",
    "load_minari",
    "make_algorithm",
    "normalized_score",
    "peer_table",
    "save_dataset",
    "train_offline",
]

_BENCH = PICSystemConfig()
PRESETS = {
    "smoke": _replace(
        _BENCH,
        generation="smoke",
        datasets=("medium",),
        algorithms=("bc", "td3_bc", "iql", "pic", "epic", "edac"),
        seeds=1,
        steps=40,
        batch_size=32,
        hidden=32,
        k=5,
        num_critics=3,
        eval_every=20,
        eval_episodes=1,
        checkpoint_every=20,
    ),
    # the tour: the same comparison (PIC vs TD3+BC and BC) on one Pendulum dataset, 1 seed, shorter
    "demo": _replace(
        _BENCH,
        datasets=("medium",),
        algorithms=("bc", "td3_bc", "pic"),
        seeds=1,
        steps=1000,
        eval_every=250,
        eval_episodes=3,
        checkpoint_every=500,
    ),
    "bench": _BENCH,  # the README figures
    # The paper's locomotion setting: D4RL-scale data generated here (hours of CPU per task; run the
    # generation in the background first), 1M gradient steps, GPU if present.
    "paper": _replace(
        _BENCH,
        env_id="Hopper-v5",
        generation="mujoco",
        datasets=("medium", "medium-replay"),
        algorithms=("bc", "td3_bc", "iql", "pic", "epic"),
        seeds=3,
        steps=1_000_000,
        gen_dataset_size=0,
        hidden=256,
        num_critics=10,
        k=10,
        eval_every=5000,
        eval_episodes=10,
        checkpoint_every=10_000,
        device="auto",
    ),
}
SYSTEM = implemented_system("pic", presets=PRESETS, run=run)
