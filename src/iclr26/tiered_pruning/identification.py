"""Identification of (conditional) causal effects in ADMGs: the ID and IDC algorithms.

- ID (Shpitser & Pearl, "Identification of joint interventional distributions in recursive
  semi-Markovian causal models", AAAI 2006, Fig. 3; Tian & Pearl 2002 for the c-component
  factorisation): P(y | do(x)) as an estimand over P(v), or failure with a hedge, which proves the
  effect is not identifiable (the algorithm is complete).
- IDC (Shpitser & Pearl, "Identification of conditional interventional distributions", UAI 2006,
  Fig. 2): P(y | do(x), z) by moving every z that rule 2 of the do-calculus allows into the
  intervention set, then P(y, z | do(x)) / Σ_y P(y, z | do(x)). Also complete.

`identify(graph, treatments, outcomes, conditions)` runs the right one and returns `Identified`
(with the estimand, an `estimand.Expr`) or `NotIdentifiable` (with the `Hedge`: two C-forests).
The query is P(outcomes | do(treatments), conditions); the paper's pruning conditions (ICLR 2026,
bOfiLeoUJf) are stated for exactly these (conditional) effects.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import networkx as nx

from iclr26.core.config import ConfigError
from iclr26.core.validation import node_set
from iclr26.tiered_pruning.discrete import DiscreteDistribution, Factor
from iclr26.tiered_pruning.estimand import Expr, Prob, evaluate, fraction, product, summation
from iclr26.tiered_pruning.graphs import ADMG, DAG, Node, as_admg


@dataclass(frozen=True)
class Query:
    """P(outcomes | do(treatments), conditions)."""

    outcomes: frozenset[Node]
    treatments: frozenset[Node] = frozenset()
    conditions: frozenset[Node] = frozenset()

    def __str__(self) -> str:
        def names(vs: Iterable[Node]) -> str:
            return ", ".join(sorted(map(str, vs)))

        parts = []
        if self.treatments:
            parts.append(f"do({names(self.treatments)})")
        if self.conditions:
            parts.append(names(self.conditions))
        return f"P({names(self.outcomes)}{' | ' + ', '.join(parts) if parts else ''})"


@dataclass(frozen=True)
class Hedge:
    """A hedge for P(y | do(x)) (Shpitser & Pearl 2006, Def. 5): C-forests F' ⊂ F with the same root
    set R ⊆ An(Y) in G with arrows into X removed, F ∩ X ≠ ∅ and F' ∩ X = ∅. Its existence proves that
    the effect is not identifiable (Theorem 4). ID finds it at line 5 as F = the current graph and
    F' = its single district after removing X."""

    forest: frozenset[Node]  # F
    subforest: frozenset[Node]  # F'
    roots: frozenset[Node]  # R
    # the unconditional effect P(y' | do(x')) it is a hedge for: the query itself for ID; for IDC,
    # P(y ∪ z | do(x ∪ z_moved)) after rule 2 moved z_moved into the intervention set
    effect: Query | None = None

    def __str__(self) -> str:
        def names(vs: Iterable[Node]) -> str:
            return "{" + ", ".join(sorted(map(str, vs))) + "}"

        f, fp, r = names(self.forest), names(self.subforest), names(self.roots)
        return f"hedge F = {f} ⊃ F' = {fp} with roots R = {r}" + (
            f" for {self.effect}" if self.effect else ""
        )


class NotIdentifiableError(ValueError):
    """ID/IDC failed: the query is not identifiable; `hedge` is the witness found at ID's line 5."""

    def __init__(self, query: Query, hedge: Hedge) -> None:
        self.query, self.hedge = query, hedge
        super().__init__(f"{query} is not identifiable: {hedge}")


@dataclass(frozen=True)
class Identified:
    """An identifiable query and its estimand (an expression over the observational distribution)."""

    query: Query
    estimand: Expr
    identifiable = True

    def __str__(self) -> str:
        q = self.query
        return f"{q} = {self.estimand.to_string(q.outcomes | q.treatments | q.conditions)}"

    def evaluate(
        self, distribution: DiscreteDistribution, values: Mapping[Node, Hashable] | None = None
    ) -> Factor:
        """The estimand on a discrete distribution: P(y | do(x), z) as a Factor over the estimand's free
        variables not fixed in `values`. Query variables the effect does not depend on may be absent;
        ID may leave free variables outside the query (r in the napkin): the value is the same for
        each of their values (see `estimation.marginalized_estimand`)."""
        return evaluate(self.estimand, distribution, values)


@dataclass(frozen=True)
class NotIdentifiable:
    """A query that is not identifiable, with the hedge that proves it."""

    query: Query
    hedge: Hedge
    identifiable = False

    def __str__(self) -> str:
        return f"{self.query} is not identifiable: {self.hedge}"


# ---------------------------------------------------------------------------------------------
# graph helpers
# ---------------------------------------------------------------------------------------------


def _ancestors_without_incoming(g: ADMG, ys: Iterable[Node], xs: frozenset[Node]) -> set[Node]:
    """An(ys) in G_{\\bar X} (the graph with every edge into X removed)."""
    out = set(ys)
    stack = [v for v in out if v not in xs]
    while stack:
        for p in g.parents(stack.pop()):
            if p not in out:
                out.add(p)
                if p not in xs:
                    stack.append(p)
    return out


def _rule2_graph(g: ADMG, xs: frozenset[Node], z: Node) -> ADMG:
    """G_{\\bar X, \\underline z}: edges into X (directed and bidirected) and edges out of z removed."""
    return ADMG(
        g.nodes,
        [(a, b) for a, b in g.directed_edges if b not in xs and a != z],
        [(a, b) for a, b in g.bidirected_edges if a not in xs and b not in xs],
    )


# ---------------------------------------------------------------------------------------------
# ID and IDC
# ---------------------------------------------------------------------------------------------


class _Fail(Exception):
    def __init__(self, hedge: Hedge) -> None:
        self.hedge = hedge


def _conditional(p: Expr, vertices: frozenset[Node], v: Node, before: frozenset[Node]) -> Expr:
    """P(v | before) computed from the current distribution P over `vertices` (exact identities only)."""
    return fraction(summation(vertices - before - {v}, p), summation(vertices - before, p))


def _id(y: frozenset[Node], x: frozenset[Node], p: Expr, g: ADMG, order: Sequence[Node]) -> Expr:
    """ID(y, x, P, G) of Shpitser & Pearl (2006, Fig. 3); `order` is a topological order of G (π)."""
    v_all = frozenset(g.nodes)
    # line 1: no intervention left: marginalize P
    if not x:
        return summation(v_all - y, p)
    # line 2: restrict to the ancestors of Y
    an_y = frozenset(g.ancestors(y))
    if v_all - an_y:
        return _id(y, x & an_y, summation(v_all - an_y, p), g.subgraph(an_y), order)
    # line 3: intervene also on W = (V \ X) \ An(Y)_{G_{\bar X}}, which has no effect on Y given do(x)
    w = (v_all - x) - _ancestors_without_incoming(g, y, x)
    if w:
        return _id(y, x | w, p, g, order)
    # line 4: c-component factorisation over the districts of G \ X
    districts = [frozenset(d) for d in g.subgraph(v_all - x).districts()]
    if len(districts) > 1:
        return summation(v_all - (y | x), product(*(_id(s, v_all - s, p, g, order) for s in districts)))
    (s,) = districts
    g_districts = [frozenset(d) for d in g.districts()]
    # line 5: G is a single c-component: fail with the hedge (G, S)
    if len(g_districts) == 1:
        roots = frozenset(v for v in s if not (g.children(v) & s))
        raise _Fail(Hedge(v_all, s, roots))
    pi = [v for v in order if v in v_all]
    before = {v: frozenset(pi[:i]) for i, v in enumerate(pi)}
    # line 6: S is a district of G: Σ_{s \ y} Π_{V_i ∈ S} P(v_i | v_π^{(i-1)})
    if s in g_districts:
        return summation(s - y, product(*(_conditional(p, v_all, vi, before[vi]) for vi in pi if vi in s)))
    # line 7: S ⊂ S' ∈ C(G): recurse on G_{S'} with
    # P' = Π_{V_i ∈ S'} P(V_i | V_π^{(i-1)} ∩ S', v_π^{(i-1)} \ S') (the v outside S' are fixed values of X)
    (s_prime,) = [d for d in g_districts if s < d]
    p_prime = product(*(_conditional(p, v_all, vi, before[vi]) for vi in pi if vi in s_prime))
    return _id(y, x & s_prime, p_prime, g.subgraph(s_prime), order)


def _idc(y: frozenset[Node], x: frozenset[Node], z: frozenset[Node], g: ADMG, order: Sequence[Node]) -> Expr:
    """IDC(y, x, z, P, G) of Shpitser & Pearl (UAI 2006, Fig. 2)."""
    # line 1: if (Y ⊥ Z_i | X, Z \ {Z_i}) in G_{\bar X, \underline{Z_i}}, rule 2 turns z_i into do(z_i)
    for zi in sorted(z, key=lambda v: order.index(v)):
        if _rule2_graph(g, x, zi).m_separated(y, {zi}, x | (z - {zi})):
            return _idc(y, x | {zi}, z - {zi}, g, order)
    # line 2: P' = ID(y ∪ z, x, P, G); return P' / Σ_y P'
    p_prime = _run_id(y | z, x, g, order)
    return fraction(p_prime, summation(y, p_prime))


def _run_id(y: frozenset[Node], x: frozenset[Node], g: ADMG, order: Sequence[Node]) -> Expr:
    """ID(y, x, P(v), G) from the top; a failure's hedge records the effect it is a hedge for."""
    try:
        return _id(y, x, Prob(frozenset(g.nodes)), g, order)
    except _Fail as fail:
        raise _Fail(replace(fail.hedge, effect=Query(y, x))) from None


# ---------------------------------------------------------------------------------------------
# public entry points
# ---------------------------------------------------------------------------------------------


def _show(vs: Iterable[Node]) -> str:
    return "[" + ", ".join(sorted(map(repr, vs))) + "]"


def query_node_set(
    name: str,
    value: Node | Iterable[Node] | None,
    nodes: Collection[Node],
    who: str,
    what: str = "nodes of the graph",
    latents: Iterable[Node] = (),
) -> frozenset[Node]:
    """One of a query's node sets, by `core.validation.node_set`'s rule (a value that is one of
    `nodes` is that node); an error names `who`, the set, every unknown member, and which of them
    are `latents` (a query names observed nodes)."""
    try:
        return node_set(name, value, nodes)
    except ConfigError:
        out = node_set(name, value)  # `value` is none of `nodes`: the same members, unchecked
    unknown = [v for v in out if v not in nodes]
    lat = set(latents)
    hidden = [v for v in unknown if v in lat]
    if hidden:
        raise ConfigError(f"{who}: {name} {_show(hidden)} are latent; a query names observed nodes")
    known = list(nodes)
    shown = ", ".join(map(repr, known[:12])) + (", ..." if len(known) > 12 else "")
    raise ConfigError(f"{who}: {name} {_show(unknown)} are not {what} (it has {shown})")


def query_over(
    nodes: Collection[Node],
    treatments: Node | Iterable[Node] | None,
    outcomes: Node | Iterable[Node],
    conditions: Node | Iterable[Node] | None = None,
    latents: Iterable[Node] = (),
    who: str = "identify",
    what: str = "nodes of the graph",
) -> Query:
    """A validated Query over `nodes`: known (observed) nodes, non-empty outcomes, pairwise disjoint
    sets; errors name `who` and say what the nodes are (`what`)."""
    y, x, z = (
        query_node_set(name, value, nodes, who, what, latents)
        for name, value in (("outcomes", outcomes), ("treatments", treatments), ("conditions", conditions))
    )
    q = Query(y, x, z)
    check_query_sets(q, who)
    return q


def make_query(
    graph: ADMG,
    treatments: Node | Iterable[Node] | None,
    outcomes: Node | Iterable[Node],
    conditions: Node | Iterable[Node] | None = None,
    latents: Iterable[Node] = (),
    who: str = "identify",
) -> Query:
    """A validated Query on `graph`: known observed nodes, non-empty outcomes, pairwise disjoint sets."""
    return query_over(dict.fromkeys(graph.nodes), treatments, outcomes, conditions, latents, who)


def check_query_sets(q: Query, who: str) -> None:
    """Raise (prefixed with `who`) unless the outcomes are non-empty and X, Y, Z pairwise disjoint."""
    if not q.outcomes:
        raise ConfigError(f"{who}: outcomes is empty; name at least one outcome variable")
    for na, nb in (("treatments", "outcomes"), ("treatments", "conditions"), ("outcomes", "conditions")):
        both = getattr(q, na) & getattr(q, nb)
        if both:
            raise ConfigError(f"{who}: {na} and {nb} overlap in {_show(both)}; they must be disjoint")


def id_algorithm(graph: ADMG, outcomes: Iterable[Node], treatments: Iterable[Node]) -> Expr:
    """The estimand of P(outcomes | do(treatments)) by ID; raises NotIdentifiableError with the hedge."""
    q = make_query(graph, treatments, outcomes)
    try:
        return _run_id(q.outcomes, q.treatments, graph, graph.topological_order())
    except _Fail as fail:
        raise NotIdentifiableError(q, fail.hedge) from None


def idc_algorithm(
    graph: ADMG, outcomes: Iterable[Node], treatments: Iterable[Node], conditions: Iterable[Node]
) -> Expr:
    """The estimand of P(outcomes | do(treatments), conditions) by IDC; raises NotIdentifiableError."""
    q = make_query(graph, treatments, outcomes, conditions)
    try:
        return _idc(q.outcomes, q.treatments, q.conditions, graph, graph.topological_order())
    except _Fail as fail:
        raise NotIdentifiableError(q, fail.hedge) from None


def identify(
    graph: ADMG | DAG | nx.DiGraph,
    treatments: Node | Iterable[Node] | None,
    outcomes: Node | Iterable[Node],
    conditions: Node | Iterable[Node] | None = None,
    latents: Iterable[Node] = (),
) -> Identified | NotIdentifiable:
    """Identify P(outcomes | do(treatments), conditions) in `graph` (ID without conditions, IDC with).

    Parameters
    ----------
    graph : ADMG, or DAG / networkx DiGraph whose `latents` are projected out first
    treatments, outcomes, conditions : a node or an iterable of nodes (observed, pairwise disjoint)

    Returns
    -------
    Identified (`.estimand`, `.evaluate(distribution)`) or NotIdentifiable (`.hedge`).
    """
    g = as_admg(graph, latents)
    q = make_query(g, treatments, outcomes, conditions, latents)
    order = g.topological_order()
    try:
        if q.conditions:
            expr = _idc(q.outcomes, q.treatments, q.conditions, g, order)
        else:
            expr = _run_id(q.outcomes, q.treatments, g, order)
    except _Fail as fail:
        return NotIdentifiable(q, fail.hedge)
    return Identified(q, expr)
