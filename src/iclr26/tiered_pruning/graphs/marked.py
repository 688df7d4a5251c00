"""Graphs with edge marks (tail, arrowhead, circle) of Richardson & Spirtes (2002) and Zhang (2008):
`MAG`, the maximal ancestral graph of a DAG with latents, and `PAG`, its Markov equivalence class
(possibly refined by background knowledge) as learned by FCI.

`mark(a, b)` is the mark *at b* on the edge between a and b (pcalg's `amat[a, b]` convention):
`a o-> b` has `mark(a, b) == ARROW` and `mark(b, a) == CIRCLE`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import Any, TypeAlias

import networkx as nx

from iclr26.core.validation import node_set
from iclr26.tiered_pruning.graphs.nodes import Node, check_node, ordered_nodes, string_names
from iclr26.tiered_pruning.graphs.paths import closure, m_separated, topological_sort


class Mark(Enum):
    """An edge mark (endpoint) of a MAG or PAG."""

    TAIL = "-"
    ARROW = ">"
    CIRCLE = "o"


_LEFT = {Mark.TAIL: "-", Mark.ARROW: "<", Mark.CIRCLE: "o"}
_RIGHT = {Mark.TAIL: "-", Mark.ARROW: ">", Mark.CIRCLE: "o"}
_FROM_LEFT = {v: k for k, v in _LEFT.items()}
_FROM_RIGHT = {v: k for k, v in _RIGHT.items()}
_EDGE_RE = re.compile(r"^\s*(\S+)\s+([-<o])-([->o])\s+(\S+)\s*$")


EdgeSpec: TypeAlias = tuple[Node, Node, Mark, Mark] | str


class _MarkedGraph:
    """At most one edge per pair, each endpoint carrying a Mark; `mark(a, b)` is the mark at b."""

    _kind = "graph"

    def __init__(self, nodes: Iterable[Node] = (), edges: Iterable[EdgeSpec] = ()) -> None:
        self._nodes = ordered_nodes(nodes, self._kind)
        self._index = {v: i for i, v in enumerate(self._nodes)}
        self._m: dict[Node, dict[Node, Mark]] = {v: {} for v in self._nodes}
        for e in edges:
            a, b, ma, mb = self._parse(e) if isinstance(e, str) else e
            self.add_edge(a, b, ma, mb)

    def _parse(self, s: str) -> tuple[Node, Node, Mark, Mark]:
        match = _EDGE_RE.match(s)
        if match is None:
            raise ValueError(f"{self._kind} edge {s!r}: expected 'A o-> B' (marks: - < > o)")
        a, left, right, b = match.groups()
        return a, b, _FROM_LEFT[left], _FROM_RIGHT[right]

    @classmethod
    def from_strings(cls, edges: Iterable[str], nodes: Iterable[Node] | None = None) -> Any:
        """Build from strings like 'A o-> B', 'B <-> C', 'C --> D' (nodes in order of appearance)."""
        edges = list(edges)
        if nodes is None:
            order: dict[Node, None] = {}
            for s in edges:
                match = _EDGE_RE.match(s)
                if match is None:
                    raise ValueError(f"{cls._kind} edge {s!r}: expected 'A o-> B' (marks: - < > o)")
                order[match.group(1)] = None
                order[match.group(4)] = None
            nodes = list(order)
        return cls(nodes, edges)

    # -- structure ---------------------------------------------------------------------------
    @property
    def nodes(self) -> tuple[Node, ...]:
        """The vertices in their given order."""
        return tuple(self._nodes)

    def __contains__(self, v: object) -> bool:
        return v in self._index

    def __len__(self) -> int:
        return len(self._nodes)

    def index_of(self, v: Node) -> int:
        """The position of v in the node order."""
        return self._index[v]

    def adjacent(self, a: Node, b: Node) -> bool:
        """Whether a and b share an edge."""
        return b in self._m[a]

    def neighbors(self, v: Node) -> list[Node]:
        """Adjacent nodes, in node order."""
        return sorted(self._m[v], key=self._index.__getitem__)

    def mark(self, a: Node, b: Node) -> Mark:
        """The mark at b on the edge between a and b."""
        try:
            return self._m[a][b]
        except KeyError:
            check_node(a, self._index, f"{self._kind}.mark")
            check_node(b, self._index, f"{self._kind}.mark")
            raise ValueError(f"{self._kind}.mark: {a!r} and {b!r} are not adjacent") from None

    def endpoints(self, a: Node, b: Node) -> tuple[Mark, Mark]:
        """(mark at a, mark at b) on the edge a *-* b."""
        return self.mark(b, a), self.mark(a, b)

    def add_edge(self, a: Node, b: Node, mark_a: Mark, mark_b: Mark) -> None:
        """Add edge a *-* b with the given marks (replacing any edge between them)."""
        check_node(a, self._index, f"{self._kind} edge {a!r}-{b!r}")
        check_node(b, self._index, f"{self._kind} edge {a!r}-{b!r}")
        if a == b:
            raise ValueError(f"{self._kind} edge {a!r}-{b!r} is a self-loop")
        if not isinstance(mark_a, Mark) or not isinstance(mark_b, Mark):
            raise TypeError(
                f"{self._kind} edge {a!r}-{b!r}: marks must be Mark values, got {mark_a!r}, {mark_b!r}"
            )
        self._m[b][a] = mark_a
        self._m[a][b] = mark_b

    def remove_edge(self, a: Node, b: Node) -> None:
        """Remove the edge between a and b (must exist)."""
        self.mark(a, b)
        del self._m[a][b]
        del self._m[b][a]

    def edges(self) -> list[tuple[Node, Node, Mark, Mark]]:
        """(a, b, mark at a, mark at b), each edge once with a before b in node order."""
        return [
            (a, b, self._m[b][a], self._m[a][b])
            for a in self._nodes
            for b in self.neighbors(a)
            if self._index[a] < self._index[b]
        ]

    def n_edges(self) -> int:
        """Number of edges."""
        return sum(map(len, self._m.values())) // 2

    def skeleton(self) -> set[frozenset[Node]]:
        """The adjacencies as unordered pairs."""
        return {frozenset((a, b)) for a, b, _, _ in self.edges()}

    def edge_string(self, a: Node, b: Node) -> str:
        """'a o-> b' style rendering of the edge between a and b."""
        return f"{a} {_LEFT[self.mark(b, a)]}-{_RIGHT[self.mark(a, b)]} {b}"

    def edge_strings(self) -> list[str]:
        """All edges rendered as strings."""
        return [self.edge_string(a, b) for a, b, _, _ in self.edges()]

    def __str__(self) -> str:
        return f"{self._kind}[" + ", ".join(self.edge_strings()) + "]"

    def __repr__(self) -> str:
        return f"{self._kind}({len(self._nodes)} nodes, {self.n_edges()} edges)"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and set(self._nodes) == set(other._nodes) and self._m == other._m  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def differences(self, other: _MarkedGraph) -> list[str]:
        """Human-readable list of adjacencies and marks that differ from `other` (for test messages)."""
        out = []
        for a in self._nodes:
            for b in self._nodes:
                if self._index[a] >= self._index[b]:
                    continue
                mine = self.edge_string(a, b) if self.adjacent(a, b) else None
                theirs = (
                    other.edge_string(a, b) if (a in other and b in other and other.adjacent(a, b)) else None
                )
                if mine != theirs:
                    out.append(f"{mine or f'{a} . {b}'}  vs  {theirs or f'{a} . {b}'}")
        return out

    def incidence(self) -> dict[Node, list[tuple[Node, bool, bool]]]:
        """For each v: (w, arrowhead at v, arrowhead at w) for every edge v *-* w."""
        return {
            v: [(w, self._m[w][v] is Mark.ARROW, self._m[v][w] is Mark.ARROW) for w in self.neighbors(v)]
            for v in self._nodes
        }

    # -- conversions ---------------------------------------------------------------------------
    def to_networkx(self) -> nx.Graph:
        """An undirected nx.Graph whose edges carry `marks={a: Mark, b: Mark}` (mark at each end)."""
        g = nx.Graph()
        g.add_nodes_from(self._nodes)
        for a, b, ma, mb in self.edges():
            g.add_edge(a, b, marks={a: ma, b: mb})
        return g

    @classmethod
    def from_networkx(cls, g: nx.Graph) -> Any:
        """Inverse of `to_networkx` (each edge needs a `marks` attribute)."""
        edges = []
        for a, b, data in g.edges(data=True):
            marks = data.get("marks")
            if not isinstance(marks, Mapping) or a not in marks or b not in marks:
                raise ValueError(
                    f"{cls._kind}.from_networkx: edge {a!r}-{b!r} lacks marks={{a: Mark, b: Mark}}"
                )
            edges.append((a, b, Mark(marks[a]), Mark(marks[b])))
        return cls(g.nodes, edges)

    def to_causallearn(self) -> Any:
        """A causal-learn `GeneralGraph` with Endpoint TAIL/ARROW/CIRCLE (node names are str(node))."""
        from causallearn.graph.Edge import Edge
        from causallearn.graph.GeneralGraph import GeneralGraph
        from causallearn.graph.GraphNode import GraphNode

        names = string_names(self._nodes)
        cl = {v: GraphNode(names[v]) for v in self._nodes}
        g = GeneralGraph([cl[v] for v in self._nodes])
        to_ep = _to_endpoint()
        for a, b, ma, mb in self.edges():
            g.add_edge(Edge(cl[a], cl[b], to_ep[ma], to_ep[mb]))
        return g

    @classmethod
    def from_causallearn(cls, g: Any, rename: Callable[[str], Node] | None = None) -> Any:
        """From a causal-learn `GeneralGraph`; `rename` maps its node names to ours."""
        from causallearn.graph.Endpoint import Endpoint

        rn = rename or (lambda s: s)
        # causal-learn's Endpoint defines __eq__ without __hash__: key by its value
        back = {
            Endpoint.TAIL.value: Mark.TAIL,
            Endpoint.ARROW.value: Mark.ARROW,
            Endpoint.CIRCLE.value: Mark.CIRCLE,
        }
        nodes = [rn(n.get_name()) for n in g.get_nodes()]
        edges = []
        for e in g.get_graph_edges():
            e1, e2 = e.get_endpoint1().value, e.get_endpoint2().value
            if e1 not in back or e2 not in back:
                raise ValueError(f"{cls._kind}.from_causallearn: unsupported endpoint in edge {e}")
            edges.append((rn(e.get_node1().get_name()), rn(e.get_node2().get_name()), back[e1], back[e2]))
        return cls(nodes, edges)


def _to_endpoint() -> dict[Mark, Any]:
    """Mark -> causal-learn Endpoint (built lazily: causal-learn is optional)."""
    from causallearn.graph.Endpoint import Endpoint

    return {Mark.TAIL: Endpoint.TAIL, Mark.ARROW: Endpoint.ARROW, Mark.CIRCLE: Endpoint.CIRCLE}


class PAG(_MarkedGraph):
    """A partial ancestral graph: edge marks tail, arrowhead or circle (Zhang 2008).

    Mutable: FCI builds it edge by edge and orients it with `set_mark`.
    """

    _kind = "PAG"

    @classmethod
    def complete(cls, nodes: Iterable[Node]) -> PAG:
        """The complete graph with every edge o-o (the start of FCI's adjacency search)."""
        nodes = list(nodes)
        g = cls(nodes)
        for i, a in enumerate(nodes):
            for b in nodes[i + 1 :]:
                g._m[a][b] = Mark.CIRCLE
                g._m[b][a] = Mark.CIRCLE
        return g

    def set_mark(self, a: Node, b: Node, mark: Mark) -> None:
        """Set the mark at b on the edge between a and b."""
        self.mark(a, b)
        self._m[a][b] = mark

    def copy(self) -> PAG:
        """An independent copy."""
        g = PAG(self._nodes)
        g._m = {v: dict(d) for v, d in self._m.items()}
        return g

    def with_all_circles(self) -> PAG:
        """The same skeleton with every mark a circle (FCI's reset before final orientation)."""
        g = self.copy()
        for v in g._m:
            for w in g._m[v]:
                g._m[v][w] = Mark.CIRCLE
        return g


class MAG(_MarkedGraph):
    """A maximal ancestral graph without selection bias: edges a -> b and a <-> b only.

    Validated on construction to be ancestral (no directed cycle; no a <-> b with a ∈ An(b),
    Richardson & Spirtes 2002). Maximality is checked by `is_maximal()`.
    """

    _kind = "MAG"

    def __init__(self, nodes: Iterable[Node] = (), edges: Iterable[EdgeSpec] = ()) -> None:
        super().__init__(nodes, edges)
        for a, b, ma, mb in self.edges():
            if Mark.CIRCLE in (ma, mb):
                raise ValueError(f"MAG edge {self.edge_string(a, b)} has a circle mark; use a PAG")
            if ma is Mark.TAIL and mb is Mark.TAIL:
                raise ValueError(
                    f"MAG edge {self.edge_string(a, b)} is undirected (selection bias): not supported"
                )
        self._pa = {
            v: {w for w, m in self._m[v].items() if m is Mark.TAIL and self._m[w][v] is Mark.ARROW}
            for v in self._nodes
        }
        ch = {v: {w for w in self._m[v] if v in self._pa[w]} for v in self._nodes}
        topological_sort(self._nodes, self._pa, ch, "MAG (directed part)")
        for a, b, ma, mb in self.edges():
            if (
                ma is Mark.ARROW
                and mb is Mark.ARROW
                and (a in closure([b], self._pa) or b in closure([a], self._pa))
            ):
                raise ValueError(f"MAG edge {a} <-> {b} closes an almost directed cycle: not ancestral")
        self._inc = self.incidence()

    def add_edge(self, a: Node, b: Node, mark_a: Mark, mark_b: Mark) -> None:
        """Only during construction: a MAG is immutable afterwards."""
        if hasattr(self, "_inc"):
            raise TypeError("MAG is immutable after construction; build a new MAG")
        super().add_edge(a, b, mark_a, mark_b)

    def parents(self, v: Node) -> set[Node]:
        """Nodes w with w -> v."""
        check_node(v, self._index, "MAG.parents")
        return set(self._pa[v])

    def spouses(self, v: Node) -> set[Node]:
        """Nodes w with w <-> v."""
        return {w for w, m in self._m[v].items() if m is Mark.ARROW and self._m[w][v] is Mark.ARROW}

    def ancestors(self, vs: Node | Iterable[Node]) -> set[Node]:
        """An(vs), including vs."""
        return closure(node_set("MAG.ancestors", vs, self._index), self._pa)

    def m_separated(
        self, x: Node | Iterable[Node], y: Node | Iterable[Node], z: Node | Iterable[Node] = ()
    ) -> bool:
        """Whether x and y are m-separated given z (Richardson & Spirtes 2002)."""
        return m_separated(self._inc, self._pa, self._index, x, y, z, "MAG.m_separated")

    def is_maximal(self) -> bool:
        """Every non-adjacent pair is m-separated by some set (R&S 2002: by An({a,b}) minus a, b)."""
        for i, a in enumerate(self._nodes):
            for b in self._nodes[i + 1 :]:
                if not self.adjacent(a, b) and not self.m_separated(a, b, self.ancestors([a, b]) - {a, b}):
                    return False
        return True

    def to_pag_marks(self) -> PAG:
        """The MAG itself as a PAG object (same marks; no circles)."""
        return PAG(self._nodes, self.edges())
