"""Graph types: validation errors, separation criteria against networkx and brute force, latent
projection and MAG construction against their definitions, tiers, and conversions."""

from itertools import chain, combinations

import networkx as nx
import numpy as np
import pytest

from iclr26.tiered_pruning import ADMG, DAG, MAG, PAG, CyclicGraphError, Mark, Tiers, random_tiered_dag


def subsets(xs):
    xs = list(xs)
    return chain.from_iterable(combinations(xs, k) for k in range(len(xs) + 1))


# -- validation ----------------------------------------------------------------------------------


def test_cyclic_dag_names_the_cycle():
    with pytest.raises(
        CyclicGraphError, match=r"'b' -> 'c' -> 'a' -> 'b'|'a' -> 'b' -> 'c' -> 'a'|'c' -> 'a' -> 'b' -> 'c'"
    ):
        DAG("abcd", [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    with pytest.raises(CyclicGraphError, match="self-loop"):
        DAG("ab", [("a", "a")])
    with pytest.raises(CyclicGraphError, match="directed cycle"):
        ADMG("ab", [("a", "b"), ("b", "a")])


def test_unknown_nodes_and_bad_marks_are_named():
    with pytest.raises(ValueError, match="unknown node 'z'"):
        DAG("ab", [("a", "z")])
    with pytest.raises(ValueError, match="unknown node 'q'"):
        DAG("ab", [("a", "b")]).d_separated("a", "q")
    with pytest.raises(ValueError, match="must be disjoint"):
        DAG("abc", [("a", "b")]).d_separated("a", "b", ["a"])
    with pytest.raises(ValueError, match="expected 'A o-> B'"):
        PAG.from_strings(["a => b"])
    with pytest.raises(ValueError, match="undirected"):
        MAG.from_strings(["a --- b"])
    with pytest.raises(ValueError, match="not ancestral"):
        MAG.from_strings(["a --> b", "b --> c", "a <-> c"])
    with pytest.raises(ValueError, match="circle"):
        MAG.from_strings(["a o-> b"])


# -- separation ----------------------------------------------------------------------------------


def test_d_separation_matches_networkx_on_random_dags():
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(6):
        dag = random_tiered_dag(9, 3, 2.5, 2, seed=seed).dag
        g = dag.to_networkx()
        nodes = list(dag.nodes)
        for _ in range(60):
            x, y, *z = rng.choice(nodes, size=2 + int(rng.integers(0, 4)), replace=False).tolist()
            assert dag.d_separated(x, y, z) == nx.is_d_separator(g, {x}, {y}, set(z))
            checked += 1
    assert checked == 360


def test_m_separation_textbook_cases():
    # bow arc X -> Y, X <-> Y: never separated; the M-structure is separated marginally, not given M
    bow = ADMG("XY", [("X", "Y")], [("X", "Y")])
    assert not bow.m_separated("X", "Y")
    m = ADMG("AMB", [], [("A", "M"), ("M", "B")])
    assert m.m_separated("A", "B") and not m.m_separated("A", "B", ["M"])
    # a collider whose descendant is conditioned on opens the path
    g = ADMG("ACBD", [("C", "D")], [("A", "C"), ("B", "C")])
    assert g.m_separated("A", "B") and not g.m_separated("A", "B", ["D"])


def test_latent_projection_preserves_separations_and_ancestry():
    """m-separation in the projection equals d-separation in the DAG over the observed nodes."""
    for seed in range(5):
        tg = random_tiered_dag(6, 2, 2.0, 3, seed=seed)
        admg = tg.dag.latent_projection(tg.latents)
        obs = tg.observed
        assert list(admg.nodes) == obs
        for x, y in combinations(obs, 2):
            for z in subsets([v for v in obs if v not in (x, y)]):
                assert admg.m_separated(x, y, z) == tg.dag.d_separated(x, y, z), (seed, x, y, z)
        for v in obs:
            assert admg.ancestors(v) == tg.dag.ancestors(v) & set(obs)


def test_latent_projection_textbook():
    # X <- U -> Y, X -> M -> Y with M latent: X -> Y (through M) and X <-> Y (through U)
    dag = DAG(["X", "Y", "U", "M"], [("U", "X"), ("U", "Y"), ("X", "M"), ("M", "Y")])
    admg = dag.latent_projection(["U", "M"])
    assert admg.directed_edges == [("X", "Y")] and admg.bidirected_edges == [("X", "Y")]
    # a latent chain L1 -> L2 with observed children of each gives one bidirected edge
    dag = DAG(["A", "B", "L1", "L2"], [("L1", "L2"), ("L1", "A"), ("L2", "B")])
    assert dag.latent_projection(["L1", "L2"]).bidirected_edges == [("A", "B")]
    assert [set(d) for d in admg.districts()] == [{"X", "Y"}]


def test_mag_matches_inducing_path_definition_and_separations():
    """MAG adjacency iff no observed set separates; same m-/d-separations; marks by ancestry."""
    for seed in range(6):
        tg = random_tiered_dag(6, 2, 2.0, 3, seed=seed)
        mag = tg.mag()
        obs = tg.observed
        assert mag.is_maximal()
        for x, y in combinations(obs, 2):
            rest = [v for v in obs if v not in (x, y)]
            separable = any(tg.dag.d_separated(x, y, z) for z in subsets(rest))
            assert mag.adjacent(x, y) == (not separable), (seed, x, y)
            if mag.adjacent(x, y):
                tail_at_x = x in tg.dag.ancestors(y)
                assert (mag.mark(y, x) is Mark.TAIL) == tail_at_x
            for z in subsets(rest):
                assert mag.m_separated(x, y, z) == tg.dag.d_separated(x, y, z)


def test_mag_of_textbook_graphs():
    # instrument Z -> X -> Y with X <- U -> Y: Z and Y become adjacent (inducing path through X)
    dag = DAG(["Z", "X", "Y", "U"], [("Z", "X"), ("X", "Y"), ("U", "X"), ("U", "Y")])
    assert dag.to_mag(["U"]) == MAG.from_strings(["Z --> X", "Z --> Y", "X --> Y"])
    # M-structure A <- U1 -> M <- U2 -> B: A <-> M <-> B, A and B non-adjacent
    dag = DAG(["A", "M", "B", "U1", "U2"], [("U1", "A"), ("U1", "M"), ("U2", "M"), ("U2", "B")])
    assert dag.to_mag(["U1", "U2"]) == MAG.from_strings(["A <-> M", "M <-> B"])


# -- tiers ---------------------------------------------------------------------------------------


def test_tiers_lookup_and_errors():
    t = Tiers([["a", "b"], ["c"], ["d"]])
    assert t.tier("a") == 0 and t.tier("d") == 2 and len(t) == 3 and t.variables == ["a", "b", "c", "d"]
    assert t.can_be_ancestor("a", "b") and t.can_be_ancestor("a", "c") and not t.can_be_ancestor("c", "a")
    assert t.is_future("d", "a", "c") and not t.is_future("c", "a", "c")
    assert not Tiers([["a", "b"]], forbid_within=True).can_be_ancestor("a", "b")
    with pytest.raises(ValueError, match="variable 'z' is in no tier"):
        t.tier("z")
    with pytest.raises(ValueError, match=r"variable\(s\) are in no tier: \['x', 'y'\]"):
        t.check_covers(["a", "x", "y"])
    with pytest.raises(ValueError, match="'a' is in tier 0 and tier 1"):
        Tiers([["a"], ["a"]])
    with pytest.raises(ValueError, match="tier 1 is empty"):
        Tiers([["a"], []])
    with pytest.raises(TypeError, match="string"):
        Tiers(["ab", "c"])
    assert t.restricted(["d", "a"]) == Tiers([["a"], ["d"]])


def test_tiers_check_graph_and_topological_generations():
    dag = DAG("abcd", [("a", "b"), ("b", "c"), ("a", "d")])
    Tiers([["a"], ["b", "d"], ["c"]]).check_graph(dag)
    with pytest.raises(ValueError, match=r"'b' \(tier 1\) is an ancestor of 'c' \(tier 0\)"):
        Tiers([["a", "c"], ["b", "d"]]).check_graph(DAG("abcd", [("b", "c")]))
    gens = Tiers.from_topological_generations(dag)
    assert gens == Tiers([["a"], ["b", "d"], ["c"]])
    assert Tiers.from_topological_generations(dag, n_tiers=2) == Tiers([["a", "b", "d"], ["c"]])
    assert gens.violations(dag) == []
    for seed in range(4):
        tg = random_tiered_dag(12, 4, 2.0, 3, seed=seed)
        assert tg.tiers.violations(tg.dag) == [] and tg.tiers.violations(tg.mag()) == []


# -- conversions ---------------------------------------------------------------------------------


def test_networkx_round_trips():
    tg = random_tiered_dag(7, 2, 2.0, 2, seed=3)
    assert DAG.from_networkx(tg.dag.to_networkx()) == tg.dag
    admg = tg.dag.latent_projection(tg.latents)
    assert ADMG.from_networkx(*admg.to_networkx()) == admg
    pag = PAG.from_strings(["A o-> B", "B <-> C", "C --> D", "A o-o D"])
    assert PAG.from_networkx(pag.to_networkx()) == pag
    mag = tg.mag()
    assert MAG.from_networkx(mag.to_networkx()) == mag
    with pytest.raises(CyclicGraphError):
        DAG.from_networkx(nx.DiGraph([("a", "b"), ("b", "a")]))


def test_causallearn_round_trips():
    pytest.importorskip("causallearn")
    pag = PAG.from_strings(["A o-> B", "B <-> C", "C --> D", "A o-o D"])
    cl = pag.to_causallearn()
    assert {str(e) for e in cl.get_graph_edges()} == {"A o-> B", "B <-> C", "C --> D", "A o-o D"}
    assert PAG.from_causallearn(cl) == pag
    dag = random_tiered_dag(6, 2, 2.0, 0, seed=1).dag
    assert DAG.from_causallearn(dag.to_causallearn()) == dag


def test_pag_marks_and_strings():
    pag = PAG.from_strings(["A o-> B", "C <-- B"])
    assert pag.mark("A", "B") is Mark.ARROW and pag.mark("B", "A") is Mark.CIRCLE
    assert pag.endpoints("B", "C") == (Mark.TAIL, Mark.ARROW)
    assert pag.edge_string("B", "A") == "B <-o A"
    with pytest.raises(ValueError, match="not adjacent"):
        pag.mark("A", "C")
    assert PAG.complete("abc").n_edges() == 3
