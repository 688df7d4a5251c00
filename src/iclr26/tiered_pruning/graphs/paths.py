"""Paths shared by every graph class: topological order (naming a cycle when there is none),
ancestors along directed edges (`closure`), and m-connection (Richardson 2003; d-connection in a DAG).

The functions work on plain mappings (parents, children, incidence lists), which each graph class
fills from its own edges.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TypeAlias

from iclr26.core.validation import node_set
from iclr26.tiered_pruning.graphs.nodes import CyclicGraphError, Node

# An incidence list: for each node v, tuples (w, arrowhead at v, arrowhead at w), one per edge.
Incidence: TypeAlias = Mapping[Node, Sequence[tuple[Node, bool, bool]]]


def _find_cycle(nodes: Iterable[Node], parents: Mapping[Node, Iterable[Node]]) -> list[Node]:
    """A directed cycle among the leftover nodes of Kahn's algorithm, in edge direction."""
    nodes = set(nodes)
    start = next(iter(nodes))
    # every leftover node has a leftover parent: walk up parents until a node repeats
    path: list[Node] = [start]
    pos = {start: 0}
    while True:
        prev = next(p for p in parents[path[-1]] if p in nodes)
        if prev in pos:
            cycle = [*path[pos[prev] :], prev]
            return cycle[::-1]
        pos[prev] = len(path)
        path.append(prev)


def topological_sort(
    nodes: Sequence[Node], parents: Mapping[Node, set[Node]], children: Mapping[Node, set[Node]], what: str
) -> list[Node]:
    """Kahn's algorithm in node order; raises CyclicGraphError naming a cycle."""
    indeg = {v: len(parents[v]) for v in nodes}
    index = {v: i for i, v in enumerate(nodes)}
    ready = deque(v for v in nodes if indeg[v] == 0)
    order: list[Node] = []
    while ready:
        v = ready.popleft()
        order.append(v)
        for c in sorted(children[v], key=index.__getitem__):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if len(order) < len(nodes):
        left = [v for v in nodes if indeg[v] > 0]
        cycle = _find_cycle(left, parents)
        raise CyclicGraphError(
            f"{what} has a directed cycle: {' -> '.join(map(repr, cycle))}; remove one of these edges"
        )
    return order


def closure(vs: Iterable[Node], parents: Mapping[Node, Iterable[Node]]) -> set[Node]:
    """The ancestors of `vs` along `parents`, including `vs` themselves (with children: the
    descendants; with bidirected neighbours: the districts)."""
    out = set(vs)
    stack = list(out)
    while stack:
        for p in parents[stack.pop()]:
            if p not in out:
                out.add(p)
                stack.append(p)
    return out


def m_connected_nodes(
    incidence: Incidence,
    parents: Mapping[Node, Iterable[Node]],
    xs: Collection[Node],
    zs: Collection[Node],
) -> set[Node]:
    """Nodes m-connected to some x ∈ xs given zs (Richardson 2003; d-connection for DAGs).

    A path is m-connecting given Z when every collider on it is in An(Z) and every non-collider
    is outside Z. We search walks over states (v, whether the edge we came along has an
    arrowhead at v); a walk with these properties exists iff an m-connecting path does.
    """
    zs = set(zs)
    an_z = closure(zs, parents)
    seen: set[tuple[Node, bool]] = set()
    queue: deque[tuple[Node, bool]] = deque()
    for x in xs:
        for w, _, head_w in incidence[x]:
            if (w, head_w) not in seen:
                seen.add((w, head_w))
                queue.append((w, head_w))
    reached: set[Node] = set()
    while queue:
        v, head_in = queue.popleft()
        if v not in zs:  # a node of zs can only be passed through as a collider
            reached.add(v)
        for w, head_v, head_w in incidence[v]:
            collider = head_in and head_v
            passable = (v in an_z) if collider else (v not in zs)
            if passable and (w, head_w) not in seen:
                seen.add((w, head_w))
                queue.append((w, head_w))
    return reached - set(xs)


def m_separated(
    incidence: Incidence,
    parents: Mapping[Node, Iterable[Node]],
    nodes: Collection[Node],
    x: Node | Iterable[Node],
    y: Node | Iterable[Node],
    z: Node | Iterable[Node],
    what: str,
) -> bool:
    """Whether the node sets x and y are m-separated given z (each a node or a collection of
    `nodes`); they must be disjoint. Errors name `what`."""
    xs, ys, zs = (node_set(what, v, nodes) for v in (x, y, z))
    overlap = (xs & ys) | (xs & zs) | (ys & zs)
    if overlap:
        raise ValueError(
            f"{what}: x, y and the conditioning set must be disjoint; {sorted(map(repr, overlap))}"
        )
    return not (m_connected_nodes(incidence, parents, xs, zs) & ys)
