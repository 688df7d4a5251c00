"""CI tests: values against causal-learn / scipy / regression, the empty-cell correction, the
oracle, counting and caching, and the bad-input errors."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from iclr26.tiered_pruning import (
    ADMG,
    DAG,
    FisherZTest,
    GSquareTest,
    OracleCITest,
    SingularCovarianceError,
    random_tiered_dag,
    sample_discrete,
    sample_linear_gaussian,
)
from iclr26.tiered_pruning.simulate import random_linear_sem


@pytest.fixture(scope="module")
def gaussian():
    tg = random_tiered_dag(6, 2, 2.0, 1, seed=4)
    return sample_linear_gaussian(tg.dag, 2000, seed=4)[tg.observed]


QUERIES = [
    ("X0", "X1", ()),
    ("X0", "X5", ("X2",)),
    ("X1", "X4", ("X0", "X3")),
    ("X2", "X3", ("X0", "X1", "X5")),
]


def test_fisher_z_matches_causallearn_and_regression(gaussian):
    cit = pytest.importorskip("causallearn.utils.cit")
    ours = FisherZTest(gaussian)
    theirs = cit.CIT(gaussian.to_numpy(), "fisherz")
    col = {c: i for i, c in enumerate(gaussian.columns)}
    for x, y, s in QUERIES:
        assert ours.p_value(x, y, s) == pytest.approx(
            theirs(col[x], col[y], [col[v] for v in s]), rel=1e-8, abs=1e-12
        )
        # the partial correlation is the correlation of least-squares residuals
        z = np.column_stack([np.ones(len(gaussian)), *(gaussian[v] for v in s)])
        rx = gaussian[x] - z @ np.linalg.lstsq(z, gaussian[x], rcond=None)[0]
        ry = gaussian[y] - z @ np.linalg.lstsq(z, gaussian[y], rcond=None)[0]
        assert ours.partial_correlation(x, y, s) == pytest.approx(np.corrcoef(rx, ry)[0, 1], abs=1e-10)


def test_fisher_z_from_population_covariance_decides_by_d_separation():
    """With the SEM's exact covariance, the partial correlation is 0 iff d-separated."""
    tg = random_tiered_dag(6, 2, 2.0, 0, seed=2)
    sem = random_linear_sem(tg.dag, seed=2)
    test = FisherZTest.from_covariance(sem.covariance(), 10**6, list(tg.dag.nodes))
    for x, y, s in QUERIES:
        r = test.partial_correlation(x, y, s)
        assert (abs(r) < 1e-10) == tg.dag.d_separated(x, y, s)
    assert np.allclose(np.diag(sem.covariance()), 1.0)  # standardized SEM


def test_fisher_z_bad_input_errors():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": ["x", "y", "x", "y"], "c": [1.0, 0.0, 2.0, 1.0]})
    with pytest.raises(TypeError, match=r"non-numeric columns 'b' \(object|non-numeric columns 'b' \(str"):
        FisherZTest(df)
    with pytest.raises(ValueError, match="NaN or inf"):
        FisherZTest(pd.DataFrame({"a": [1.0, np.nan, 3.0], "c": [1.0, 2.0, 0.0]}))
    with pytest.raises(SingularCovarianceError, match=r"columns \['k'\] are constant"):
        FisherZTest(pd.DataFrame({"a": [1.0, 2.0, 3.0], "k": [5.0, 5.0, 5.0]}))
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=100), rng.normal(size=100)
    with pytest.raises(
        SingularCovarianceError, match=r"singular.*\['s', 'v', 'u'\] are \(nearly\) linearly dependent"
    ):
        FisherZTest(pd.DataFrame({"u": u, "v": v, "s": u + 2 * v, "w": rng.normal(size=100)}))
    with pytest.raises(ValueError, match="unknown variable 'zz'"):
        FisherZTest(pd.DataFrame({"u": u, "v": v})).test("u", "zz")
    with pytest.raises(ValueError, match="too few"):
        FisherZTest(pd.DataFrame({"u": u[:4], "v": v[:4], "w": rng.normal(size=4)})).test("u", "v", ["w"])


def test_g_square_matches_scipy_unconditional_and_per_stratum():
    rng = np.random.default_rng(1)
    n = 3000
    z = rng.integers(0, 2, n)
    x = (rng.random(n) < 0.3 + 0.4 * z).astype(int) + rng.integers(0, 2, n)  # 3 levels
    y = (rng.random(n) < 0.2 + 0.5 * z).astype(int)
    data = pd.DataFrame({"x": x, "y": y, "z": z})
    test = GSquareTest(data)
    table = pd.crosstab(data.x, data.y).to_numpy()
    g2, p, dof, _ = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
    s = test.statistic("x", "y")
    assert (s.g2, s.dof) == (pytest.approx(g2, rel=1e-10), dof) and s.p_value == pytest.approx(p, rel=1e-8)
    # conditional: G² and dof add over the strata of z
    parts = [
        stats.chi2_contingency(pd.crosstab(g.x, g.y).to_numpy(), correction=False, lambda_="log-likelihood")
        for _, g in data.groupby("z")
    ]
    s = test.statistic("x", "y", ["z"])
    assert s.g2 == pytest.approx(sum(q[0] for q in parts), rel=1e-10) and s.dof == sum(q[2] for q in parts)
    cit = pytest.importorskip("causallearn.utils.cit")
    theirs = cit.CIT(data.to_numpy(), "gsq")
    assert test.p_value("x", "y", ["z"]) == pytest.approx(theirs(0, 1, [2]), rel=1e-8)


def test_g_square_reduces_degrees_of_freedom_for_empty_cells():
    # stratum z=0 sees x ∈ {0,1,2}, stratum z=1 sees only x ∈ {0,1}: dof = 2·1 + 1·1 = 3, not 2·1·2 = 4
    rng = np.random.default_rng(2)
    n = 600
    z = np.repeat([0, 1], n // 2)
    x = np.where(z == 0, rng.integers(0, 3, n), rng.integers(0, 2, n))
    y = rng.integers(0, 2, n)
    test = GSquareTest(pd.DataFrame({"x": x, "y": y, "z": z}))
    assert test.statistic("x", "y", ["z"]).dof == 3
    # a stratum where y is constant contributes nothing; zero dof means "cannot reject": p = 1
    y_const = np.zeros(n, dtype=int)
    test = GSquareTest(pd.DataFrame({"x": x, "y": y_const, "z": z}))
    s = test.statistic("x", "y", ["z"])
    assert s.dof == 0 and s.p_value == 1.0
    # strings are categories too
    test = GSquareTest(pd.DataFrame({"x": np.where(x > 0, "hi", "lo"), "y": y}))
    assert test.statistic("x", "y").dof == 1


def test_g_square_decides_by_d_separation_on_discrete_data():
    dag = DAG("ABC", [("A", "B"), ("B", "C")])
    data = sample_discrete(dag, 20000, seed=0, n_states=3)
    test = GSquareTest(data, alpha=0.01)
    assert not test.independent("A", "C") and test.independent("A", "C", ["B"])


def test_oracle_on_dag_admg_and_unknown_variables():
    dag = DAG(["X", "Y", "U", "M"], [("U", "X"), ("U", "Y"), ("X", "M"), ("M", "Y")])
    test = OracleCITest(dag, observed=["X", "Y", "M"])
    assert test.variables == ("X", "Y", "M")
    assert test.test("X", "Y", ["M"]).p_value == 0.0  # the latent U still connects them
    admg = ADMG("XMY", [("X", "M"), ("M", "Y")])
    assert OracleCITest(admg).independent("X", "Y", ["M"])
    with pytest.raises(ValueError, match="unknown variable 'U'"):
        test.test("X", "U")
    with pytest.raises(ValueError, match="not nodes of the graph"):
        OracleCITest(dag, observed=["X", "Q"])


def test_counting_and_caching_are_symmetric_and_order_free(gaussian):
    test = FisherZTest(gaussian)
    p = test.p_value("X0", "X1", ["X2", "X3"])
    assert test.stats == {"tests": 1, "cache_hits": 0}
    assert test.p_value("X1", "X0", ["X3", "X2"]) == p  # swapped x, y and reordered cond
    assert test.independent("X0", "X1", ("X2", "X3")) == (p > test.alpha)
    assert test.stats == {"tests": 1, "cache_hits": 2}
    test.p_value("X0", "X1", ["X2"])  # a different query is a new test
    assert test.n_tests == 2
    test.reset_counts()
    assert test.stats == {"tests": 0, "cache_hits": 0}
    test.p_value("X0", "X1", ["X2"])
    assert test.stats == {"tests": 0, "cache_hits": 1}  # reset keeps the cache
    test.clear_cache()
    test.p_value("X0", "X1", ["X2"])
    assert test.n_tests == 1
    with pytest.raises(ValueError, match="same variable"):
        test.test("X0", "X0")
    with pytest.raises(ValueError, match="contains x"):
        test.test("X0", "X1", ["X0"])
    with pytest.raises(ValueError, match="alpha must be in"):
        FisherZTest(gaussian, alpha=1.5)
