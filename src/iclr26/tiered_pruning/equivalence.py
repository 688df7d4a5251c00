"""A search-free reference for PAGs: enumerate the Markov equivalence class of a MAG.

The PAG of a MAG M (optionally refined by tiered knowledge) is, by definition, the graph with M's
skeleton whose mark at each endpoint is the mark shared by every MAG Markov equivalent to M (and
consistent with the knowledge), and a circle where they disagree (Zhang 2008; Andrews et
al. 2020 for the tiered class). This module computes exactly that by brute force on small graphs,
independently of FCI's rules, so tests can check FCI and `mag_to_pag` against it.

Candidates share M's skeleton; each edge is a -> b, b -> a or a <-> b (no selection bias). The
backtracking prunes on M's unshielded colliders (a necessary condition for equivalence, Spirtes &
Richardson 1996), directed cycles and the tiers; each complete candidate must be ancestral,
consistent with the tiers and Markov equivalent to M, checked by m-separation:

- `check="pairwise"`: a maximal ancestral graph's independence model is determined by its
  pairwise statements a ⊥ b | An({a, b}) minus {a, b} over non-adjacent pairs (Richardson &
  Spirtes 2002; pairwise ⇔ global Markov for compositional graphoids, Sadeghi &
  Lauritzen 2014). We check each graph's pairwise statements in the other.
- `check="exhaustive"`: every non-adjacent pair given every subset of the other nodes (tiny
  graphs only; tests use it to check the pairwise shortcut).
"""

from __future__ import annotations

from collections import deque
from itertools import chain, combinations
from typing import Literal

from iclr26.core.validation import check_in
from iclr26.tiered_pruning.graphs import MAG, PAG, Mark, Node, Tiers

A, T, C = Mark.ARROW, Mark.TAIL, Mark.CIRCLE
_OPTIONS = ((T, A), (A, T), (A, A))  # (mark at a, mark at b): a -> b, b -> a, a <-> b


def _equivalent(ref: MAG, cand: MAG, check: str) -> bool:
    nodes = ref.nodes
    for i, u in enumerate(nodes):
        for v in nodes[i + 1 :]:
            if ref.adjacent(u, v):
                continue
            if check == "pairwise":
                if not ref.m_separated(u, v, cand.ancestors([u, v]) - {u, v}):
                    return False
                if not cand.m_separated(u, v, ref.ancestors([u, v]) - {u, v}):
                    return False
            else:
                rest = [w for w in nodes if w not in (u, v)]
                for z in chain.from_iterable(combinations(rest, k) for k in range(len(rest) + 1)):
                    if ref.m_separated(u, v, z) != cand.m_separated(u, v, z):
                        return False
    return True


def markov_equivalent_mags(
    mag: MAG,
    tiers: Tiers | None = None,
    check: Literal["pairwise", "exhaustive"] = "pairwise",
    limit: int = 100_000,
) -> list[MAG]:
    """All MAGs Markov equivalent to `mag` (and consistent with `tiers`), `mag` included if consistent.

    Raises RuntimeError if more than `limit` complete candidates would be examined.
    """
    check_in("markov_equivalent_mags: check", check, ("pairwise", "exhaustive"))
    if tiers is not None:
        tiers.check_covers(mag.nodes)
    nodes = list(mag.nodes)
    # order edges breadth-first so that triples close early and pruning bites
    pos: dict[Node, int] = {}
    for root in nodes:
        if root in pos:
            continue
        pos[root] = len(pos)
        queue = deque([root])
        while queue:
            v = queue.popleft()
            for w in mag.neighbors(v):
                if w not in pos:
                    pos[w] = len(pos)
                    queue.append(w)
    edges = sorted(
        ((a, b) for a, b, _, _ in mag.edges()),
        key=lambda e: (max(pos[e[0]], pos[e[1]]), min(pos[e[0]], pos[e[1]])),
    )
    edge_id = {frozenset(e): i for i, e in enumerate(edges)}
    # unshielded triples (a, b, c), checked once the later of their two edges is assigned
    triples_at: list[list[tuple[Node, Node, Node, bool]]] = [[] for _ in edges]
    for b in nodes:
        nbrs = mag.neighbors(b)
        for i, a in enumerate(nbrs):
            for c in nbrs[i + 1 :]:
                if not mag.adjacent(a, c):
                    collider = mag.mark(a, b) is A and mag.mark(c, b) is A
                    k = max(edge_id[frozenset((a, b))], edge_id[frozenset((c, b))])
                    triples_at[k].append((a, b, c, collider))

    marks: dict[tuple[Node, Node], Mark] = {}  # (u, v) -> mark at v
    parents: dict[Node, set[Node]] = {v: set() for v in nodes}
    out: list[MAG] = []
    leaves = 0

    def is_ancestor(u: Node, v: Node) -> bool:
        stack, seen = [v], {v}
        while stack:
            x = stack.pop()
            if x == u:
                return True
            for p in parents[x]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return False

    def extend(k: int) -> None:
        nonlocal leaves
        if k == len(edges):
            leaves += 1
            if leaves > limit:
                raise RuntimeError(
                    f"markov_equivalent_mags: more than limit={limit} candidates; use a smaller graph"
                )
            try:
                cand = MAG(nodes, [(a, b, marks[(b, a)], marks[(a, b)]) for a, b in edges])
            except ValueError:  # not ancestral
                return
            if tiers is not None and tiers.violations(cand):
                return
            if _equivalent(mag, cand, check):
                out.append(cand)
            return
        a, b = edges[k]
        for ma, mb in _OPTIONS:
            if ma is T:  # a -> b
                if (tiers is not None and not tiers.can_be_ancestor(a, b)) or is_ancestor(b, a):
                    continue
                parents[b].add(a)
            elif mb is T:  # b -> a
                if (tiers is not None and not tiers.can_be_ancestor(b, a)) or is_ancestor(a, b):
                    continue
                parents[a].add(b)
            marks[(b, a)], marks[(a, b)] = ma, mb
            ok = all(
                (marks[(x, y)] is A and marks[(z, y)] is A) == collider for x, y, z, collider in triples_at[k]
            )
            if ok:
                extend(k + 1)
            parents[b].discard(a)
            parents[a].discard(b)
        marks.pop((b, a), None)
        marks.pop((a, b), None)

    extend(0)
    return out


def pag_by_enumeration(
    mag: MAG, tiers: Tiers | None = None, check: Literal["pairwise", "exhaustive"] = "pairwise"
) -> PAG:
    """The (tier-refined) PAG as the marks common to all equivalent, knowledge-consistent MAGs."""
    mags = markov_equivalent_mags(mag, tiers, check)
    if not mags:
        raise ValueError("pag_by_enumeration: no MAG in the class is consistent with the tiers")
    pag = PAG(mag.nodes)
    for a, b, _, _ in mag.edges():
        at_a = {m.mark(b, a) for m in mags}
        at_b = {m.mark(a, b) for m in mags}
        pag.add_edge(a, b, at_a.pop() if len(at_a) == 1 else C, at_b.pop() if len(at_b) == 1 else C)
    return pag
