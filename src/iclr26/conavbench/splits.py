"""The CoNavBench split (ICLR 2026): 4,048 episodes (2,436 NavCraft-S + 1,612 NavCraft-C) over
generated scenes, train / val / test by scene (70 / 10 / 20; ours, the paper does not say),
deterministic from one seed, every episode validated.

Scene i is generated and populated from its own generator, `derive_seed(seed, "scene", i)`, so
scenes are independent of each other, of the pool's scheduling and of resuming. With `out`, each
scene's episodes are written to `out/scenes/<id>.json` as soon as it is done (a rerun skips scenes
already written), then `episodes_{train,val,test}.json` (sorted keys, fixed separators: the same
bytes for the same seed).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.conavbench import missions, validate
from iclr26.conavbench.episode import Episode
from iclr26.conavbench.scene import Scene
from iclr26.core.seeding import derive_seed

N_SINGLE, N_COLLAB, N_SCENES = 2436, 1612, 216
"""The paper's episode counts and HM3D scene count."""
FRACTIONS = (("train", 0.7), ("val", 0.1), ("test", 0.2))
ROOMS = (6, 11)
"""Rooms per generated house, drawn uniformly from [6, 11) (ours)."""


@dataclass
class Split:
    """A generated split: scenes by id, episodes by split name, and generation counts."""

    scenes: dict[str, Scene]
    episodes: dict[str, list[Episode]]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def all(self) -> list[Episode]:
        return [ep for name, _ in FRACTIONS for ep in self.episodes[name]]


def _quota(n: int, k: int, i: int) -> int:
    return n // k + (1 if i < n % k else 0)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=False, separators=(",", ":"), ensure_ascii=False)


def _scene_job(args: tuple[int, int, int, int, int, str | None, str]) -> dict[str, Any]:
    """Generate scene i, its episodes, validate them; returns the scene file's JSON dict."""
    from iclr26.conavbench import house  # lazy: house.py is written in parallel

    seed, i, n_scenes, n_single, n_collab, out, rule = args
    sid = f"scene_{i:04d}"
    path = Path(out, "scenes", f"{sid}.json") if out else None
    if path is not None and path.exists():
        return json.loads(path.read_text())
    rng = np.random.default_rng(derive_seed(seed, "scene", i))
    scene = house.generate_scene(rng, sid, n_rooms=int(rng.integers(*ROOMS)))
    eps, counts = missions.scene_episodes(
        rng, scene, _quota(n_single, n_scenes, i), _quota(n_collab, n_scenes, i), rule=rule
    )
    for ep in eps:
        validate.validate(ep, scene)
    d = {
        "scene": house.scene_to_json(scene),
        "episodes": [validate.episode_to_json(ep) for ep in eps],
        "proposals": {
            "proposed": counts.proposed,
            "accepted": counts.accepted,
            "kept": counts.kept,
            "rejected": dict(sorted(counts.rejected.items())),
        },
    }
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(_dumps(d))
        os.replace(tmp, path)  # atomic: a killed run leaves no half-written scene
    return d


def build_split(
    seed: int,
    *,
    n_single: int = N_SINGLE,
    n_collab: int = N_COLLAB,
    n_scenes: int = N_SCENES,
    jobs: int = 2,
    out: str | Path | None = None,
    rule: str = "paper",
) -> Split:
    """Generate, validate and split the episodes; with `out`, write and resume from that folder.

    Scenes whose generator cannot supply their quota give fewer episodes (`stats` says how many).
    `rule` is the NavCraft-C acceptance rule (`missions.RULES`); a folder holds one rule's split.
    """
    from iclr26.conavbench import house

    for name, v in (("n_single", n_single), ("n_collab", n_collab), ("jobs", jobs)):
        if v < 0 or (name == "jobs" and v < 1):
            raise ValueError(f"{name} must be {'>= 1' if name == 'jobs' else '>= 0'}, got {v}")
    if n_scenes < len(FRACTIONS):
        raise ValueError(f"n_scenes must be >= {len(FRACTIONS)} (one per split), got {n_scenes}")
    if rule not in missions.RULES:
        raise ValueError(f"rule must be one of {missions.RULES}, got {rule!r}")
    args = [
        (seed, i, n_scenes, n_single, n_collab, None if out is None else str(out), rule)
        for i in range(n_scenes)
    ]
    if jobs == 1:
        results = [_scene_job(a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_scene_job, args, chunksize=4))
    order = np.random.default_rng(derive_seed(seed, "split")).permutation(n_scenes)
    cuts = np.cumsum([round(f * n_scenes) for _, f in FRACTIONS])
    name_of = {}
    for k, i in enumerate(order):
        name_of[int(i)] = next(
            name for (name, _), c in zip(FRACTIONS, cuts, strict=True) if k < c or name == "test"
        )
    scenes, episodes = {}, {name: [] for name, _ in FRACTIONS}
    stats = {"proposed": 0, "accepted": 0, "kept": 0, "rejected": {}}
    for i, d in enumerate(results):
        sc = house.scene_from_json(d["scene"])
        scenes[sc.id] = sc
        episodes[name_of[i]] += [validate.episode_from_json(e) for e in d["episodes"]]
        for k in ("proposed", "accepted", "kept"):
            stats[k] += d["proposals"][k]
        for why, c in d["proposals"]["rejected"].items():
            stats["rejected"][why] = stats["rejected"].get(why, 0) + c
    split = Split(scenes, episodes)
    eps = split.all
    stats |= {
        "single": sum(e.kind == "single" for e in eps),
        "collaborative": sum(e.kind == "collaborative" for e in eps),
        "acceptance_rate": stats["accepted"] / max(1, stats["proposed"]),
        "repairs": sum(e.repairs for e in eps),
        "repaired_episodes": sum(e.repairs > 0 for e in eps),
        "template_success_rate": 1.0,  # templates fill the validator's names by construction
        "by_split": {name: len(v) for name, v in episodes.items()},
    }
    split.stats = stats
    if out is not None:
        for name, v in episodes.items():
            Path(out, f"episodes_{name}.json").write_text(_dumps([validate.episode_to_json(e) for e in v]))
        Path(out, "stats.json").write_text(_dumps(stats))
    return split
