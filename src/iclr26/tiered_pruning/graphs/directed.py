"""Graphs with directed edges: `DAG`, the data-generating graph (possibly with latent vertices), and
`ADMG`, the acyclic directed mixed graph (directed + bidirected edges) that is a DAG's latent
projection (Verma & Pearl 1990; Tian & Pearl 2002) and on which ID/IDC operate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

from iclr26.core.validation import node_set
from iclr26.tiered_pruning.graphs.marked import MAG, Mark
from iclr26.tiered_pruning.graphs.nodes import CyclicGraphError, Node, check_node, ordered_nodes, string_names
from iclr26.tiered_pruning.graphs.paths import closure, m_separated, topological_sort


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
        self._nodes = ordered_nodes(nodes, kind)
        self._index = {v: i for i, v in enumerate(self._nodes)}
        self._pa = {v: set() for v in self._nodes}
        self._ch = {v: set() for v in self._nodes}
        for a, b in edges:
            check_node(a, self._index, f"{kind} edge {a!r} -> {b!r}")
            check_node(b, self._index, f"{kind} edge {a!r} -> {b!r}")
            if a == b:
                raise CyclicGraphError(f"{kind} edge {a!r} -> {b!r} is a self-loop")
            self._pa[b].add(a)
            self._ch[a].add(b)
        self._order = topological_sort(self._nodes, self._pa, self._ch, cycle_what)
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
        check_node(v, self._index, self._where("parents"))
        return set(self._pa[v])

    def children(self, v: Node) -> set[Node]:
        """Ch(v)."""
        check_node(v, self._index, self._where("children"))
        return set(self._ch[v])

    def ancestors(self, vs: Node | Iterable[Node]) -> set[Node]:
        """An(vs), including vs, along directed edges."""
        return closure(node_set(self._where("ancestors"), vs, self._index), self._pa)

    def descendants(self, vs: Node | Iterable[Node]) -> set[Node]:
        """De(vs), including vs."""
        return closure(node_set(self._where("descendants"), vs, self._index), self._ch)

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

    def d_separated(
        self, x: Node | Iterable[Node], y: Node | Iterable[Node], z: Node | Iterable[Node] = ()
    ) -> bool:
        """Whether x and y are d-separated given z (Pearl 1988)."""
        return m_separated(self._get_incidence(), self._pa, self._index, x, y, z, "DAG.d_separated")

    # -- projections ---------------------------------------------------------------------------
    def latent_projection(self, latents: Iterable[Node]) -> ADMG:
        """The ADMG over the observed nodes (Verma & Pearl 1990; Tian & Pearl 2002).

        a -> b iff there is a directed path a -> ... -> b whose interior is latent;
        a <-> b iff there is a path a <- ... <- l -> ... -> b with a latent fork l whose
        two directed branches have latent interiors.
        """
        lat = node_set("DAG.latent_projection", list(latents), self._index)
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

        names = string_names(self._nodes)
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
            check_node(a, self._index, f"ADMG edge {a!r} <-> {b!r}")
            check_node(b, self._index, f"ADMG edge {a!r} <-> {b!r}")
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
        check_node(v, self._index, "ADMG.siblings")
        return set(self._sib[v])

    def districts(self) -> list[list[Node]]:
        """The c-components: connected components of the bidirected part (Tian & Pearl 2002)."""
        seen: set[Node] = set()
        out: list[list[Node]] = []
        for v in self._nodes:
            if v not in seen:
                comp = closure([v], self._sib)
                seen |= comp
                out.append(self._sorted(comp))
        return out

    def district(self, v: Node) -> set[Node]:
        """The district (c-component) containing v."""
        check_node(v, self._index, "ADMG.district")
        return closure([v], self._sib)

    def subgraph(self, nodes: Iterable[Node]) -> ADMG:
        """The induced subgraph G[nodes] (keeps the original node order)."""
        keep = node_set("ADMG.subgraph", list(nodes), self._index)
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

    def m_separated(
        self, x: Node | Iterable[Node], y: Node | Iterable[Node], z: Node | Iterable[Node] = ()
    ) -> bool:
        """Whether x and y are m-separated given z (Richardson 2003)."""
        return m_separated(self._get_incidence(), self._pa, self._index, x, y, z, "ADMG.m_separated")

    def has_inducing_path(self, a: Node, b: Node) -> bool:
        """Whether a and b are joined by an inducing path (no observed set m-separates them).

        Richardson & Spirtes (2002): in an ADMG with no latent nodes this holds iff a and
        b are m-connected given An({a, b}) minus {a, b}.
        """
        if b in self._pa[a] or a in self._pa[b] or b in self._sib[a]:
            return True
        cond = closure([a, b], self._pa) - {a, b}
        return not self.m_separated(a, b, cond)

    def to_mag(self) -> MAG:
        """The MAG with the same m-separations and ancestral relations (Richardson & Spirtes 2002).

        a and b are adjacent iff an inducing path joins them; the edge is a -> b if a ∈ An(b),
        b -> a if b ∈ An(a), and a <-> b otherwise.
        """
        edges: list[tuple[Node, Node, Mark, Mark]] = []
        anc = {v: closure([v], self._pa) for v in self._nodes}
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
            for d in closure([c], self._sib):
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


def as_admg(graph: ADMG | DAG | nx.DiGraph, latents: Iterable[Node] = (), who: str = "identify") -> ADMG:
    """`graph` as an ADMG: a DAG or networkx DiGraph with its `latents` projected out, an ADMG as it
    is (it already encodes latents as <-> edges). Errors name `who`."""
    latents = list(latents)
    if isinstance(graph, nx.DiGraph):
        graph = DAG.from_networkx(graph)  # raises CyclicGraphError naming a cycle
    if isinstance(graph, DAG):
        return graph.latent_projection(latents)
    if isinstance(graph, ADMG):
        if latents:
            raise ValueError(
                f"{who}: latents= applies to a DAG; an ADMG already encodes latents as <-> edges"
            )
        return graph
    raise TypeError(
        f"{who}: graph must be an ADMG, a DAG (with latents=...) or a networkx DiGraph, "
        f"got {type(graph).__name__}"
    )
