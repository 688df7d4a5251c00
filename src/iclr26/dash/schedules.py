"""Tile schedules of the deterministic attention backward: which Q tile each KV block visits at
each step, and the fixed order in which the dQ contributions of one Q tile are summed.

The backward runs one *work item* per KV block (per head): it keeps dK, dV of its block in
registers and walks over Q tiles, adding a dQ contribution dS·K into each Q tile's fp32
accumulator. Deterministic mode fixes, for every Q tile, the order of those additions: the KV
block whose *turn* is t waits until t contributions have landed (DASH §3, the DAG's reduction
chains). A schedule is therefore two things, both fixed before launch:

- the *visit order*: the Q tiles of each work item, step by step (DASH §4);
- the *accumulation order* (turns): FA3's baseline sums in ascending KV index whatever the visit
  order (`NaiveDependency` in the authors' fork); shift scheduling sums in the order its visits
  arrive, so no KV block ever waits in the ideal pipeline (DASH §4.2).

Schedules (names as the paper's):
- ``ascending``: every KV block visits its Q tiles from first to last (FA3's deterministic backward).
- ``descending``: from last to first (§4.1, Descending Q-tile iteration; targets causal masks).
- ``shift``: full mask: KV block at position a of its wave visits Q tile (a + t) mod M at step t
  (§4.2, Shift scheduling); causal mask: KV blocks j and N−1−j are paired into one work item
  (equal work per item); the long side rotates over the Q tiles every block of the wave shares
  and then walks its remaining triangle upward, the short side walks down (our reading of the
  fork's ``ShiftCausalScheduler``; see the README).

A *wave* is the set of work items of one head that run at the same time (at most the number of
SMs). Turns are assigned wave by wave, so a work item only ever waits for items of its own or
an earlier wave: with every program of a wave resident, the spin-waits cannot deadlock.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr26.core.validation import check_in

SCHEDULES = ("ascending", "descending", "shift")


def first_q_tile(kv_block: int, block_m: int, block_n: int) -> int:
    """First Q tile that KV block `kv_block` reaches under a causal mask (rows i ≥ keys j)."""
    # Q tile i holds rows [i·BM, (i+1)·BM); it sees key j·BN iff (i+1)·BM − 1 ≥ j·BN.
    return (kv_block * block_n) // block_m


@dataclass(frozen=True)
class TilePlan:
    """The work of one head: per work item (slot), its KV blocks, Q-tile steps and turns.

    ``kv[s, p]`` is the KV block of phase p of slot s (−1: none); ``phase_len[s, p]`` its number of
    steps; ``q[s, t]`` / ``turn[s, t]`` the Q tile and the accumulation turn of step t (phases
    concatenated, −1 past the end). ``wave_size`` slots of a head run concurrently.
    """

    schedule: str
    causal: bool
    n_q: int
    n_kv: int
    block_m: int
    block_n: int
    wave_size: int
    kv: np.ndarray
    phase_len: np.ndarray
    q: np.ndarray
    turn: np.ndarray

    @property
    def n_slots(self) -> int:
        return int(self.kv.shape[0])

    @property
    def n_phases(self) -> int:
        return int(self.kv.shape[1])

    @property
    def max_steps(self) -> int:
        return int(self.q.shape[1])

    def steps(self, slot: int) -> list[tuple[int, int, int]]:
        """(kv block, q tile, turn) of every step of one slot, in execution order."""
        out, t = [], 0
        for p in range(self.n_phases):
            j = int(self.kv[slot, p])
            for _ in range(int(self.phase_len[slot, p])):
                out.append((j, int(self.q[slot, t]), int(self.turn[slot, t])))
                t += 1
        return out

    def contributors(self) -> dict[int, list[int]]:
        """For every Q tile, its KV blocks in accumulation (turn) order."""
        by_tile: dict[int, dict[int, int]] = {}
        for s in range(self.n_slots):
            for j, i, t in self.steps(s):
                by_tile.setdefault(i, {})[t] = j
        return {i: [d[t] for t in sorted(d)] for i, d in sorted(by_tile.items())}


def _visits(schedule: str, causal: bool, n_q: int, n_kv: int, bm: int, bn: int, wave: int):
    """Per slot: list of (kv block, [q tiles in visit order])."""
    lo = [first_q_tile(j, bm, bn) if causal else 0 for j in range(n_kv)]
    if schedule == "ascending":
        return [[(j, list(range(lo[j], n_q)))] for j in range(n_kv)]
    if schedule == "descending":
        return [[(j, list(range(n_q - 1, lo[j] - 1, -1)))] for j in range(n_kv)]
    if not causal:  # shift, full mask: position a of its wave starts at Q tile a (§4.2)
        return [[(j, [((j % wave) + t) % n_q for t in range(n_q)])] for j in range(n_kv)]
    # shift, causal: pair j (long side) with N−1−j (short side).
    n_slots = (n_kv + 1) // 2
    slots = []
    for s in range(n_slots):
        chunk_end = min((s // wave + 1) * wave, n_slots) - 1  # last long-side block of s's wave
        rect = lo[chunk_end]  # Q tiles [rect, M) are reached by every long-side block of the wave
        width = n_q - rect
        a = s % wave
        long_side = [rect + (a + t) % width for t in range(width)] + list(range(lo[s], rect))
        phases = [(s, long_side)]
        partner = n_kv - 1 - s
        if partner != s:
            phases.append((partner, list(range(n_q - 1, lo[partner] - 1, -1))))
        slots.append(phases)
    return slots


def tile_plan(
    schedule: str,
    n_q: int,
    n_kv: int,
    *,
    causal: bool,
    block_m: int = 64,
    block_n: int = 64,
    wave_size: int | None = None,
) -> TilePlan:
    """Build the visit order and accumulation turns of `schedule` for one head of M×N tiles."""
    check_in("schedule", schedule, SCHEDULES)
    if n_q < 1 or n_kv < 1:
        raise ValueError(f"need at least one Q tile and one KV block, got n_q={n_q}, n_kv={n_kv}")
    if block_m < 1 or block_n < 1:
        raise ValueError(f"block sizes must be positive, got block_m={block_m}, block_n={block_n}")
    if causal and first_q_tile(n_kv - 1, block_m, block_n) >= n_q:
        raise ValueError(
            f"causal mask needs as many query rows as keys: {n_kv} KV blocks of {block_n} reach "
            f"past {n_q} Q tiles of {block_m}"
        )
    n_slots = (n_kv + 1) // 2 if (schedule == "shift" and causal) else n_kv
    wave = n_slots if wave_size is None else int(wave_size)
    if wave < 1:
        raise ValueError(f"wave_size must be >= 1, got {wave_size}")
    wave = min(wave, n_slots)
    slots = _visits(schedule, causal, n_q, n_kv, block_m, block_n, wave)

    n_phases = max(len(p) for p in slots)
    max_steps = max(sum(len(qs) for _, qs in p) for p in slots)
    kv = np.full((n_slots, n_phases), -1, np.int32)
    phase_len = np.zeros((n_slots, n_phases), np.int32)
    q = np.full((n_slots, max_steps), -1, np.int32)
    turn = np.full((n_slots, max_steps), -1, np.int32)
    # Accumulation order per Q tile. Baseline schedules: ascending KV index (FA3's naive
    # dependency). Shift: nominal arrival (wave, step, position in wave): in a stall-free
    # pipeline every step takes the same time, so this is the order contributions arrive.
    keys: dict[int, list[tuple[tuple[int, ...], int, int]]] = {}
    for s, phases in enumerate(slots):
        t = 0
        for p, (j, qs) in enumerate(phases):
            kv[s, p] = j
            phase_len[s, p] = len(qs)
            for i in qs:
                q[s, t] = i
                key = (j,) if schedule != "shift" else (s // wave, t, s % wave)
                keys.setdefault(i, []).append((key, s, t))
                t += 1
    for entries in keys.values():
        for rank, (_, s, t) in enumerate(sorted(entries)):
            turn[s, t] = rank
    return TilePlan(schedule, causal, n_q, n_kv, block_m, block_n, wave, kv, phase_len, q, turn)
