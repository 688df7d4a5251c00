"""Query-specific pruning (Props. 3.2, 3.5, 3.6): T-components, the plan of Algorithm 1, the
paper's counterexamples, and a property test that identification answers and estimand values are
unchanged by pruning on random tiered ADMGs."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr26.tiered_pruning import ADMG, DAG, OracleCITest, Tiers, query_specific_fci
from iclr26.tiered_pruning.identification import Query, identify
from iclr26.tiered_pruning.pruning import plan_pruning, prune, t_components, unconfounded_boundary

from .id_cases import admg, error_vs_truth


def test_t_components_keep_edges_by_their_later_endpoint():
    g = admg("a->b b->c a->c c<->d b<->a", nodes="a b c d")
    tiers = Tiers([["a"], ["b"], ["c", "d"]])
    h = t_components(g, tiers, 1, 1)
    assert set(h.nodes) == set(g.nodes)
    assert set(h.directed_edges) == {("a", "b")} and {frozenset(e) for e in h.bidirected_edges} == {
        frozenset("ab")
    }
    h2 = t_components(g, tiers, 2, 2)
    assert set(h2.directed_edges) == {("b", "c"), ("a", "c")} and len(h2.bidirected_edges) == 1


def test_plan_follows_algorithm_1():
    tiers = Tiers([["a0", "a1"], ["b0", "b1"], ["c0", "c1"], ["d0"]])
    plan = plan_pruning(tiers, Query(frozenset({"c0"}), frozenset({"b0"})))
    assert (plan.min_tier, plan.max_tier, plan.rule) == (1, 2, "Prop. 3.2")
    assert plan.adjusted == {"a0", "a1"}
    plan = plan_pruning(tiers, Query(frozenset({"c0"}), frozenset({"b0"}), frozenset({"a1"})))
    assert (plan.min_tier, plan.max_tier, plan.rule) == (1, 2, "Prop. 3.5")
    # the paper's example Pr_{B1}(C1 | B2, B3): Z in X's tier -> only the upper cut (Prop. 3.6)
    plan = plan_pruning(tiers, Query(frozenset({"c0"}), frozenset({"b0"}), frozenset({"b1"})))
    assert (plan.min_tier, plan.max_tier, plan.rule) == (0, 2, "Prop. 3.6")
    assert plan.learned_variables(tiers) == ["a0", "a1", "b0", "b1", "c0", "c1"]


def test_lower_cut_is_unsound_when_a_confounder_crosses_tiers():
    """The lower cut needs the paper's assumption (confounders within tiers). Two failures without it:"""
    # (1) identifying on H alone: tier 0 = {A1, A2}, tier 1 = {X, Y}; X<->A1<->A2<->Y and A1, A2, X -> Y.
    # The effect is not identifiable (hedge), but on H (A1<->A2 dropped) it would be.
    g = admg("A1->Y A2->Y X->Y X<->A1 A1<->A2 A2<->Y", nodes="A1 A2 X Y")
    tiers = Tiers([["A1", "A2"], ["X", "Y"]])
    naive = prune(g, tiers, "X", "Y", within_tier_confounding=True)
    assert not identify(g, "X", "Y").identifiable and identify(naive.graph, "X", "Y").identifiable
    # (2) Prop. 3.2's adjustment Σ_w P(w) P_{x,w}(y): w -> y, w <-> y, x -> y. P_x(y) = P(y | x), but
    # P_{x,w}(y) is a bow arc, so the paper's formula wrongly reports "not identifiable".
    g = admg("w->y w<->y x->y", nodes="w x y")
    tiers = Tiers([["w"], ["x", "y"]])
    assert identify(g, "x", "y").identifiable
    wrong, info = identify_pruned_checked(g, tiers, "x", "y", None, True)
    assert info.plan.min_tier == 1 and not wrong.identifiable
    # reading the confounders off the graph stops the lower cut at the crossed boundary: right answer
    right, info = identify_pruned_checked(g, tiers, "x", "y", None, None)
    assert not unconfounded_boundary(g, tiers, 1) and info.plan.min_tier == 0 and right.identifiable


def identify_pruned_checked(g, tiers, x, y, z, within):
    from iclr26.tiered_pruning.pruning import identify_pruned

    return identify_pruned(g, tiers, x, y, z, within_tier_confounding=within)


def test_pruned_estimand_on_a_chain_with_a_confounded_past():
    """a0 <-> a1 (tier 0) -> x -> y (tier 1): P_x(y) = Σ_w P(w) P(y | x, w), exact on random SEMs."""
    g = admg("a0->a1 a1->x a0->y x->y a0<->a1", nodes="a0 a1 x y")
    tiers = Tiers([["a0", "a1"], ["x", "y"]])
    r, pruned = identify_pruned_checked(g, tiers, "x", "y", None, None)
    assert pruned.plan.min_tier == 1 and pruned.n_edges_pruned == 3 < pruned.n_edges_full
    assert r.identifiable and error_vs_truth(r.estimand, g, ["x"], ["y"], [], seed=3) < 1e-10


def test_outcomes_partly_before_the_treatments():
    """y0 in tier 0 (inside W) and y1 after x: P_x(y0, y1) = Σ P(w) ID_H(x ∪ w → y1) with y0 kept."""
    g = admg("a->y0 a->x y0->x x->y1 a->y1 y0<->a", nodes="a y0 x y1")
    tiers = Tiers([["a", "y0"], ["x", "y1"]])
    r, info = identify_pruned_checked(g, tiers, "x", ["y0", "y1"], None, None)
    assert info.plan.min_tier == 1 and info.plan.adjusted == {"a", "y0"}
    assert r.identifiable and error_vs_truth(r.estimand, g, ["x"], ["y0", "y1"], [], seed=5) < 1e-10


def test_condition_in_the_past_with_the_outcome_after_the_treatment():
    """Prop. 3.5: z in tier 0, x and y in tier 1; P_x(y | z) = P_x(y, z) / P(z)."""
    g = admg("z->x z->y x->y w->z w<->z", nodes="w z x y")
    tiers = Tiers([["w", "z"], ["x", "y"]])
    r, info = identify_pruned_checked(g, tiers, "x", "y", "z", None)
    assert info.plan.rule == "Prop. 3.5" and info.plan.min_tier == 1
    assert r.identifiable and error_vs_truth(r.estimand, g, ["x"], ["y"], ["z"], seed=7) < 1e-10


def test_a_confounder_across_an_inner_boundary_lowers_the_cut_but_not_to_zero():
    """Tiers 0, 1, 2; a <-> b crosses boundary 1 (tiers 0|1) only: the cut for x in tier 2 stays at 2;
    with b <-> x crossing boundary 2 it drops to 1 (not 0)."""
    tiers = Tiers([["a"], ["b"], ["x", "y"]])
    g = admg("a->b b->x x->y a<->b", nodes="a b x y")
    _, info = identify_pruned_checked(g, tiers, "x", "y", None, None)
    assert info.plan.min_tier == 2
    g2 = admg("a->b b->x x->y b<->x b->y", nodes="a b x y")
    r, info = identify_pruned_checked(g2, tiers, "x", "y", None, None)
    assert info.plan.min_tier == 1 and info.plan.adjusted == {"a"}
    full = identify(g2, "x", "y")
    assert r.identifiable == full.identifiable
    if r.identifiable:
        assert error_vs_truth(r.estimand, g2, ["x"], ["y"], [], seed=2) < 1e-10


def test_errors_name_the_problem():
    g = admg("a->b b->c", nodes="a b c")
    with pytest.raises(ValueError, match="in no tier"):
        prune(g, Tiers([["a"], ["b"]]), "a", "c")
    with pytest.raises(ValueError, match="not nodes of the graph"):
        prune(g, Tiers([["a"], ["b"], ["c"]]), "a", "zz")
    with pytest.raises(ValueError):
        prune(g, Tiers([["c"], ["b"], ["a"]]), "a", "c")  # the graph contradicts the tiers


def test_arguments_are_checked_before_the_tiers_are_used():
    g = admg("a->b b->c", nodes="a b c")
    with pytest.raises(TypeError, match="prune: tiers must be a Tiers, got list"):
        prune(g, [["a"], ["b"]], "a", "c")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="within_tier_confounding must be one of"):
        prune(g, Tiers([["a"], ["b"], ["c"]]), "a", "c", within_tier_confounding="yes")  # type: ignore[arg-type]


def test_a_tuple_is_one_node_exactly_when_it_is_a_node_of_the_graph():
    a, b, c = ("a", 0), ("b", 0), ("c", 0)
    dag = DAG([a, b, c], [(a, b), (b, c)])
    assert dag.ancestors(c) == {a, b, c} and dag.ancestors([b]) == {a, b}
    assert dag.d_separated(a, c, b) and not dag.d_separated(a, c)
    g = dag.latent_projection([])
    tiers = Tiers([[a], [b], [c]])
    r = identify(g, a, c)
    assert r.identifiable and r.query == Query(frozenset({c}), frozenset({a}))
    assert prune(g, tiers, b, c).plan.query == Query(frozenset({c}), frozenset({b}))
    local = query_specific_fci(OracleCITest(dag), tiers, b, c)
    assert local.plan.query == Query(frozenset({c}), frozenset({b}))
    # a tuple that is no node of the graph is a set of nodes
    assert identify(g, (a, b), c).query.treatments == {a, b}
    with pytest.raises(ValueError, match=r"treatments \['a', 1\] are not nodes of the graph"):
        identify(g, ("a", 1), c)
    with pytest.raises(ValueError, match="not variables of the data"):
        query_specific_fci(OracleCITest(dag), tiers, ("b", 1), c)


@st.composite
def tiered_admg_queries(draw, within_only: bool):
    """A tiered ADMG on 3-7 nodes (directed edges forward in node order, tiers non-decreasing along
    it; bidirected edges within tiers only, or anywhere) and disjoint x, y, z."""
    n = draw(st.integers(3, 7))
    names = [f"v{i}" for i in range(n)]
    steps = draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1))
    tier_of = [0]
    for up in steps:
        tier_of.append(tier_of[-1] + int(up))
    pairs = [(names[i], names[j]) for i in range(n) for j in range(i + 1, n)]
    directed = [p for p in pairs if draw(st.integers(0, 2)) > 0]
    same = {(names[i], names[j]) for i in range(n) for j in range(i + 1, n) if tier_of[i] == tier_of[j]}
    bidirected = [p for p in pairs if (p in same or not within_only) and draw(st.integers(0, 2)) == 0]
    roles = draw(st.lists(st.sampled_from("xyz.."), min_size=n, max_size=n))
    if "y" not in roles:
        roles[draw(st.integers(0, n - 1))] = "y"
    pick = lambda r: [v for v, role in zip(names, roles, strict=True) if role == r]  # noqa: E731
    tiers = Tiers(
        [[v for v, t in zip(names, tier_of, strict=True) if t == k] for k in range(tier_of[-1] + 1)]
    )
    return ADMG(names, directed, bidirected), tiers, pick("x"), pick("y"), pick("z")


@st.composite
def lower_cut_queries(draw, within_only: bool):
    """Like `tiered_admg_queries`, with at least 2 tiers, the treatment in a later tier than the first
    and the outcome at or after it, so that the lower cut (W non-empty, lo <= hi) is exercised."""
    g, tiers, _, _, _ = draw(tiered_admg_queries(within_only))
    if len(tiers) < 2:
        members = list(g.nodes)
        tiers = Tiers([members[:1], members[1:]])
        g = ADMG(
            g.nodes,
            g.directed_edges,
            [(a, b) for a, b in g.bidirected_edges if not within_only or tiers.tier(a) == tiers.tier(b)],
        )
    later = [v for v in g.nodes if tiers.tier(v) >= 1]
    x = draw(st.sampled_from(later))
    after = [v for v in g.nodes if tiers.tier(v) >= tiers.tier(x) and v != x]
    if not after:
        after = [v for v in g.nodes if v != x]
    y = draw(st.sampled_from(after))
    rest = [v for v in g.nodes if v not in (x, y)]
    z = [v for v in rest if draw(st.integers(0, 3)) == 0]
    return g, tiers, [x], [y], z


def _check_same_answer(case, seed, within):
    g, tiers, x, y, z = case
    full = identify(g, x, y, z)
    pruned, info = identify_pruned_checked(g, tiers, x, y, z, within)
    assert pruned.identifiable == full.identifiable, (str(full), str(pruned), info.plan)
    if pruned.identifiable:
        assert error_vs_truth(pruned.estimand, g, x, y, z, seed=seed) < 1e-9, (str(pruned), info.plan)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(tiered_admg_queries(within_only=True), st.integers(0, 2**16))
def test_property_pruning_keeps_identification_under_the_papers_assumption(case, seed):
    _check_same_answer(case, seed, within=True)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(tiered_admg_queries(within_only=False), st.integers(0, 2**16))
def test_property_pruning_read_off_the_graph_keeps_identification_with_any_confounding(case, seed):
    _check_same_answer(case, seed, within=None)


@settings(max_examples=50, deadline=None, derandomize=True)
@given(lower_cut_queries(within_only=True), st.integers(0, 2**16))
def test_property_lower_cut_keeps_identification_under_the_papers_assumption(case, seed):
    _check_same_answer(case, seed, within=True)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(lower_cut_queries(within_only=False), st.integers(0, 2**16))
def test_property_lower_cut_read_off_the_graph_with_any_confounding(case, seed):
    _check_same_answer(case, seed, within=None)
