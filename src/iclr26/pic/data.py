"""Offline RL datasets in D4RL's layout: the container, `.npz` + JSON storage, D4RL/Minari loaders.

D4RL (Fu et al. 2020) stores flat arrays of transitions — observations, actions, rewards,
next_observations, terminals (true termination: no bootstrap) and timeouts (the episode was cut) —
and scores a policy by its normalized return 100·(R − R_random)/(R_expert − R_random). Datasets
here always hold actions in [-1, 1]; `iclr26.pic.evaluation.to_env_action` maps them to an
environment's bounds.
"""

from __future__ import annotations

import json
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.core.checkpoint import atomic_write, write_text_atomic
from iclr26.core.device import cpuinfo

ARRAY_KEYS = ("observations", "actions", "rewards", "next_observations", "terminals", "timeouts")
_FLOAT_KEYS = ("observations", "actions", "rewards", "next_observations")
ACTION_TOLERANCE = 1e-6

# D4RL's reference returns (d4rl/infos.py, REF_MIN_SCORE / REF_MAX_SCORE): (random, expert).
REFERENCE_RETURNS: dict[str, tuple[float, float]] = {
    "halfcheetah": (-280.178953, 12135.0),
    "hopper": (-20.272305, 3234.3),
    "walker2d": (1.629008, 4592.3),
}


@dataclass(frozen=True, eq=False, repr=False)
class OfflineDataset:
    """Flat transitions of one behaviour dataset; arrays are validated and made contiguous on creation.

    Shapes: observations/next_observations (N, obs_dim) float32, actions (N, act_dim) float32 in
    [-1, 1], rewards (N,) float32, terminals (N,) bool (no bootstrap), timeouts (N,) bool (episode
    cut by a time limit or by the end of the data).
    """

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_observations: np.ndarray
    terminals: np.ndarray
    timeouts: np.ndarray
    env_id: str
    name: str

    def __post_init__(self) -> None:
        for key in ARRAY_KEYS:
            value = getattr(self, key)
            if value is None:
                raise ValueError(f"OfflineDataset {self.name!r}: {key} is missing")
            dtype = np.float32 if key in _FLOAT_KEYS else np.bool_
            object.__setattr__(self, key, np.ascontiguousarray(np.asarray(value), dtype=dtype))
        if not isinstance(self.env_id, str) or not self.env_id:
            raise ValueError(f"OfflineDataset: env_id must be a non-empty string, got {self.env_id!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"OfflineDataset: name must be a non-empty string, got {self.name!r}")
        ndim = {"observations": 2, "actions": 2, "next_observations": 2, "rewards": 1}
        ndim |= {"terminals": 1, "timeouts": 1}
        for key, want in ndim.items():
            got = getattr(self, key).shape
            if len(got) != want:
                hint = " (use reshape(-1))" if want == 1 else ""
                raise ValueError(
                    f"OfflineDataset {self.name!r}: {key} must be {want}-D, got shape {got}{hint}"
                )
        lengths = {key: len(getattr(self, key)) for key in ARRAY_KEYS}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"OfflineDataset {self.name!r}: arrays have different lengths {lengths}")
        if lengths["observations"] < 1:
            raise ValueError(f"OfflineDataset {self.name!r}: needs at least one transition, got 0")
        if self.next_observations.shape[1] != self.observations.shape[1]:
            raise ValueError(
                f"OfflineDataset {self.name!r}: next_observations has shape {self.next_observations.shape}, "
                f"observations {self.observations.shape}; their widths must match"
            )
        if min(self.observations.shape[1], self.actions.shape[1]) < 1:
            raise ValueError(
                f"OfflineDataset {self.name!r}: obs_dim and act_dim must be >= 1, "
                f"got {self.observations.shape[1]} and {self.actions.shape[1]}"
            )
        for key in _FLOAT_KEYS:
            value = getattr(self, key)
            finite = np.isfinite(value) if value.ndim == 1 else np.isfinite(value).all(axis=1)
            if not finite.all():
                row = int(np.argmin(finite))
                raise ValueError(
                    f"OfflineDataset {self.name!r}: {key} has NaN/inf, first at row {row}: {value[row]}"
                )
        outside = (np.abs(self.actions) > 1.0 + ACTION_TOLERANCE).any(axis=1)
        if outside.any():
            row = int(np.argmax(outside))
            raise ValueError(
                f"OfflineDataset {self.name!r}: actions must lie in [-1, 1] (datasets store normalized "
                f"actions; see evaluation.to_env_action), first violation at row {row}: {self.actions[row]}"
            )

    def __len__(self) -> int:
        return len(self.rewards)

    def __repr__(self) -> str:
        return (
            f"OfflineDataset(name={self.name!r}, env_id={self.env_id!r}, N={len(self)}, "
            f"obs_dim={self.obs_dim}, act_dim={self.act_dim}, episodes={int(self.episode_ends().sum())})"
        )

    @property
    def obs_dim(self) -> int:
        return int(self.observations.shape[1])

    @property
    def act_dim(self) -> int:
        return int(self.actions.shape[1])

    def arrays(self) -> dict[str, np.ndarray]:
        """The six transition arrays by D4RL key."""
        return {key: getattr(self, key) for key in ARRAY_KEYS}

    def episode_ends(self) -> np.ndarray:
        """(N,) bool: transitions that end an episode (terminal or timeout, and the last row)."""
        ends = self.terminals | self.timeouts
        ends = ends.copy()
        ends[-1] = True
        return ends

    def episode_returns(self) -> np.ndarray:
        """Undiscounted return of each episode, split at terminals | timeouts (a trailing piece counts)."""
        starts = np.concatenate([[0], np.flatnonzero(self.episode_ends())[:-1] + 1])
        return np.add.reduceat(self.rewards.astype(np.float64), starts)

    def concat(self, other: OfflineDataset, name: str) -> OfflineDataset:
        """Both datasets' transitions, self first; self's last transition is cut (timeout) if open."""
        if not isinstance(other, OfflineDataset):
            raise TypeError(f"concat needs an OfflineDataset, got {type(other).__name__}")
        if other.env_id != self.env_id:
            raise ValueError(f"concat: env_id differs ({self.env_id!r} vs {other.env_id!r})")
        if (other.obs_dim, other.act_dim) != (self.obs_dim, self.act_dim):
            raise ValueError(
                f"concat: (obs_dim, act_dim) differ: {(self.obs_dim, self.act_dim)} vs "
                f"{(other.obs_dim, other.act_dim)}"
            )
        timeouts = self.timeouts.copy()
        timeouts[-1] |= not self.terminals[-1]  # so that episodes never run across the seam
        parts = {key: np.concatenate([getattr(self, key), getattr(other, key)]) for key in ARRAY_KEYS}
        parts["timeouts"] = np.concatenate([timeouts, other.timeouts])
        return OfflineDataset(**parts, env_id=self.env_id, name=name)


# ----------------------------------------------------------------------------------------- scores


def normalized_score(returns: float | np.ndarray, random_return: float, expert_return: float) -> float:
    """D4RL's normalized score 100·(R − R_random)/(R_expert − R_random) of the mean return R."""
    r = float(np.mean(returns))
    if not np.isfinite(r):
        raise ValueError(f"normalized_score: returns must be finite, got mean {r}")
    if expert_return == random_return:
        raise ValueError(f"normalized_score: expert_return equals random_return ({expert_return})")
    return 100.0 * (r - random_return) / (expert_return - random_return)


def d4rl_reference(env_id: str) -> tuple[float, float] | None:
    """D4RL's (random, expert) reference returns of an env id ("Hopper-v5", "hopper-medium-v2") or None."""
    stem = re.split(r"[-_/]", env_id.strip(), maxsplit=1)[0].lower()
    return REFERENCE_RETURNS.get(stem)


# ---------------------------------------------------------------------------------------- storage


def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that shape a generated dataset (None if not installed)."""
    out: dict[str, str | None] = {}
    for dist in ("gymnasium", "mujoco", "numpy", "torch", "iclr26"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def blas_numerics() -> dict[str, str | None]:
    """What decides the float results of a CPU run beyond the seed: the CPU, the instruction set
    torch's kernels use, and `MKL_CBWR` (MKL's code path; unset, MKL picks the widest the CPU has).
    A SAC run from one seed gave other returns after 2k env steps under MKL's AVX2 path than under
    its AVX-512 path on the same Xeon (measured 2026-12-06); with `MKL_CBWR=AVX2` both CPUs take
    the AVX2 path, so a run repeats on any CPU that has AVX2 (same MKL, same thread count)."""
    import torch  # only here: the dataset format itself needs numpy alone

    return {
        "cpu": cpuinfo("model name") or platform.processor() or None,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "mkl_cbwr": os.environ.get("MKL_CBWR"),
    }


def _npz_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p if p.suffix == ".npz" else p.with_name(p.name + ".npz")


def manifest_path(path: str | os.PathLike) -> Path:
    """The JSON manifest beside a dataset file: `x.npz` -> `x.json`."""
    return _npz_path(path).with_suffix(".json")


def jsonable(value: Any) -> Any:
    """`value` with numpy arrays/scalars, tuples and paths turned into JSON types."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value


def save_dataset(
    ds: OfflineDataset, path: str | os.PathLike, *, seed: int | None = None, manifest: Mapping | None = None
) -> Path:
    """Write `ds` to a compressed `.npz` and its JSON manifest beside it; return the `.npz` path.

    Both files are written to a temporary name and renamed, so a file that exists is complete; the
    manifest is written last.
    """
    npz = _npz_path(path)
    npz.parent.mkdir(parents=True, exist_ok=True)
    arrays = ds.arrays() | {"env_id": np.array(ds.env_id), "name": np.array(ds.name)}  # unicode, no pickle
    atomic_write(npz, lambda f: np.savez_compressed(f, **arrays))
    info = {
        "env_id": ds.env_id,
        "name": ds.name,
        "N": len(ds),
        "obs_dim": ds.obs_dim,
        "act_dim": ds.act_dim,
        "episodes": int(ds.episode_ends().sum()),
        "seed": seed,
        "versions": library_versions(),
        "file": npz.name,
    }
    extra = jsonable(dict(manifest or {}))
    clash = sorted(set(extra) & set(info))
    if clash:
        raise ValueError(
            f"save_dataset: manifest keys {clash} are written by save_dataset itself; rename them"
        )
    try:
        text = json.dumps(info | extra, indent=2, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ValueError(f"save_dataset: manifest is not JSON-serializable: {err}") from err
    write_text_atomic(manifest_path(npz), text)
    return npz


def load_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON manifest of a dataset written by `save_dataset`."""
    p = manifest_path(path)
    if not p.is_file():
        raise FileNotFoundError(f"dataset manifest not found: {p}")
    return json.loads(p.read_text())


def load_dataset(path: str | os.PathLike) -> OfflineDataset:
    """Read a dataset written by `save_dataset` (no pickle); env_id/name fall back to the manifest."""
    npz = _npz_path(path)
    if not npz.is_file():
        raise FileNotFoundError(f"dataset file not found: {npz}")
    with np.load(npz, allow_pickle=False) as f:
        missing = [key for key in ARRAY_KEYS if key not in f.files]
        if missing:
            raise ValueError(f"dataset {npz} lacks keys {missing} (has {sorted(f.files)})")
        arrays = {key: f[key] for key in ARRAY_KEYS}
        names = {key: str(f[key]) for key in ("env_id", "name") if key in f.files}
    if len(names) < 2:
        info = load_manifest(npz) if manifest_path(npz).is_file() else {}
        names = {key: names.get(key, info.get(key)) for key in ("env_id", "name")}
        if names["env_id"] is None:
            raise ValueError(f"dataset {npz} has no env_id, in the file or in a manifest beside it")
        names["name"] = names["name"] or npz.stem
    try:
        return OfflineDataset(**arrays, **names)
    except ValueError as err:
        raise ValueError(f"dataset {npz}: {err}") from err


# ----------------------------------------------------------------------------- D4RL / Minari files


def _require_h5py():
    try:
        import h5py
    except ImportError as err:  # pragma: no cover - h5py is in the rl extra
        raise ImportError("reading HDF5 datasets needs h5py: pip install 'iclr26[rl]'") from err
    return h5py


def load_d4rl_hdf5(path: str | os.PathLike, env_id: str, name: str | None = None) -> OfflineDataset:
    """Read a D4RL-format HDF5 file: observations, actions, rewards, terminals, timeouts[, next_observations].

    Without next_observations, the next observation is the following row within an episode (as
    D4RL's `qlearning_dataset`): a transition cut by a timeout, and the file's last row, have no
    known next observation and are dropped, and the row before a dropped one becomes the cut
    (timeout) end of its episode. Terminal transitions are kept (they are never bootstrapped);
    their next_observation is set to their own observation.
    """
    h5py = _require_h5py()
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"D4RL HDF5 file not found: {p}")
    with h5py.File(p, "r") as f:
        required = ("observations", "actions", "rewards", "terminals", "timeouts")
        missing = [key for key in required if key not in f]
        if missing:
            raise ValueError(f"D4RL file {p} lacks keys {missing} (has {sorted(f.keys())})")
        data = {key: f[key][()] for key in required}
        next_obs = f["next_observations"][()] if "next_observations" in f else None
    name = name or f"{env_id}/{p.stem}"
    lengths = {key: len(v) for key, v in data.items()}
    if len(set(lengths.values())) != 1:
        raise ValueError(f"D4RL file {p}: arrays have different lengths {lengths}")
    data["rewards"] = np.asarray(data["rewards"]).reshape(-1)
    terminals = np.asarray(data["terminals"]).reshape(-1).astype(bool)
    timeouts = np.asarray(data["timeouts"]).reshape(-1).astype(bool)
    if next_obs is not None:
        data |= {"terminals": terminals, "timeouts": timeouts, "next_observations": next_obs}
        return OfflineDataset(**data, env_id=env_id, name=name)
    obs = np.asarray(data["observations"])
    n = len(obs)
    next_obs = np.empty_like(obs)
    next_obs[:-1] = obs[1:]
    next_obs[terminals] = obs[terminals]  # placeholder: a terminal transition is never bootstrapped
    known_next = ~timeouts
    known_next[-1] = False
    keep = known_next | terminals
    # the row before a dropped (timeout or last) row now ends its episode by a cut
    dropped_prev = np.zeros(n, dtype=bool)
    dropped_prev[:-1] = ~keep[1:]
    new_timeouts = dropped_prev & ~terminals
    if not keep.any():
        raise ValueError(f"D4RL file {p}: no transition with a known next observation")
    return OfflineDataset(
        observations=obs[keep],
        actions=np.asarray(data["actions"])[keep],
        rewards=data["rewards"][keep],
        next_observations=next_obs[keep],
        terminals=terminals[keep],
        timeouts=new_timeouts[keep],
        env_id=env_id,
        name=name,
    )


def _minari_file(path: Path) -> Path:
    if path.is_file():
        return path
    for candidate in (path / "data" / "main_data.hdf5", path / "main_data.hdf5"):
        if candidate.is_file():
            return candidate
    found = sorted(path.glob("**/*.hdf5")) if path.is_dir() else []
    if len(found) == 1:
        return found[0]
    if not path.exists():
        raise FileNotFoundError(f"Minari dataset not found: {path}")
    raise FileNotFoundError(
        f"no Minari HDF5 file in {path}: expected data/main_data.hdf5 (Minari's HDF5 backend; "
        f"datasets stored with the Arrow backend are not supported), found {[str(x) for x in found]}"
    )


def load_minari(path: str | os.PathLike, env_id: str, name: str | None = None) -> OfflineDataset:
    """Read a local Minari dataset (its directory, or its HDF5 file) into flat transitions.

    Minari's HDF5 layout: one group `episode_<i>` per episode with observations (T+1, obs_dim),
    actions (T, act_dim), rewards, terminations and truncations (T,). Observation t and t+1 give a
    transition's observation and next observation; an episode that ends neither terminated nor
    truncated is marked as cut (timeout) at its last step. Dict observation spaces are not supported.
    """
    h5py = _require_h5py()
    root = Path(path)
    file = _minari_file(root)
    if name is None:
        meta = file.parent / "metadata.json"
        dataset_id = json.loads(meta.read_text()).get("dataset_id") if meta.is_file() else None
        name = f"{env_id}/{dataset_id or (root.name if root.is_dir() else file.stem)}"
    parts: dict[str, list[np.ndarray]] = {key: [] for key in ARRAY_KEYS}
    with h5py.File(file, "r") as f:
        episodes = sorted(
            (k for k in f if re.fullmatch(r"episode_\d+", k)), key=lambda k: int(k.split("_")[1])
        )
        if not episodes:
            raise ValueError(f"Minari file {file} has no episode_<i> groups (has {sorted(f.keys())[:10]})")
        for key in episodes:
            ep = f[key]
            missing = [
                k
                for k in ("observations", "actions", "rewards", "terminations", "truncations")
                if k not in ep
            ]
            if missing:
                raise ValueError(f"Minari file {file}: {key} lacks {missing} (has {sorted(ep.keys())})")
            if not isinstance(ep["observations"], h5py.Dataset):
                raise ValueError(
                    f"Minari file {file}: {key}/observations is a group (dict space); not supported"
                )
            obs = ep["observations"][()]
            actions = ep["actions"][()]
            t = len(actions)
            if len(obs) != t + 1:
                raise ValueError(
                    f"Minari file {file}: {key} has {len(obs)} observations for {t} actions (expected T+1)"
                )
            terminals = ep["terminations"][()].reshape(-1).astype(bool)
            timeouts = ep["truncations"][()].reshape(-1).astype(bool)
            rewards = ep["rewards"][()].reshape(-1)
            if not len(rewards) == len(terminals) == len(timeouts) == t:
                raise ValueError(
                    f"Minari file {file}: {key} has {t} actions, {len(rewards)} rewards, "
                    f"{len(terminals)} terminations, {len(timeouts)} truncations"
                )
            if t == 0:
                continue
            timeouts[-1] |= not terminals[-1]
            actions = actions.reshape(t, -1)
            for k, v in zip(
                ARRAY_KEYS, (obs[:-1], actions, rewards, obs[1:], terminals, timeouts), strict=True
            ):
                parts[k].append(v)
    if not parts["rewards"]:
        raise ValueError(f"Minari file {file}: every episode is empty")
    return OfflineDataset(**{k: np.concatenate(v) for k, v in parts.items()}, env_id=env_id, name=name)
