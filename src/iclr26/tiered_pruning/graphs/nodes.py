"""Nodes: what a graph's vertices are, and the checks every graph class runs on them.

Nodes are any hashable values (usually strings). A graph keeps the order in which its nodes were
given and iterates in that order, so results are deterministic. A node or a set of nodes passed to
a graph method follows `iclr26.core.validation.node_set`'s one rule: a value that is itself one of
the graph's nodes is that node (so tuple-named nodes work), a string or a non-iterable is one node,
any other iterable is a set of nodes.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence
from typing import TypeAlias

from iclr26.core.validation import node_set

Node: TypeAlias = Hashable


class CyclicGraphError(ValueError):
    """A graph that must be acyclic has a directed cycle (the message names one)."""


def ordered_nodes(nodes: Iterable[Node], what: str) -> list[Node]:
    """The nodes as a list in their given order; a repeated node raises naming `what`."""
    out: list[Node] = []
    seen: set[Node] = set()
    for v in nodes:
        if v in seen:
            raise ValueError(f"{what}: node {v!r} is listed twice")
        seen.add(v)
        out.append(v)
    return out


def check_node(v: Node, nodes: Collection[Node], what: str) -> None:
    """Raise unless `v` is one of `nodes` (the error names `what`, `v` and the graph's nodes)."""
    if v not in nodes:
        node_set(what, [v], nodes)  # raises: the one message for an unknown node


def string_names(nodes: Sequence[Node]) -> dict[Node, str]:
    """`str(node)` of each node, for libraries that name nodes by strings (causal-learn)."""
    names = {v: str(v) for v in nodes}
    if len(set(names.values())) < len(names):
        raise ValueError("causal-learn needs distinct node names; str() of two nodes coincide")
    return names
