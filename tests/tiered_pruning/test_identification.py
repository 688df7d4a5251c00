"""ID / IDC: textbook estimands, hedges, exact agreement with the truncated factorisation on random
graphs with latents, the estimand algebra, and bad input."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr26.tiered_pruning import ADMG, DAG, CyclicGraphError
from iclr26.tiered_pruning.discrete import Factor, JointTable
from iclr26.tiered_pruning.estimand import (
    ONE,
    Fraction,
    Prob,
    Product,
    Sum,
    evaluate,
    fraction,
    prenex,
    product,
    summation,
)
from iclr26.tiered_pruning.identification import (
    Identified,
    NotIdentifiable,
    NotIdentifiableError,
    id_algorithm,
    idc_algorithm,
    identify,
)

from .id_cases import TEXTBOOK, admg, error_vs_truth, random_queries, sem_error, verma

# -- textbook cases ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "graph", "x", "y", "z", "identifiable"), TEXTBOOK, ids=[c[0] for c in TEXTBOOK]
)
def test_textbook_verdicts_and_exact_values(name, graph, x, y, z, identifiable):
    r = identify(graph, x, y, z)
    assert r.identifiable is identifiable, str(r)
    if identifiable:
        for seed, k in ((0, 2), (1, 3)):
            assert error_vs_truth(r.estimand, graph, x, y, z, seed=seed, n_states=k) < 1e-12


@pytest.mark.parametrize(
    ("graph", "x", "y", "z", "formula"),
    [
        (admg("z->x z->y x->y"), "x", "y", None, "Σ_{z} P(z) P(y | x, z)"),  # adjustment formula
        (admg("x->m m->y x<->y"), "x", "y", None, "Σ_{m} P(m | x) [Σ_{x'} P(x') P(y | m, x')]"),  # front-door
        (  # napkin: a ratio, no adjustment set exists
            admg("w->r r->x x->y w<->x w<->y"),
            "x",
            "y",
            None,
            "[Σ_{w} P(w) P(x, y | r, w)] / [Σ_{w} P(w) P(x | r, w)]",
        ),
        (verma(1), "V3", "V4", None, "Σ_{V2} P(V2 | V1) P(V4 | V1, V2, V3)"),
        (admg("x->y"), "x", "y", None, "P(y | x)"),
        (admg("z->x z->y x->y"), "x", "y", "z", "P(y | x, z)"),  # rule 2 moves z to do(z)
        (admg("x->m m->y x<->y"), "x", "y", "m", "Σ_{x'} P(x') P(y | m, x')"),
    ],
)
def test_textbook_formulas(graph, x, y, z, formula):
    r = identify(graph, x, y, z)
    assert isinstance(r, Identified)
    assert str(r).split(" = ", 1)[1] == formula


def test_bow_arc_hedge_and_errors():
    g = admg("x->y x<->y")
    r = identify(g, "x", "y")
    assert isinstance(r, NotIdentifiable)
    assert (r.hedge.forest, r.hedge.subforest, r.hedge.roots) == ({"x", "y"}, {"y"}, {"y"})
    assert str(r) == (
        "P(y | do(x)) is not identifiable: hedge F = {x, y} ⊃ F' = {y} with roots R = {y} for P(y | do(x))"
    )
    with pytest.raises(NotIdentifiableError, match=r"hedge F = \{x, y\}") as info:
        id_algorithm(g, ["y"], ["x"])
    assert info.value.hedge == r.hedge
    with pytest.raises(NotIdentifiableError, match="not identifiable"):
        idc_algorithm(admg("z->x x->y x<->y"), ["y"], ["x"], ["z"])


def _is_hedge(g: ADMG, hedge) -> bool:
    """Shpitser & Pearl (2006), Def. 5, for the effect P(y | do(x)) the hedge names: F' ⊂ F,
    F ∩ X ≠ ∅ = F' ∩ X, both C-forests rooted in R (one district; every node an ancestor of R inside
    it), R ⊆ An(Y) in G with arrows into X cut."""
    f, fp, roots = hedge.forest, hedge.subforest, hedge.roots
    xs, y = set(hedge.effect.treatments), hedge.effect.outcomes
    cut = ADMG(g.nodes, [(a, b) for a, b in g.directed_edges if b not in xs])
    forests_ok = all(
        len(g.subgraph(s).districts()) == 1 and g.subgraph(s).ancestors(roots) == set(s) for s in (f, fp)
    )
    return fp < f and bool(f & xs) and not (fp & xs) and forests_ok and roots <= cut.ancestors(y)


# -- random graphs with latents: exact equality with the truncated factorisation ---------------

RANDOM = random_queries(80)


def test_random_graphs_estimands_equal_truncated_factorisation():
    n_id = n_non = n_idc = 0
    for seed, g, sem, latents, x, y, z in RANDOM:
        r = identify(g, x, y, z)
        if not r.identifiable:
            n_non += 1
            assert _is_hedge(g, r.hedge), (seed, str(r))
            effect = r.hedge.effect
            assert set(x) <= effect.treatments <= set(x) | set(z)
            assert effect.outcomes == set(y) | (set(z) - effect.treatments)
            continue
        n_id += 1
        n_idc += bool(z)
        assert r.estimand.free_variables() <= set(g.nodes)
        err = sem_error(r.estimand, sem, latents, x, y, z)
        assert err < 1e-10, (seed, str(r), err)
    assert n_id >= 30 and n_idc >= 10 and n_non >= 5, (n_id, n_idc, n_non)


def test_dag_with_latents_gives_the_same_answer_as_its_projection():
    dag = DAG(["u", "x", "m", "y"], [("u", "x"), ("u", "y"), ("x", "m"), ("m", "y")])
    a = identify(dag, "x", "y", latents=["u"])
    b = identify(admg("x->m m->y x<->y"), "x", "y")
    assert a == b
    assert identify(nx.DiGraph([("z", "x"), ("z", "y"), ("x", "y")]), "x", "y").identifiable


# -- the estimand algebra: simplification keeps the value --------------------------------------


def _joint(names: str, seed: int) -> JointTable:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(2 ** len(names))).reshape([2] * len(names))
    return JointTable(Factor(tuple(names), p))


def test_simplification_rules_are_exact():
    d = _joint("abcd", 0)
    p_ab_c, p_b_c, p_a = Prob({"a", "b"}, {"c"}), Prob({"b"}, {"c"}), Prob({"a"})
    cases = [
        (Sum({"a"}, p_ab_c), summation({"a"}, p_ab_c), Prob({"b"}, {"c"})),
        (Fraction(p_ab_c, p_b_c), fraction(p_ab_c, p_b_c), Prob({"a"}, {"b", "c"})),
        (Product((p_a, Prob({"b"}, {"a"}))), product(p_a, Prob({"b"}, {"a"})), Prob({"a", "b"})),
        (Fraction(Product((p_a, p_b_c)), p_a), fraction(product(p_a, p_b_c), p_a), p_b_c),
        (
            Sum({"d"}, Product((p_a, Prob({"d"}, {"a", "c"})))),
            summation({"d"}, product(p_a, Prob({"d"}, {"a", "c"}))),
            p_a,
        ),
    ]
    for raw, simple, expected in cases:
        assert simple == expected
        free = sorted(raw.free_variables())  # the simplified form may drop a variable it is constant in
        cards = dict.fromkeys(free, 2)
        np.testing.assert_allclose(
            evaluate(simple, d).expand(free, cards), evaluate(raw, d).expand(free, cards), atol=1e-12
        )
    assert product(ONE, ONE) is ONE and fraction(p_a, ONE) == p_a


def test_prenex_and_rendering():
    fd = identify(admg("x->m m->y x<->y"), "x", "y").estimand
    napkin = identify(admg("w->r r->x x->y w<->x w<->y"), "x", "y").estimand
    d = _joint("xmy", 1)
    np.testing.assert_allclose(evaluate(prenex(fd), d).values, evaluate(fd, d).values, atol=1e-12)
    assert napkin.to_latex() == (r"\frac{\sum_{w} P(w) P(x, y \mid r, w)}{\sum_{w} P(w) P(x \mid r, w)}")
    assert fd.to_latex() == r"\sum_{m} P(m \mid x) \left(\sum_{x'} P(x') P(y \mid m, x')\right)"


def test_bound_variables_shadow_fixed_values():
    """Σ_{x'} inside the front-door formula must not take the value fixed for the free x."""
    g = admg("x->m m->y x<->y")
    r = identify(g, "x", "y")
    dag, latents = g.canonical_dag()
    from iclr26.tiered_pruning.discrete import random_discrete_sem

    sem = random_discrete_sem(dag, seed=3)
    obs = sem.observational(latents)
    truth = sem.interventional(["y"], ["x"])
    for xv in (0, 1):
        np.testing.assert_allclose(r.evaluate(obs, {"x": xv}).values, truth.values[:, xv], atol=1e-12)


# -- bad input ---------------------------------------------------------------------------------


def test_bad_queries_are_named():
    g = admg("z->x z->y x->y")
    with pytest.raises(ValueError, match=r"treatments \['q'\] are not nodes of the graph"):
        identify(g, "q", "y")
    with pytest.raises(ValueError, match=r"outcomes \['v', 'w'\] are not nodes"):
        identify(g, "x", ["v", "w"])
    with pytest.raises(ValueError, match=r"conditions \['k'\] are not nodes"):
        identify(g, "x", "y", "k")
    with pytest.raises(ValueError, match=r"treatments and outcomes overlap in \['y'\]"):
        identify(g, ["x", "y"], "y")
    with pytest.raises(ValueError, match=r"treatments and conditions overlap in \['x'\]"):
        identify(g, "x", "y", ["x"])
    with pytest.raises(ValueError, match=r"outcomes and conditions overlap"):
        identify(g, "x", "y", ["y", "z"])
    with pytest.raises(ValueError, match="outcomes is empty"):
        identify(g, "x", [])
    dag = DAG(["u", "x", "y"], [("u", "x"), ("u", "y"), ("x", "y")])
    with pytest.raises(ValueError, match=r"treatments \['u'\] are latent"):
        identify(dag, "u", "y", latents=["u"])
    with pytest.raises(ValueError, match="latents= applies to a DAG"):
        identify(g, "x", "y", latents=["z"])
    with pytest.raises(TypeError, match="graph must be an ADMG, a DAG"):
        identify({"x": ["y"]}, "x", "y")


def test_cyclic_graphs_are_rejected_naming_the_cycle():
    with pytest.raises(CyclicGraphError, match=r"directed cycle: .*'x'.*'y'"):
        identify(nx.DiGraph([("x", "y"), ("y", "x"), ("z", "x")]), "x", "y")
    with pytest.raises(CyclicGraphError, match="directed cycle"):
        identify(ADMG("xyz", [("x", "y"), ("y", "z"), ("z", "x")]), "x", "y")


# -- property test: any small ADMG, any query -----------------------------------------------------


@st.composite
def admg_queries(draw):
    """An ADMG on 3-5 nodes (directed edges along the node order) and disjoint x, y, z."""
    n = draw(st.integers(3, 5))
    names = [f"v{i}" for i in range(n)]
    pairs = [(names[i], names[j]) for i in range(n) for j in range(i + 1, n)]
    directed = [p for p in pairs if draw(st.booleans())]
    bidirected = [p for p in pairs if draw(st.integers(0, 3)) == 0]
    roles = draw(st.lists(st.sampled_from("xyz."), min_size=n, max_size=n))
    if "y" not in roles:
        roles[draw(st.integers(0, n - 1))] = "y"
    pick = lambda r: [v for v, role in zip(names, roles, strict=True) if role == r]  # noqa: E731
    return ADMG(names, directed, bidirected), pick("x"), pick("y"), pick("z")


@settings(max_examples=60, deadline=None, derandomize=True)
@given(admg_queries(), st.integers(0, 2**16))
def test_property_identified_means_exact_and_not_identified_means_hedge(case, seed):
    g, x, y, z = case
    r = identify(g, x, y, z)
    if r.identifiable:
        assert error_vs_truth(r.estimand, g, x, y, z, seed=seed, n_states=2) < 1e-10, str(r)
    else:
        assert _is_hedge(g, r.hedge), str(r)


def test_canonical_dag_projects_back_to_the_admg():
    for g in (admg("x->m m->y x<->y"), verma(5), admg("w->r r->x x->y w<->x w<->y")):
        dag, latents = g.canonical_dag()
        assert len(latents) == len(g.bidirected_edges)
        assert dag.latent_projection(latents) == g
