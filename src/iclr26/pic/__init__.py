"""PIC and EPIC: offline RL with a peer-influenced constraint ("Efficient Offline Reinforcement
Learning via Peer-Influenced Constraint", ICLR 2026, OpenReview bPWCIJyp1K), on D4RL-style data
generated here.

Public API:
- data: `OfflineDataset`, `save_dataset` / `load_dataset`, `load_d4rl_hdf5`, `load_minari`,
  `normalized_score`; generation: `generate_datasets(env_id, out_dir, GenerationConfig)`;
- peers: `peer_table(observations, k, method)`, `cached_peer_table`, `gather_peer_actions`;
- algorithms: `make_algorithm("bc" | "td3_bc" | "iql" | "pic" | "epic" | "edac", ...)`, `TD3` (the
  behaviour agent, which TD3+BC and PIC-TD3 extend), `BatchSampler`, `train_offline`; networks:
  `EnsembleMLP`;
- configs: `PICSystemConfig` (the run, one nested config per algorithm), `GenerationConfig`;
- `SYSTEM` (and `PRESETS`) for `iclr26 run pic`, loaded from `iclr26.pic.system` on first use.
"""

from iclr26.core.system import system_attributes
from iclr26.pic.algorithms import ALGORITHMS, TD3, BatchSampler, make_algorithm
from iclr26.pic.config import DATASET_NAMES, GenerationConfig, PICSystemConfig
from iclr26.pic.data import (
    OfflineDataset,
    load_d4rl_hdf5,
    load_dataset,
    load_minari,
    normalized_score,
    save_dataset,
)
from iclr26.pic.generation import generate_datasets
from iclr26.pic.networks import EnsembleMLP
from iclr26.pic.peers import cached_peer_table, gather_peer_actions, peer_table
from iclr26.pic.train import train_offline

__all__ = [
    "ALGORITHMS",
    "DATASET_NAMES",
    "TD3",
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

__getattr__ = system_attributes(__name__)
