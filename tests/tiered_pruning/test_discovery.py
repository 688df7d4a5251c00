"""Query-specific discovery (Algorithm 1): under the oracle its local PAG equals the full tiered-FCI
PAG restricted to the kept T-components (Prop. 4.1), it never tests what it prunes, it is cheaper on
the Prop. 4.2-style family, and bad input is refused."""

import numpy as np
import pytest

from iclr26.tiered_pruning import FCIConfig, OracleCITest, Tiers, random_tiered_dag, tiered_fci
from iclr26.tiered_pruning.discovery import query_specific_fci, restrict_pag
from iclr26.tiered_pruning.graphs import Mark
from iclr26.tiered_pruning.system import dense_past


class RecordingOracle(OracleCITest):
    """An oracle that records the pair and conditioning set of every test it runs."""

    def __init__(self, graph) -> None:
        super().__init__(graph)
        self.seen: list[tuple] = []

    def _p_value(self, x, y, cond):  # type: ignore[override]
        self.seen.append((x, y, tuple(cond)))
        return super()._p_value(x, y, cond)


def _queries(tg, rng, k=3):
    tiers = list(tg.tiers)
    out = []
    for _ in range(k):
        t0, t1 = sorted(rng.integers(0, len(tiers), 2))
        x = [str(rng.choice(tiers[t0]))]
        y = [v for v in [str(rng.choice(tiers[t1]))] if v not in x]
        if y:
            out.append((x, y))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_local_pag_equals_the_full_pag_restricted_under_the_oracle(seed):
    rng = np.random.default_rng(seed)
    n, t = int(rng.integers(8, 18)), int(rng.integers(2, 5))
    tg = random_tiered_dag(n, t, 2.5, n_latents=n // 4, seed=seed, latents_within_tiers=True)
    mag = tg.mag()
    full = tiered_fci(OracleCITest(mag), tg.tiers, tg.tiers.variables, FCIConfig(cross_tier_tails=True))
    for x, y in _queries(tg, rng):
        local = query_specific_fci(OracleCITest(mag), tg.tiers, x, y)
        lo, hi = local.plan.min_tier, local.plan.max_tier
        assert restrict_pag(local.pag, tg.tiers, lo, hi) == restrict_pag(full.pag, tg.tiers, lo, hi)
        assert local.n_tests <= full.n_tests


def test_discovery_never_tests_pruned_pairs_or_future_tiers():
    tg = random_tiered_dag(16, 4, 2.5, n_latents=3, seed=3, latents_within_tiers=True)
    tiers = list(tg.tiers)
    test = RecordingOracle(tg.mag())
    local = query_specific_fci(test, tg.tiers, [tiers[1][0]], [tiers[2][1]])
    assert (local.plan.min_tier, local.plan.max_tier) == (1, 2) and test.seen
    for x, y, cond in test.seen:
        assert max(tg.tiers.tier(x), tg.tiers.tier(y)) in (1, 2)  # T-components 1 and 2 only
        assert all(tg.tiers.tier(v) <= 2 for v in cond)  # tier 3 is never read


def test_edges_between_tiers_are_directed_when_confounders_stay_within_tiers():
    """The fact `cross_tier_tails` rests on: every MAG edge between tiers is earlier -> later."""
    for seed in range(5):
        tg = random_tiered_dag(20, 4, 3.0, n_latents=8, seed=seed, latents_within_tiers=True)
        for a, b, ma, mb in tg.mag().edges():
            ta, tb = tg.tiers.tier(a), tg.tiers.tier(b)
            if ta < tb:
                assert (ma, mb) == (Mark.TAIL, Mark.ARROW)
            elif tb < ta:
                assert (ma, mb) == (Mark.ARROW, Mark.TAIL)


def test_prop_4_2_family_speedup_grows_with_the_past():
    ratios = []
    for n in (4, 6, 8):
        dag, tiers = dense_past(n)
        full = tiered_fci(OracleCITest(dag), tiers, config=FCIConfig(cross_tier_tails=True))
        local = query_specific_fci(OracleCITest(dag), tiers, "x", "y")
        assert local.plan.min_tier == 1 and local.pag.adjacent("x", "y")
        ratios.append(full.n_tests / local.n_tests)
    assert ratios[0] > 1 and ratios[0] < ratios[1] < ratios[2]


def test_without_the_assumption_only_the_upper_cut_is_used():
    """Confounders across tiers: the local PAG is plain tiered FCI (no tails) on tiers <= hi."""
    for seed in range(3):
        tg = random_tiered_dag(12, 3, 2.0, n_latents=3, seed=seed)
        tiers = list(tg.tiers)
        mag = tg.mag()
        local = query_specific_fci(
            OracleCITest(mag), tg.tiers, tiers[1][0], tiers[1][1], within_tier_confounding=False
        )
        assert (local.plan.min_tier, local.plan.max_tier) == (0, 1)
        assert set(local.pag.nodes) == set(tiers[0]) | set(tiers[1])
        full = tiered_fci(OracleCITest(mag), tg.tiers, tg.tiers.variables, FCIConfig())
        assert local.pag == restrict_pag(full.pag, tg.tiers, 0, 1)
    with pytest.raises(TypeError, match="within_tier_confounding"):
        query_specific_fci(
            OracleCITest(mag), tg.tiers, tiers[1][0], tiers[1][1], within_tier_confounding=None
        )


def test_queries_with_conditions_and_outcomes_before_treatments():
    tg = random_tiered_dag(16, 4, 2.5, n_latents=3, seed=4, latents_within_tiers=True)
    tiers = list(tg.tiers)
    mag = tg.mag()
    full = tiered_fci(OracleCITest(mag), tg.tiers, tg.tiers.variables, FCIConfig(cross_tier_tails=True))
    for z, rule in ((tiers[0][0], "Prop. 3.5"), (tiers[3][0], "Prop. 3.6")):
        local = query_specific_fci(OracleCITest(mag), tg.tiers, tiers[2][0], tiers[2][1], z)
        assert local.plan.rule == rule
        lo, hi = local.plan.min_tier, local.plan.max_tier
        assert restrict_pag(local.pag, tg.tiers, lo, hi) == restrict_pag(full.pag, tg.tiers, lo, hi)
    before = query_specific_fci(OracleCITest(mag), tg.tiers, tiers[3][0], tiers[1][0])
    assert before.plan.trivial and before.n_tests == 0


def test_bad_input_is_refused():
    dag, tiers = dense_past(3)
    test = OracleCITest(dag)
    with pytest.raises(ValueError, match="not variables of the data"):
        query_specific_fci(test, tiers, "x", "nope")
    with pytest.raises(ValueError, match="overlap"):
        query_specific_fci(test, tiers, "x", ["x", "y"])
    with pytest.raises(ValueError, match="in no tier"):
        query_specific_fci(test, Tiers([["a0", "a1"], ["x", "y"]]), "x", "y")
    with pytest.raises(ValueError, match="cross_tier_tails"):
        tiered_fci(test, tiers, min_tier=1)
    with pytest.raises(ValueError, match="min_tier must be an int"):
        tiered_fci(test, tiers, min_tier=-1)
