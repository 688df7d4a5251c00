"""Shared fixtures: seeded random tiered graphs with latents, small enough to enumerate."""

import numpy as np

from iclr26.tiered_pruning import TieredGraph, random_tiered_dag


def random_cases(n_cases: int, seed0: int = 0, max_mag_edges: int = 11) -> list[tuple[int, TieredGraph]]:
    """(seed, graph) pairs: 4–8 observed nodes, 1–3 tiers, 0–3 latents, ≤ max_mag_edges MAG edges."""
    out = []
    seed = seed0
    while len(out) < n_cases:
        rng = np.random.default_rng(seed)
        n = int(rng.integers(4, 9))
        k = int(rng.integers(1, 4))
        deg = float(rng.uniform(1.0, 3.0))
        n_lat = int(rng.integers(0, 4))
        forbid = bool(rng.random() < 0.2)
        tg = random_tiered_dag(n, k, deg, n_lat, seed=rng, forbid_within=forbid)
        if tg.mag().n_edges() <= max_mag_edges:
            out.append((seed, tg))
        seed += 1
    return out
