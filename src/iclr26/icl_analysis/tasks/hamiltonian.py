"""Hamiltonian cycle: a directed graph's adjacency list and a path; the label is whether the path
is a Hamiltonian cycle (every vertex once, starting at 0, each step and the step back to 0 an
edge)."""

from __future__ import annotations

import random

from iclr26.icl_analysis.tasks.base import Task

SIZES = (5, 7, 10, 12, 15, 20, 25, 30)
# Per-target edge probabilities w_v(δ) = base_v + slope_v·δ (the authors' vertex weights; vertex v
# of an n-vertex graph uses entry v).
_BASE = (1, .75, .4, .5, .5, .5, .75, .4, .5, 1, .75, 1, .5, .9, .6, .5, .9, .75, .6, 1,
         .6, .5, 1, .75, .9, .9, .6, .4, 1, .5)  # fmt: skip
_SLOPE = (-1/16, -1/2, 1/2, 1/16, 1/2, 1/16, -1/16, 1/2, 1/16, -1/16, -1/2, -1/16, 1/16, -1/2,
          1/8, 1/16, -1/2, -1/2, 1/8, -1/16, 1/8, 1/16, -1/16, -1/2, -1/2, -1/2, 1/8, 1/2, -1/16,
          1/16)  # fmt: skip


def format_graph(adj: dict[int, list[int]], path: list[int]) -> str:
    """`0: 1 3 | 1: 0 2 | ... ; path: 0,3,1,2`."""
    graph = " | ".join(f"{v}: {' '.join(map(str, adj[v])) or '-'}" for v in sorted(adj))
    return f"{graph} ; path: {','.join(map(str, path))}"


def parse_graph(entry: str) -> tuple[dict[int, set[int]], list[int]] | None:
    """The adjacency sets and the path of a formatted entry, or None when it does not parse."""
    try:
        graph, path = entry.split(" ; path: ")
        adj: dict[int, set[int]] = {}
        for part in graph.split(" | "):
            v, succ = part.split(":")
            adj[int(v)] = set() if succ.strip() == "-" else {int(u) for u in succ.split()}
        return adj, [int(v) for v in path.split(",") if v]
    except ValueError:
        return None


def is_hamiltonian_cycle(adj: dict[int, set[int]], path: list[int]) -> bool:
    """Whether `path` visits every vertex once from 0 and closes back to 0 along edges."""
    if len(path) != len(adj) or set(path) != set(adj) or not path or path[0] != 0:
        return False
    return all(b in adj[a] for a, b in zip(path, path[1:] + path[:1], strict=True))


class Hamiltonian(Task):
    """Each graph gets edges u -> v with probability w_v(δ) and a planted Hamiltonian cycle, so
    every graph has one; a positive shows a Hamiltonian cycle, a negative a corrupted path (a vertex
    dropped, repeated or invented, or a reordering that breaks an edge). Q(δ) changes the edge
    probabilities linearly (Q(0) = P)."""

    name = "hamiltonian"
    description = "the label is 1 when the path visits every vertex exactly once along edges and returns to 0"

    def __init__(self, sizes: tuple[int, ...] = SIZES) -> None:
        self.sizes = sizes

    def transitions(self, delta: float) -> list[list[float]]:
        # one Bernoulli row per target vertex: [edge, no edge]
        return [[b + s * delta, 1 - (b + s * delta)] for b, s in zip(_BASE, _SLOPE, strict=True)]

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        n = rng.choice(self.sizes)
        w = [_BASE[v] + _SLOPE[v] * delta for v in range(n)]
        adj = {u: {v for v in range(n) if v != u and rng.random() < w[v]} for u in range(n)}
        cycle = [0, *rng.sample(range(1, n), n - 1)]
        for a, b in zip(cycle, cycle[1:] + cycle[:1], strict=True):
            adj[a].add(b)
        path = cycle
        if not positive:
            kind = rng.randrange(4)
            path = list(cycle)
            if kind == 0:
                del path[rng.randrange(1, n)]
            elif kind == 1:
                path.insert(rng.randrange(1, n + 1), path[rng.randrange(1, n)])
            elif kind == 2:
                path.insert(rng.randrange(1, n + 1), n)
            else:
                rest = path[1:]
                rng.shuffle(rest)
                path = [0, *rest]
            if is_hamiltonian_cycle(adj, path):
                return None
        return format_graph({u: sorted(vs) for u, vs in adj.items()}, path)

    def check(self, entry: str) -> int:
        parsed = parse_graph(entry)
        return int(parsed is not None and is_hamiltonian_cycle(*parsed))
