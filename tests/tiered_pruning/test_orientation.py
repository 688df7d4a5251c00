"""Orientation rules one by one on their minimal configurations, the tier arrowheads, and the
rule-based PAG of a MAG against the brute-force equivalence class."""

import pytest

from iclr26.tiered_pruning import (
    MAG,
    PAG,
    Mark,
    Tiers,
    mag_to_pag,
    markov_equivalent_mags,
    pag_by_enumeration,
)
from iclr26.tiered_pruning.orientation import (
    OrientationLog,
    orient_by_tiers,
    rule_1,
    rule_2,
    rule_3,
    rule_4,
    rule_8,
    rule_9,
    rule_10,
)
from tests.tiered_pruning.cases import random_cases


def pag(*edges):
    return PAG.from_strings(edges)


def no_sepset(a, c):
    return frozenset()


def test_rule_1():
    g = pag("a o-> b", "b o-o c")
    assert rule_1(g) and g.edge_string("b", "c") == "b --> c"
    g = pag("a o-> b", "b o-o c", "a o-o c")  # shielded: no orientation
    assert not rule_1(g)


def test_rule_2():
    g = pag("a --> b", "b o-> c", "a o-o c")
    assert rule_2(g) and g.edge_string("a", "c") == "a o-> c"
    g = pag("a o-> b", "b --> c", "a o-o c")
    assert rule_2(g) and g.edge_string("a", "c") == "a o-> c"


def test_rule_3():
    g = pag("a o-> b", "c o-> b", "a o-o d", "c o-o d", "d o-o b")
    assert rule_3(g) and g.edge_string("d", "b") == "d o-> b"


@pytest.mark.parametrize("b_in_sepset", [True, False])
def test_rule_4_both_branches(b_in_sepset):
    # <d, a, b, c> discriminates b: d *-> a <-> b, a -> c, d and c non-adjacent, b o-o c
    g = pag("d o-> a", "a <-> b", "a --> c", "b o-o c")
    sep = {frozenset(("d", "c")): frozenset({"b"} if b_in_sepset else set())}
    log = OrientationLog()
    assert rule_4(g, lambda x, y: sep[frozenset((x, y))], log) and log.counts["R4"] >= 1
    if b_in_sepset:
        assert g.edge_string("b", "c") == "b --> c"
    else:
        assert (g.edge_string("a", "b"), g.edge_string("b", "c")) == ("a <-> b", "b <-> c")


def test_rule_4_needs_the_collider_parents():
    g = pag("d o-> a", "a o-> b", "a --> c", "b o-o c")  # a is not a collider on the path
    assert not rule_4(g, no_sepset)


def test_rule_8():
    g = pag("a --> b", "b --> c", "a o-> c")
    assert rule_8(g) and g.edge_string("a", "c") == "a --> c"


def test_rule_9():
    # uncovered potentially directed path a o-o b o-o d o-> c, with b, c non-adjacent
    g = pag("a o-> c", "a o-o b", "b o-o d", "d o-> c")
    assert rule_9(g) and g.edge_string("a", "c") == "a --> c"
    g = pag("a o-> c", "a o-o b", "b o-o d", "d o-> c", "a o-o d")  # covered at b: no
    assert not rule_9(g)


def test_rule_10():
    g = pag("a o-> c", "b --> c", "d --> c", "a o-o b", "a o-o d")
    assert rule_10(g) and g.edge_string("a", "c") == "a --> c"
    g = pag("a o-> c", "b --> c", "d --> c", "a o-o b", "a o-o d", "b o-o d")  # μ, ω adjacent
    assert not rule_10(g)


def test_tier_arrowheads_leave_a_circle_at_the_earlier_node():
    g = pag("a o-o b", "b o-o c")
    orient_by_tiers(g, Tiers([["a"], ["b", "c"]]))
    assert g.edge_strings() == ["a o-> b", "b o-o c"]
    orient_by_tiers(g, Tiers([["a"], ["b", "c"]], forbid_within=True))
    assert g.edge_strings() == ["a o-> b", "b <-> c"]


def test_pairwise_equivalence_check_agrees_with_exhaustive_m_separation():
    for _, tg in random_cases(8, seed0=500, max_mag_edges=8):
        mag = tg.mag()
        pair = markov_equivalent_mags(mag)
        full = markov_equivalent_mags(mag, check="exhaustive")
        assert [m.edge_strings() for m in pair] == [m.edge_strings() for m in full]
        assert any(m == mag for m in pair)


def test_mag_to_pag_equals_brute_force_class_with_and_without_tiers():
    for seed, tg in random_cases(40):
        mag = tg.mag()
        for tiers in (None, tg.tiers):
            want = pag_by_enumeration(mag, tiers)
            got = mag_to_pag(mag, tiers)
            assert got == want, (seed, tiers, got.differences(want))
    # the textbook MAGs: a discriminating path and a bow-free confounded pair
    dp = MAG.from_strings(["d --> a", "a <-> b", "a --> c", "b --> c"])
    assert mag_to_pag(dp) == pag_by_enumeration(dp)
    assert mag_to_pag(dp).mark("c", "b") is Mark.TAIL  # R4 turns b o-> c into b --> c


def test_enumeration_refuses_to_blow_up():
    g = MAG.from_strings([f"{a} --> {b}" for i, a in enumerate("abcdef") for b in "abcdef"[i + 1 :]])
    with pytest.raises(RuntimeError, match="limit"):
        markov_equivalent_mags(g, limit=100)
