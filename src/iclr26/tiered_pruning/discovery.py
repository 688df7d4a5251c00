"""Query-specific causal discovery (Chen & Barker, ICLR 2026, Algorithm 1): learn only the
T-components a query needs instead of the full PAG.

    lines 1–6: [lo, hi] from the query (`pruning.plan_pruning`: Props. 3.2 / 3.5 / 3.6)
    for i = lo..hi: learn T-component i (FCIExogenous: the pairs whose later variable lies in tier
    i, with every variable of tiers ≤ i available for conditioning sets)
    return the union, the "local PAG" (Prop. 4.1: equal to the full PAG restricted to [lo, hi])

We learn the T-components [lo, hi] in one tiered-FCI pass over the variables of tiers ≤ hi with the
pairs below lo left out (`fci.tiered_fci(min_tier=lo)`); tiers after hi are never touched. The lower
cut needs the paper's assumption (latent confounders within tiers), under which edges between tiers
are a -> b; `within_tier_confounding=False` drops the assumption and keeps only the upper cut.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from iclr26.tiered_pruning.citests import CITest, check_ci_test
from iclr26.tiered_pruning.fci import FCIConfig, FCIResult, tiered_fci
from iclr26.tiered_pruning.graphs import PAG, Node, Tiers, check_tiers
from iclr26.tiered_pruning.identification import Query, query_over
from iclr26.tiered_pruning.pruning import PruningPlan, in_t_components, plan_pruning


@dataclass
class QueryDiscovery:
    """The local PAG of a query, its plan and its cost."""

    plan: PruningPlan
    result: FCIResult

    @property
    def pag(self) -> PAG:
        return self.result.pag

    @property
    def n_tests(self) -> int:
        return self.result.n_tests


def make_data_query(
    variables: Iterable[Node],
    treatments: Node | Iterable[Node] | None,
    outcomes: Node | Iterable[Node],
    conditions: Node | Iterable[Node] | None = None,
) -> Query:
    """A Query over known data variables: non-empty outcomes, pairwise disjoint sets."""
    return query_over(
        dict.fromkeys(variables), treatments, outcomes, conditions, who="query", what="variables of the data"
    )


def query_specific_fci(
    test: CITest,
    tiers: Tiers,
    treatments: Node | Iterable[Node] | None,
    outcomes: Node | Iterable[Node],
    conditions: Node | Iterable[Node] | None = None,
    within_tier_confounding: bool = True,
    config: FCIConfig | None = None,
) -> QueryDiscovery:
    """Algorithm 1: the local PAG for P(outcomes | do(treatments), conditions) from a CI test + tiers."""
    check_ci_test("query_specific_fci", test)
    check_tiers("query_specific_fci", tiers)
    if not isinstance(within_tier_confounding, bool):
        raise TypeError(
            "query_specific_fci: within_tier_confounding must be True (the paper's assumption) or False "
            f"(only the upper cut), got {within_tier_confounding!r}"
        )
    tiers.check_covers(test.variables)
    q = make_data_query(test.variables, treatments, outcomes, conditions)
    plan = plan_pruning(tiers, q, None if within_tier_confounding else (lambda k: k == 0))
    cfg = replace(config or FCIConfig(), cross_tier_tails=within_tier_confounding)
    known = set(test.variables)
    variables = [v for v in plan.learned_variables(tiers) if v in known]
    result = tiered_fci(test, tiers, variables, cfg, min_tier=plan.min_tier)
    return QueryDiscovery(plan, result)


def restrict_pag(pag: PAG, tiers: Tiers, lo: int, hi: int) -> PAG:
    """The edges of T-components [lo, hi] of `pag` (their marks unchanged), over the nodes of tiers ≤ hi."""
    nodes = [v for v in pag.nodes if tiers.tier(v) <= hi]
    edges = [(a, b, ma, mb) for a, b, ma, mb in pag.edges() if in_t_components(tiers, a, b, lo, hi)]
    return PAG(nodes, edges)
