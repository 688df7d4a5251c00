"""Query-specific pruning of a causal graph under tiered knowledge (Chen & Barker, ICLR 2026,
"Query-Specific Causal Graph Pruning under Tiered Knowledge", OpenReview bOfiLeoUJf).

Notation (0-based tiers here; the paper counts from 1). Γ(v) is v's tier, Γ⁻(X) = min_{x∈X} Γ(x),
Γ⁺(Y) = max_{y∈Y} Γ(y). The i-th **T-component** G_i holds every node and the edges whose later
endpoint lies in tier i (Andrews et al. 2020); G is the union of its T-components, and pruning
drops whole T-components, keeping those in a tier interval [lo, hi].

- Prop. 3.2 (P(y | do(x))): H = ∪_{Γ⁻(X) ≤ i ≤ Γ⁺(Y)} G_i is ID-equivalent to G, with
      P_x(y) = Σ_{w∖y} P(w) · ID_H(x ∪ w → y ∖ w),   W = the variables in tiers < Γ⁻(X).
- Prop. 3.5 (P(y | do(x), z) with Γ⁺(Z) < Γ⁻(X)): the same H, and P_x(y | z) = P_x(y, z) / P(z),
  the numerator by Prop. 3.2 with outcomes y ∪ z.
- Prop. 3.6 (any conditional query): H = ∪_{i ≤ Γ⁺(Y ∪ Z)} G_i (only the upper cut).

The lower cut (dropping the T-components below Γ⁻(X)) rests on the paper's assumption that latent
confounders only join variables of the same tier: then W is unconfounded with the rest, so
P(v) = P(w)·P_w(v∖w) and G_{W̄} = H_{W̄}. Without it the cut is unsound (the tests hold a
counterexample). For a known graph we therefore cut at the largest k ≤ Γ⁻(X) that no bidirected
edge crosses (k = 0: no lower cut) — our generalisation, equal to the paper's rule when its
assumption holds. The upper cut is always sound: tiers after Γ⁺(Y ∪ Z) hold no ancestor of Y ∪ Z.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import networkx as nx

from iclr26.core.validation import check_in
from iclr26.tiered_pruning.estimand import ONE, Prob, fraction, product, summation
from iclr26.tiered_pruning.graphs import ADMG, DAG, Node, Tiers, as_admg, check_tiers
from iclr26.tiered_pruning.identification import Identified, NotIdentifiable, Query, identify, make_query


@dataclass(frozen=True)
class PruningPlan:
    """Which T-components a query needs: tiers [min_tier, max_tier] (0-based), and the variables W
    in tiers < min_tier that the estimand adjusts for by Σ_w P(w) (Prop. 3.2)."""

    query: Query
    min_tier: int
    max_tier: int
    rule: str  # "Prop. 3.2", "Prop. 3.5" or "Prop. 3.6"
    adjusted: frozenset[Node]  # W

    @property
    def trivial(self) -> bool:
        """No T-component to learn (every outcome precedes every treatment): P_x(y | z) = P(y | z)."""
        return self.min_tier > self.max_tier

    def learned_variables(self, tiers: Tiers) -> list[Node]:
        """The variables discovery needs data on: tiers ≤ max_tier (earlier ones as conditioning sets)."""
        return [v for t, members in enumerate(tiers) if t <= self.max_tier for v in members]


def _check_query_in_tiers(tiers: Tiers, q: Query) -> None:
    tiers.check_covers(sorted(q.outcomes | q.treatments | q.conditions, key=str))


def plan_pruning(tiers: Tiers, query: Query, cut_allowed: Callable[[int], bool] | None = None) -> PruningPlan:
    """Algorithm 1, lines 1–6: the tier interval for `query`. The lower cut sits at the largest
    k ≤ Γ⁻(X) with `cut_allowed(k)` (default: any k, the paper's assumption; k = 0 is no cut)."""
    check_tiers("plan_pruning", tiers)
    _check_query_in_tiers(tiers, query)
    x, y, z = query.treatments, query.outcomes, query.conditions
    first_x = min((tiers.tier(v) for v in x), default=0)  # Γ⁻(X); no treatments: no lower cut
    k = first_x
    while k > 0 and cut_allowed is not None and not cut_allowed(k):
        k -= 1
    last_z = max((tiers.tier(v) for v in z), default=-1)
    if not z or last_z < first_x:
        # Prop. 3.2 / 3.5: P_x(y, z) by Prop. 3.2 with outcomes y ∪ z, over P(z) (Z precedes X, so
        # P_x(z) = P(z)); Γ⁺(Y ∪ Z) = Γ⁺(Y) whenever some outcome follows Z
        lo, hi = k, max(tiers.tier(v) for v in y | z)
        rule = "Prop. 3.5" if z else "Prop. 3.2"
    else:
        lo, hi = 0, max(tiers.tier(v) for v in y | z)  # Prop. 3.6
        rule = "Prop. 3.6"
    adjusted = frozenset(v for t, members in enumerate(tiers) if t < lo for v in members)
    return PruningPlan(query, lo, hi, rule, adjusted)


def unconfounded_boundary(graph: ADMG, tiers: Tiers, k: int) -> bool:
    """Whether no bidirected edge joins a variable in tiers < k to one in tiers ≥ k."""
    return all(
        not (min(tiers.tier(a), tiers.tier(b)) < k <= max(tiers.tier(a), tiers.tier(b)))
        for a, b in graph.bidirected_edges
    )


def in_t_components(tiers: Tiers, a: Node, b: Node, lo: int, hi: int) -> bool:
    """Whether the edge a–b belongs to ∪_{lo ≤ i ≤ hi} G_i (its later endpoint's tier is in [lo, hi])."""
    return lo <= max(tiers.tier(a), tiers.tier(b)) <= hi


def t_components(graph: ADMG, tiers: Tiers, lo: int, hi: int) -> ADMG:
    """∪_{lo ≤ i ≤ hi} G_i: every node; the edges whose later endpoint lies in a tier in [lo, hi]."""
    return ADMG(
        graph.nodes,
        [(a, b) for a, b in graph.directed_edges if in_t_components(tiers, a, b, lo, hi)],
        [(a, b) for a, b in graph.bidirected_edges if in_t_components(tiers, a, b, lo, hi)],
    )


@dataclass(frozen=True)
class PrunedGraph:
    """A query's pruned graph H and the plan that made it."""

    graph: ADMG
    plan: PruningPlan
    n_edges_full: int
    n_edges_pruned: int


def prune(
    graph: ADMG | DAG | nx.DiGraph,
    tiers: Tiers,
    treatments: Node | Iterable[Node] | None,
    outcomes: Node | Iterable[Node],
    conditions: Node | Iterable[Node] | None = None,
    latents: Iterable[Node] = (),
    within_tier_confounding: bool | None = None,
) -> PrunedGraph:
    """Prune `graph` for P(outcomes | do(treatments), conditions).

    within_tier_confounding: None reads it off the graph (the lower cut stops at the first tier
    boundary a bidirected edge crosses); True applies the paper's rule as stated (unsound if a
    confounder crosses tiers); False keeps only the upper cut (Prop. 3.6-style, always sound).
    """
    check_tiers("prune", tiers)
    check_in("prune: within_tier_confounding", within_tier_confounding, (None, True, False))
    g = as_admg(graph, latents, who="prune")
    q = make_query(g, treatments, outcomes, conditions, latents, who="prune")
    tiers.check_covers(g.nodes)
    tiers.check_graph(g)
    if within_tier_confounding is None:
        plan = plan_pruning(tiers, q, lambda k: unconfounded_boundary(g, tiers, k))
    else:
        plan = plan_pruning(tiers, q, None if within_tier_confounding else (lambda k: k == 0))
    h = t_components(g, tiers, plan.min_tier, plan.max_tier)
    size = len(g.directed_edges) + len(g.bidirected_edges)
    return PrunedGraph(h, plan, size, len(h.directed_edges) + len(h.bidirected_edges))


def identify_pruned(
    graph: ADMG | DAG | nx.DiGraph,
    tiers: Tiers,
    treatments: Node | Iterable[Node] | None,
    outcomes: Node | Iterable[Node],
    conditions: Node | Iterable[Node] | None = None,
    latents: Iterable[Node] = (),
    within_tier_confounding: bool | None = None,
) -> tuple[Identified | NotIdentifiable, PrunedGraph]:
    """Identify the query on its pruned graph H, with the adjustment of Prop. 3.2 / 3.5:
    P_x(y | z) = [Σ_{w∖(y∪z)} P(w) · ID_H(x ∪ w → (y ∪ z) ∖ w)] / P(z). A failure returns the hedge
    found in H (for the effect ID ran on there)."""
    pruned = prune(graph, tiers, treatments, outcomes, conditions, latents, within_tier_confounding)
    plan, h, q = pruned.plan, pruned.graph, pruned.plan.query
    w = plan.adjusted
    if not w:  # no lower cut: identify on H directly (Prop. 3.6, or 3.2/3.5 starting at tier 0)
        r = identify(h, q.treatments, q.outcomes, q.conditions)
        out = Identified(q, r.estimand) if r.identifiable else NotIdentifiable(q, r.hedge)
        return out, pruned
    targets = (q.outcomes | q.conditions) - w
    inner = ONE
    if targets:
        r = identify(h, q.treatments | w, targets)
        if not r.identifiable:
            return NotIdentifiable(q, r.hedge), pruned
        inner = r.estimand
    joint = summation(w - q.outcomes - q.conditions, product(Prob(w), inner))  # P_x(y ∪ z), Prop. 3.2
    estimand = fraction(joint, Prob(q.conditions)) if q.conditions else joint  # Prop. 3.5
    return Identified(q, estimand), pruned
