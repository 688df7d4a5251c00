"""Causal graph types and tiered background knowledge.

Query-Specific Causal Graph Pruning under Tiered Knowledge (ICLR 2026, OpenReview bOfiLeoUJf).
This module holds the objects the paper reasons about:

- `DAG`: the data-generating graph, possibly with latent vertices;
- `ADMG`: acyclic directed mixed graph (directed + bidirected edges), the latent projection of a
  DAG (Verma & Pearl 1990; Tian & Pearl 2002) on which ID/IDC operate;
- `MAG` / `PAG`: graphs with edge marks (tail, arrowhead, circle) of Richardson & Spirtes (2002)
  and Zhang (2008); `MAG` is the maximal ancestral graph of a DAG with latents, `PAG` its Markov
  equivalence class (possibly refined by background knowledge) as learned by FCI;
- `Tiers`: tiered background knowledge (Andrews, Spirtes & Cooper, AISTATS 2020): an ordered
  partition of the observed variables such that no variable is an ancestor of a variable in an
  earlier tier.

Conventions: nodes are any hashable values (usually strings); every graph keeps the order in which
its nodes were given and iterates in that order, so results are deterministic. In `MAG`/`PAG`,
`mark(a, b)` is the mark *at b* on the edge between a and b (pcalg's `amat[a, b]` convention):
`a o-> b` has `mark(a, b) == ARROW` and `mark(b, a) == CIRCLE`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any, TypeAlias

import networkx as nx

Node: TypeAlias = Hashable


class CyclicGraphError(ValueError):
    """A graph that must be acyclic has a directed cycle (the message names one)."""


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


# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------


def _ordered_nodes(nodes: Iterable[Node], what: str) -> list[Node]:
    out: list[Node] = []
    seen: set[Node] = set()
    for v in nodes:
        if v in seen:
            raise ValueError(f"{what}: node {v!r} is listed twice")
        seen.add(v)
        out.append(v)
    return out


def _check_known(v: Node, index: Mapping[Node, int], what: str) -> None:
    if v not in index:
        raise ValueError(f"{what}: unknown node {v!r}; the graph has {_preview(index)}")


def _preview(nodes: Iterable[Node], k: int = 8) -> str:
    nodes = list(nodes)
    head = ", ".join(repr(v) for v in nodes[:k])
    return f"{len(nodes)} nodes ({head}{', ...' if len(nodes) > k else ''})"


def _as_set(v: Node | Iterable[Node], index: Mapping[Node, int], what: str) -> set[Node]:
    """A node or a collection of nodes as a set; a single node may itself be a tuple."""
    try:
        if v in index:
            return {v}
    except TypeError:  # unhashable: a list or set of nodes
        pass
    if isinstance(v, str) or not isinstance(v, Iterable):
        _check_known(v, index, what)
    out = set(v)  # type: ignore[arg-type]
    for u in out:
        _check_known(u, index, what)
    return out


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


def _topological_order(
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


def _ancestors(vs: Iterable[Node], parents: Mapping[Node, Iterable[Node]]) -> set[Node]:
    """The ancestors of `vs`, including `vs` themselves."""
    out = set(vs)
    stack = list(out)
    while stack:
        for p in parents[stack.pop()]:
            if p not in out:
                out.add(p)
                stack.append(p)
    return out


# An incidence list: for each node v, tuples (w, arrowhead at v, arrowhead at w), one per edge.
Incidence: TypeAlias = Mapping[Node, Sequence[tuple[Node, bool, bool]]]


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
    an_z = _ancestors(zs, parents)
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


def _m_separated(
    incidence: Incidence,
    parents: Mapping[Node, Iterable[Node]],
    index: Mapping[Node, int],
    x: Node | Iterable[Node],
    y: Node | Iterable[Node],
    z: Iterable[Node],
    what: str,
) -> bool:
    xs, ys = _as_set(x, index, what), _as_set(y, index, what)
    zs = set(z)
    for v in zs:
        _check_known(v, index, what)
    overlap = (xs & ys) | (xs & zs) | (ys & zs)
    if overlap:
        raise ValueError(
            f"{what}: x, y and the conditioning set must be disjoint; {sorted(map(repr, overlap))}"
        )
    return not (m_connected_nodes(incidence, parents, xs, zs) & ys)


# ---------------------------------------------------------------------------------------------
# DAG
# ---------------------------------------------------------------------------------------------


class _DirectedPart:
    """Parents, children, ancestors, descendants and a topological order of a graph's directed
    edges (shared by `DAG` and `ADMG`, which fill `_index`, `_pa`, `_ch` and `_order`)."""

    _nodes: list[Node]
    _index: dict[Node, int]
    _pa: dict[Node, set[Node]]
    _ch: dict[Node, set[Node]]
    _order: list[Node]

    def _init_directed(
        self, nodes: Iterable[Node], edges: Iterable[tuple[Node, Node]], kind: str, cycle_what: str
    ) -> None:
        """Nodes, index, parents, children and a topological order; errors name `kind`."""
        self._nodes = _ordered_nodes(nodes, kind)
        self._index = {v: i for i, v in enumerate(self._nodes)}
        self._pa = {v: set() for v in self._nodes}
        self._ch = {v: set() for v in self._nodes}
        for a, b in edges:
            _check_known(a, self._index, f"{kind} edge {a!r} -> {b!r}")
            _check_known(b, self._index, f"{kind} edge {a!r} -> {b!r}")
            if a == b:
                raise CyclicGraphError(f"{kind} edge {a!r} -> {b!r} is a self-loop")
            self._pa[b].add(a)
            self._ch[a].add(b)
        self._order = _topological_order(self._nodes, self._pa, self._ch, cycle_what)
        self._incidence: dict[Node, list[tuple[Node, bool, bool]]] | None = None

    def _sorted(self, vs: Iterable[Node]) -> list[Node]:
        return sorted(vs, key=self._index.__getitem__)

    def __contains__(self, v: object) -> bool:
        return v in self._index

    def __len__(self) -> int:
        return len(self._nodes)

    def _where(self, method: str) -> str:
        return f"{type(self).__name__}.{method}"

    def parents(self, v: Node) -> set[Node]:
        """Pa(v)."""
        _check_known(v, self._index, self._where("parents"))
        return set(self._pa[v])

    def children(self, v: Node) -> set[Node]:
        """Ch(v)."""
        _check_known(v, self._index, self._where("children"))
        return set(self._ch[v])

    def ancestors(self, vs: Node | Iterable[Node]) -> set[Node]:
        """An(vs), including vs, along directed edges."""
        return _ancestors(_as_set(vs, self._index, self._where("ancestors")), self._pa)

    def descendants(self, vs: Node | Iterable[Node]) -> set[Node]:
        """De(vs), including vs."""
        return _ancestors(_as_set(vs, self._index, self._where("descendants")), self._ch)

    def topological_order(self) -> list[Node]:
        """A topological order of the directed edges (parents first; ties broken by node order)."""
        return list(self._order)


class DAG(_DirectedPart):
    """A directed acyclic graph; some of its nodes may be declared latent by the caller.

    Parameters
    ----------
    nodes : iterable of hashable
        The vertices, in the order used for iteration.
    edges : iterable of (a, b)
        Directed edges a -> b. A cycle raises `CyclicGraphError` naming it.
    """

    def __init__(self, nodes: Iterable[Node] = (), edges: Iterable[tuple[Node, Node]] = ()) -> None:
        self._init_directed(nodes, edges, "DAG", "DAG")

    # -- structure ---------------------------------------------------------------------------
    @property
    def nodes(self) -> tuple[Node, ...]:
        """The vertices in their given order."""
        return tuple(self._nodes)

    @property
    def edges(self) -> list[tuple[Node, Node]]:
        """Directed edges (a, b), ordered by (a, b) node positions."""
        return [(a, b) for a in self._nodes for b in self._sorted(self._ch[a])]

    def __repr__(self) -> str:
        return f"DAG({len(self._nodes)} nodes, {sum(map(len, self._ch.values()))} edges)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DAG) and set(self._nodes) == set(other._nodes) and self._pa == other._pa

    __hash__ = None  # type: ignore[assignment]

    def topological_generations(self) -> list[list[Node]]:
        """Generations: sources, then nodes whose parents are all in earlier generations, ..."""
        gen: dict[Node, int] = {}
        for v in self._order:
            gen[v] = 1 + max((gen[p] for p in self._pa[v]), default=-1)
        out: list[list[Node]] = [[] for _ in range(max(gen.values(), default=-1) + 1)]
        for v in self._nodes:
            out[gen[v]].append(v)
        return out

    def _get_incidence(self) -> dict[Node, list[tuple[Node, bool, bool]]]:
        if self._incidence is None:
            inc: dict[Node, list[tuple[Node, bool, bool]]] = {v: [] for v in self._nodes}
            for a in self._nodes:
                for b in self._ch[a]:
                    inc[a].append((b, False, True))
                    inc[b].append((a, True, False))
            self._incidence = inc
        return self._incidence

    def d_separated(self, x: Node | Iterable[Node], y: Node | Iterable[Node], z: Iterable[Node] = ()) -> bool:
        """Whether x and y are d-separated given z (Pearl 1988)."""
        return _m_separated(self._get_incidence(), self._pa, self._index, x, y, z, "DAG.d_separated")

    # -- projections ---------------------------------------------------------------------------
    def latent_projection(self, latents: Iterable[Node]) -> ADMG:
        """The ADMG over the observed nodes (Verma & Pearl 1990; Tian & Pearl 2002).

        a -> b iff there is a directed path a -> ... -> b whose interior is latent;
        a <-> b iff there is a path a <- ... <- l -> ... -> b with a latent fork l whose
        two directed branches have latent interiors.
        """
        lat = _as_set(list(latents), self._index, "DAG.latent_projection") if latents else set()
        obs = [v for v in self._nodes if v not in lat]

        def observed_reach(src: Node) -> set[Node]:
            """Observed nodes reachable from src by a directed path with a latent interior."""
            out: set[Node] = set()
            stack = list(self._ch[src])
            seen = set(stack)
            while stack:
                v = stack.pop()
                if v in lat:
                    for c in self._ch[v]:
                        if c not in seen:
                            seen.add(c)
                            stack.append(c)
                else:
                    out.add(v)
            return out

        directed = [(a, b) for a in obs for b in self._sorted(observed_reach(a))]
        bidirected: set[frozenset[Node]] = set()
        for lv in self._order:
            if lv in lat:
                reach = self._sorted(observed_reach(lv))
                for i, a in enumerate(reach):
                    for b in reach[i + 1 :]:
                        bidirected.add(frozenset((a, b)))
        bi = sorted(
            (tuple(self._sorted(e)) for e in bidirected), key=lambda e: (self._index[e[0]], self._index[e[1]])
        )
        return ADMG(obs, directed, bi)  # type: ignore[arg-type]

    def to_mag(self, latents: Iterable[Node] = ()) -> MAG:
        """The MAG over the observed nodes (Richardson & Spirtes 2002; no selection)."""
        return self.latent_projection(latents).to_mag()

    # -- conversions ---------------------------------------------------------------------------
    def to_networkx(self) -> nx.DiGraph:
        """A networkx DiGraph with the same nodes (in order) and edges."""
        g = nx.DiGraph()
        g.add_nodes_from(self._nodes)
        g.add_edges_from(self.edges)
        return g

    @classmethod
    def from_networkx(cls, g: nx.DiGraph) -> DAG:
        """A DAG from a networkx DiGraph (raises CyclicGraphError on a cycle)."""
        if not isinstance(g, nx.DiGraph) or g.is_multigraph():
            raise TypeError(f"DAG.from_networkx: expected a networkx DiGraph, got {type(g).__name__}")
        return cls(g.nodes, g.edges)

    def to_causallearn(self) -> Any:
        """A causal-learn `Dag` (node names are `str(node)`)."""
        from causallearn.graph.Dag import Dag
        from causallearn.graph.GraphNode import GraphNode

        names = _string_names(self._nodes)
        cl_nodes = {v: GraphNode(names[v]) for v in self._nodes}
        g = Dag([cl_nodes[v] for v in self._nodes])
        for a, b in self.edges:
            g.add_directed_edge(cl_nodes[a], cl_nodes[b])
        return g

    @classmethod
    def from_causallearn(cls, g: Any) -> DAG:
        """A DAG from a causal-learn graph whose edges are all directed (node names become nodes)."""
        from causallearn.graph.Endpoint import Endpoint

        nodes = [n.get_name() for n in g.get_nodes()]
        edges = []
        for e in g.get_graph_edges():
            a, b, ea, eb = (
                e.get_node1().get_name(),
                e.get_node2().get_name(),
                e.get_endpoint1(),
                e.get_endpoint2(),
            )
            if ea == Endpoint.TAIL and eb == Endpoint.ARROW:
                edges.append((a, b))
            elif ea == Endpoint.ARROW and eb == Endpoint.TAIL:
                edges.append((b, a))
            else:
                raise ValueError(f"DAG.from_causallearn: edge {e} is not directed")
        return cls(nodes, edges)


def _string_names(nodes: Sequence[Node]) -> dict[Node, str]:
    names = {v: str(v) for v in nodes}
    if len(set(names.values())) < len(names):
        raise ValueError("causal-learn needs distinct node names; str() of two nodes coincide")
    return names


# ---------------------------------------------------------------------------------------------
# ADMG
# ---------------------------------------------------------------------------------------------


class ADMG(_DirectedPart):
    """An acyclic directed mixed graph: directed edges plus bidirected edges (latent confounding).

    Parameters
    ----------
    nodes : iterable of hashable
    directed : iterable of (a, b)
        a -> b; the directed part must be acyclic.
    bidirected : iterable of (a, b)
        a <-> b (unordered). A pair may have both a directed and a bidirected edge (a "bow").
    """

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        directed: Iterable[tuple[Node, Node]] = (),
        bidirected: Iterable[tuple[Node, Node]] = (),
    ) -> None:
        self._init_directed(nodes, directed, "ADMG", "ADMG (directed part)")
        self._sib: dict[Node, set[Node]] = {v: set() for v in self._nodes}
        for a, b in bidirected:
            _check_known(a, self._index, f"ADMG edge {a!r} <-> {b!r}")
            _check_known(b, self._index, f"ADMG edge {a!r} <-> {b!r}")
            if a == b:
                raise ValueError(f"ADMG edge {a!r} <-> {b!r} is a self-loop")
            self._sib[a].add(b)
            self._sib[b].add(a)

    @property
    def nodes(self) -> tuple[Node, ...]:
        """The vertices in their given order."""
        return tuple(self._nodes)

    @property
    def directed_edges(self) -> list[tuple[Node, Node]]:
        """Edges a -> b, ordered by node positions."""
        return [(a, b) for a in self._nodes for b in self._sorted(self._ch[a])]

    @property
    def bidirected_edges(self) -> list[tuple[Node, Node]]:
        """Edges a <-> b listed once, with a before b in node order."""
        return [
            (a, b) for a in self._nodes for b in self._sorted(self._sib[a]) if self._index[a] < self._index[b]
        ]

    def __repr__(self) -> str:
        n_dir, n_bi = len(self.directed_edges), len(self.bidirected_edges)
        return f"ADMG({len(self._nodes)} nodes, {n_dir} directed, {n_bi} bidirected)"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ADMG)
            and set(self._nodes) == set(other._nodes)
            and self._pa == other._pa
            and self._sib == other._sib
        )

    __hash__ = None  # type: ignore[assignment]

    def siblings(self, v: Node) -> set[Node]:
        """Nodes joined to v by a bidirected edge."""
        _check_known(v, self._index, "ADMG.siblings")
        return set(self._sib[v])

    def districts(self) -> list[list[Node]]:
        """The c-components: connected components of the bidirected part (Tian & Pearl 2002)."""
        seen: set[Node] = set()
        out: list[list[Node]] = []
        for v in self._nodes:
            if v not in seen:
                comp = _ancestors([v], self._sib)
                seen |= comp
                out.append(self._sorted(comp))
        return out

    def district(self, v: Node) -> set[Node]:
        """The district (c-component) containing v."""
        _check_known(v, self._index, "ADMG.district")
        return _ancestors([v], self._sib)

    def subgraph(self, nodes: Iterable[Node]) -> ADMG:
        """The induced subgraph G[nodes] (keeps the original node order)."""
        keep = _as_set(list(nodes), self._index, "ADMG.subgraph")
        order = [v for v in self._nodes if v in keep]
        return ADMG(
            order,
            [(a, b) for a, b in self.directed_edges if a in keep and b in keep],
            [(a, b) for a, b in self.bidirected_edges if a in keep and b in keep],
        )

    def _get_incidence(self) -> dict[Node, list[tuple[Node, bool, bool]]]:
        if self._incidence is None:
            inc: dict[Node, list[tuple[Node, bool, bool]]] = {v: [] for v in self._nodes}
            for a in self._nodes:
                for b in self._ch[a]:
                    inc[a].append((b, False, True))
                    inc[b].append((a, True, False))
                for b in self._sib[a]:
                    inc[a].append((b, True, True))
            self._incidence = inc
        return self._incidence

    def m_separated(self, x: Node | Iterable[Node], y: Node | Iterable[Node], z: Iterable[Node] = ()) -> bool:
        """Whether x and y are m-separated given z (Richardson 2003)."""
        return _m_separated(self._get_incidence(), self._pa, self._index, x, y, z, "ADMG.m_separated")

    def has_inducing_path(self, a: Node, b: Node) -> bool:
        """Whether a and b are joined by an inducing path (no observed set m-separates them).

        Richardson & Spirtes (2002): in an ADMG with no latent nodes this holds iff a and
        b are m-connected given An({a, b}) minus {a, b}.
        """
        if b in self._pa[a] or a in self._pa[b] or b in self._sib[a]:
            return True
        cond = _ancestors([a, b], self._pa) - {a, b}
        return not self.m_separated(a, b, cond)

    def to_mag(self) -> MAG:
        """The MAG with the same m-separations and ancestral relations (Richardson & Spirtes 2002).

        a and b are adjacent iff an inducing path joins them; the edge is a -> b if a ∈ An(b),
        b -> a if b ∈ An(a), and a <-> b otherwise.
        """
        edges: list[tuple[Node, Node, Mark, Mark]] = []
        anc = {v: _ancestors([v], self._pa) for v in self._nodes}
        for a in self._nodes:
            for b in self._sorted(self._inducing_candidates(a)):
                if self._index[b] <= self._index[a] or not self.has_inducing_path(a, b):
                    continue
                if a in anc[b]:
                    edges.append((a, b, Mark.TAIL, Mark.ARROW))
                elif b in anc[a]:
                    edges.append((a, b, Mark.ARROW, Mark.TAIL))
                else:
                    edges.append((a, b, Mark.ARROW, Mark.ARROW))
        return MAG(self._nodes, edges)

    def _inducing_candidates(self, a: Node) -> set[Node]:
        """Nodes that may share an inducing path with a: an inducing path is a collider path, so
        its interior lies in one district entered through a child or sibling of a."""
        out = self._pa[a] | self._ch[a] | self._sib[a]
        for c in self._ch[a] | self._sib[a]:
            for d in _ancestors([c], self._sib):
                out |= self._pa[d] | self._sib[d] | {d}
        out.discard(a)
        return out

    def canonical_dag(self, prefix: str = "U") -> tuple[DAG, list[Node]]:
        """A DAG with one exogenous latent parent per bidirected edge, and its latents; its latent
        projection is this ADMG. Latents are named f"{prefix}[a,b]" (primes added on a clash)."""
        latents: list[Node] = []
        edges: list[tuple[Node, Node]] = list(self.directed_edges)
        taken = set(self._nodes)
        for a, b in self.bidirected_edges:
            name = f"{prefix}[{a},{b}]"
            while name in taken:
                name += "'"
            taken.add(name)
            latents.append(name)
            edges += [(name, a), (name, b)]
        return DAG([*self._nodes, *latents], edges), latents

    # -- conversions ---------------------------------------------------------------------------
    def to_networkx(self) -> tuple[nx.DiGraph, nx.Graph]:
        """(directed part as DiGraph, bidirected part as Graph), both over all nodes (as in y0)."""
        d, b = nx.DiGraph(), nx.Graph()
        d.add_nodes_from(self._nodes)
        b.add_nodes_from(self._nodes)
        d.add_edges_from(self.directed_edges)
        b.add_edges_from(self.bidirected_edges)
        return d, b

    @classmethod
    def from_networkx(cls, directed: nx.DiGraph, bidirected: nx.Graph | None = None) -> ADMG:
        """An ADMG from a DiGraph (directed part) and an optional undirected Graph (bidirected part)."""
        nodes = list(directed.nodes)
        if bidirected is not None:
            nodes += [v for v in bidirected.nodes if v not in directed]
        return cls(nodes, directed.edges, bidirected.edges if bidirected is not None else ())


# ---------------------------------------------------------------------------------------------
# graphs with edge marks: MAG and PAG
# ---------------------------------------------------------------------------------------------

EdgeSpec: TypeAlias = tuple[Node, Node, Mark, Mark] | str


class _MarkedGraph:
    """At most one edge per pair, each endpoint carrying a Mark; `mark(a, b)` is the mark at b."""

    _kind = "graph"

    def __init__(self, nodes: Iterable[Node] = (), edges: Iterable[EdgeSpec] = ()) -> None:
        self._nodes = _ordered_nodes(nodes, self._kind)
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
            _check_known(a, self._index, f"{self._kind}.mark")
            _check_known(b, self._index, f"{self._kind}.mark")
            raise ValueError(f"{self._kind}.mark: {a!r} and {b!r} are not adjacent") from None

    def endpoints(self, a: Node, b: Node) -> tuple[Mark, Mark]:
        """(mark at a, mark at b) on the edge a *-* b."""
        return self.mark(b, a), self.mark(a, b)

    def add_edge(self, a: Node, b: Node, mark_a: Mark, mark_b: Mark) -> None:
        """Add edge a *-* b with the given marks (replacing any edge between them)."""
        _check_known(a, self._index, f"{self._kind} edge {a!r}-{b!r}")
        _check_known(b, self._index, f"{self._kind} edge {a!r}-{b!r}")
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

        names = _string_names(self._nodes)
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
        _topological_order(self._nodes, self._pa, ch, "MAG (directed part)")
        for a, b, ma, mb in self.edges():
            if (
                ma is Mark.ARROW
                and mb is Mark.ARROW
                and (a in _ancestors([b], self._pa) or b in _ancestors([a], self._pa))
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
        _check_known(v, self._index, "MAG.parents")
        return set(self._pa[v])

    def spouses(self, v: Node) -> set[Node]:
        """Nodes w with w <-> v."""
        return {w for w, m in self._m[v].items() if m is Mark.ARROW and self._m[w][v] is Mark.ARROW}

    def ancestors(self, vs: Node | Iterable[Node]) -> set[Node]:
        """An(vs), including vs."""
        return _ancestors(_as_set(vs, self._index, "MAG.ancestors"), self._pa)

    def m_separated(self, x: Node | Iterable[Node], y: Node | Iterable[Node], z: Iterable[Node] = ()) -> bool:
        """Whether x and y are m-separated given z (Richardson & Spirtes 2002)."""
        return _m_separated(self._inc, self._pa, self._index, x, y, z, "MAG.m_separated")

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


# ---------------------------------------------------------------------------------------------
# tiered background knowledge
# ---------------------------------------------------------------------------------------------


class Tiers:
    """Tiered background knowledge (Andrews, Spirtes & Cooper 2020).

    An ordered partition of the observed variables into tiers T_0, ..., T_{k-1}: a variable in a
    later tier is never an ancestor of a variable in an earlier tier. With `forbid_within=True`,
    no variable is an ancestor of another in its own tier either (our reading of Tetrad's
    "forbid within tier"; see the README).

    Parameters
    ----------
    tiers : sequence of iterables of hashable
        The tiers, earliest first. A variable may appear in only one tier; tiers may not be empty.
    forbid_within : bool, default False
        Forbid ancestral relations (hence directed edges) within a tier.
    """

    def __init__(self, tiers: Sequence[Iterable[Node]], forbid_within: bool = False) -> None:
        if isinstance(tiers, (str, bytes)) or not isinstance(tiers, Sequence):
            raise TypeError(
                f"Tiers: tiers must be a sequence of iterables of variables, got {type(tiers).__name__}"
            )
        self._tiers: list[tuple[Node, ...]] = []
        self._tier_of: dict[Node, int] = {}
        for t, members in enumerate(tiers):
            if isinstance(members, (str, bytes)):
                raise TypeError(f"Tiers: tier {t} is the string {members!r}; give a list of variables")
            members = tuple(members)
            if not members:
                raise ValueError(f"Tiers: tier {t} is empty; drop it")
            for v in members:
                if v in self._tier_of:
                    raise ValueError(f"Tiers: variable {v!r} is in tier {self._tier_of[v]} and tier {t}")
                self._tier_of[v] = t
            self._tiers.append(members)
        self.forbid_within = bool(forbid_within)

    def __repr__(self) -> str:
        return f"Tiers({[list(t) for t in self._tiers]!r}, forbid_within={self.forbid_within})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Tiers)
            and [set(t) for t in self._tiers] == [set(t) for t in other._tiers]
            and self.forbid_within == other.forbid_within
        )

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self._tiers)

    def __iter__(self) -> Iterator[tuple[Node, ...]]:
        return iter(self._tiers)

    def __contains__(self, v: object) -> bool:
        return v in self._tier_of

    @property
    def variables(self) -> list[Node]:
        """All variables, tier by tier."""
        return [v for t in self._tiers for v in t]

    def tier(self, v: Node) -> int:
        """The index of v's tier (0 = earliest)."""
        try:
            return self._tier_of[v]
        except KeyError:
            raise ValueError(
                f"Tiers: variable {v!r} is in no tier; the tiers hold {_preview(self._tier_of)}"
            ) from None

    def check_covers(self, variables: Iterable[Node]) -> None:
        """Raise ValueError naming every variable that is in no tier."""
        missing = [v for v in variables if v not in self._tier_of]
        if missing:
            raise ValueError(
                f"Tiers: {len(missing)} variable(s) are in no tier: {missing[:10]!r}"
                f"{' ...' if len(missing) > 10 else ''}; add them to a tier "
                "(tiered_fci also takes tiers=None: no knowledge)"
            )

    def can_be_ancestor(self, a: Node, b: Node) -> bool:
        """Whether the knowledge allows a ∈ An(b) (a ≠ b)."""
        ta, tb = self.tier(a), self.tier(b)
        return ta < tb or (ta == tb and not self.forbid_within)

    def is_future(self, v: Node, x: Node, y: Node) -> bool:
        """Whether v lies in a tier later than both x's and y's."""
        return self.tier(v) > max(self.tier(x), self.tier(y))

    def restricted(self, variables: Iterable[Node]) -> Tiers:
        """The same knowledge over a subset of variables (empty tiers dropped)."""
        keep = set(variables)
        self.check_covers(keep)
        return Tiers(
            [[v for v in t if v in keep] for t in self._tiers if any(v in keep for v in t)],
            self.forbid_within,
        )

    def violations(self, graph: DAG | ADMG | MAG) -> list[tuple[Node, Node]]:
        """Pairs (a, b) of tiered variables with a ∈ An(b) that the knowledge forbids."""
        nodes = [v for v in graph.nodes if v in self._tier_of]
        out = []
        for b in nodes:
            for a in graph.ancestors(b):
                if a != b and a in self._tier_of and not self.can_be_ancestor(a, b):
                    out.append((a, b))
        return out

    def check_graph(self, graph: DAG | ADMG | MAG) -> None:
        """Raise ValueError if the graph contradicts the knowledge (names the first pairs)."""
        bad = self.violations(graph)
        if bad:
            shown = ", ".join(
                f"{a!r} (tier {self.tier(a)}) is an ancestor of {b!r} (tier {self.tier(b)})"
                for a, b in bad[:5]
            )
            raise ValueError(f"Tiers contradict the graph: {shown}{' ...' if len(bad) > 5 else ''}")

    @classmethod
    def from_topological_generations(
        cls,
        dag: DAG,
        observed: Iterable[Node] | None = None,
        n_tiers: int | None = None,
        forbid_within: bool = False,
    ) -> Tiers:
        """Tiers from a DAG's topological generations, restricted to `observed` and merged into at most
        `n_tiers` contiguous groups of generations. Always consistent with the DAG when
        forbid_within is False."""
        obs = set(dag.nodes if observed is None else observed)
        gens = [[v for v in g if v in obs] for g in dag.topological_generations()]
        gens = [g for g in gens if g]
        if n_tiers is not None:
            if n_tiers < 1:
                raise ValueError(f"Tiers.from_topological_generations: n_tiers must be >= 1, got {n_tiers}")
            k = min(n_tiers, len(gens))
            merged: list[list[Node]] = [[] for _ in range(k)]
            for i, g in enumerate(gens):
                merged[i * k // len(gens)].extend(g)
            gens = merged
        return cls(gens, forbid_within)
