"""Conditional-independence tests that count what they run and cache what they have seen.

The number of CI tests is the paper's main cost figure (query-specific discovery vs tiered FCI),
so every test goes through `CITest.test`, which

- validates the query (known variables, x ≠ y, x and y not in the conditioning set);
- looks it up in a cache keyed by ({x, y}, set(cond)) — symmetric in x, y and order-free in
  cond — and counts a hit in `n_cache_hits` without running anything;
- otherwise runs the test and counts it in `n_tests`.

Tests: `FisherZTest` (linear-Gaussian; partial correlation and Fisher's z), `GSquareTest`
(discrete; likelihood-ratio G² with degrees of freedom reduced for empty cells), and
`OracleCITest` (d-separation in a DAG, m-separation in an ADMG or MAG).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from iclr26.core.validation import check_int
from iclr26.tiered_pruning.graphs import ADMG, DAG, MAG, Node


class SingularCovarianceError(ValueError):
    """The (sub)covariance matrix a Fisher-z test needs is singular (the message names the variables)."""


@dataclass(frozen=True)
class CIResult:
    """Outcome of one CI query: the p-value and the decision at the test's `alpha`."""

    p_value: float
    independent: bool


class CITest(ABC):
    """A conditional-independence test over named variables, with counting and a cache.

    Subclasses implement `_p_value(x, y, cond)`; callers use `test`, `independent` or `p_value`.
    """

    def __init__(self, variables: Sequence[Node], alpha: float = 0.05) -> None:
        if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
            raise ValueError(f"{type(self).__name__}: alpha must be in (0, 1), got {alpha!r}")
        self.alpha = float(alpha)
        self.variables: tuple[Node, ...] = tuple(variables)
        self._index = {v: i for i, v in enumerate(self.variables)}
        if len(self._index) < len(self.variables):
            raise ValueError(f"{type(self).__name__}: variable names must be distinct")
        self._cache: dict[tuple[frozenset[Node], frozenset[Node]], float] = {}
        self.n_tests = 0
        self.n_cache_hits = 0

    # -- the interface ------------------------------------------------------------------------
    def test(self, x: Node, y: Node, cond: Iterable[Node] = ()) -> CIResult:
        """Test x ⊥ y | cond; counted in `n_tests` unless answered from the cache."""
        cond = tuple(cond)
        self._validate(x, y, cond)
        key = (frozenset((x, y)), frozenset(cond))
        p = self._cache.get(key)
        if p is None:
            p = float(self._p_value(x, y, cond))
            self._cache[key] = p
            self.n_tests += 1
        else:
            self.n_cache_hits += 1
        return CIResult(p, self._decide(p))

    def independent(self, x: Node, y: Node, cond: Iterable[Node] = ()) -> bool:
        """Whether the test accepts x ⊥ y | cond."""
        return self.test(x, y, cond).independent

    def p_value(self, x: Node, y: Node, cond: Iterable[Node] = ()) -> float:
        """The p-value of x ⊥ y | cond."""
        return self.test(x, y, cond).p_value

    def _decide(self, p: float) -> bool:
        return p > self.alpha

    @property
    def stats(self) -> dict[str, int]:
        """{'tests': tests run, 'cache_hits': queries answered from the cache}."""
        return {"tests": self.n_tests, "cache_hits": self.n_cache_hits}

    def reset_counts(self) -> None:
        """Zero the counters (the cache is kept)."""
        self.n_tests = 0
        self.n_cache_hits = 0

    def clear_cache(self) -> None:
        """Forget cached results (the counters are kept)."""
        self._cache.clear()

    # -- helpers ------------------------------------------------------------------------------
    def _validate(self, x: Node, y: Node, cond: tuple[Node, ...]) -> None:
        for v in (x, y, *cond):
            if v not in self._index:
                shown = ", ".join(map(repr, self.variables[:8]))
                raise ValueError(
                    f"{type(self).__name__}: unknown variable {v!r}; known: {shown}"
                    f"{', ...' if len(self.variables) > 8 else ''} ({len(self.variables)} in all)"
                )
        if x == y:
            raise ValueError(f"{type(self).__name__}: x and y are the same variable {x!r}")
        if x in cond or y in cond:
            raise ValueError(
                f"{type(self).__name__}: the conditioning set {cond!r} contains x={x!r} or y={y!r}"
            )
        if len(set(cond)) < len(cond):
            raise ValueError(f"{type(self).__name__}: the conditioning set {cond!r} repeats a variable")

    @abstractmethod
    def _p_value(self, x: Node, y: Node, cond: tuple[Node, ...]) -> float:
        """The p-value of x ⊥ y | cond (no caching, no counting)."""


def check_ci_test(who: str, test: object) -> CITest:
    """`test` when it is a `CITest`; else a TypeError that names `who`."""
    if not isinstance(test, CITest):
        raise TypeError(f"{who}: test must be a CITest, got {type(test).__name__}")
    return test


def _frame(data: Any, variables: Sequence[Hashable] | None, who: str) -> pd.DataFrame:
    """Data as a DataFrame with the given (or its own, or 0..p-1) column names."""
    if isinstance(data, pd.DataFrame):
        df = data
        if variables is not None:
            missing = [v for v in variables if v not in df.columns]
            if missing:
                raise ValueError(f"{who}: variables {missing!r} are not columns of the data")
            df = df[list(variables)]
    else:
        arr = np.asarray(data)
        if arr.ndim != 2:
            raise ValueError(f"{who}: data must be 2-D (samples x variables), got shape {arr.shape}")
        names = list(range(arr.shape[1])) if variables is None else list(variables)
        if len(names) != arr.shape[1]:
            raise ValueError(f"{who}: {len(names)} variable names for {arr.shape[1]} data columns")
        df = pd.DataFrame(arr, columns=names)
    if df.shape[0] < 2:
        raise ValueError(f"{who}: need at least 2 samples, got {df.shape[0]}")
    return df


class FisherZTest(CITest):
    """Fisher-z test of zero partial correlation (linear-Gaussian data).

    z = ½ log((1 + r) / (1 − r)) · √(n − |S| − 3), two-sided normal p-value, where r is the
    partial correlation of x and y given S from the inverse of the correlation submatrix.

    Parameters
    ----------
    data : DataFrame or array of shape (n_samples, n_variables)
        Numeric columns only; NaN/inf, constant columns and a singular correlation matrix raise.
    variables : sequence, optional
        Column names to use (default: all DataFrame columns, or 0..p-1 for arrays).
    alpha : float, default 0.05
    """

    def __init__(self, data: Any, variables: Sequence[Hashable] | None = None, alpha: float = 0.05) -> None:
        if data is None:  # from_covariance fills in the rest
            super().__init__(list(variables or ()), alpha)
            return
        df = _frame(data, variables, "FisherZTest")
        bad = [
            c
            for c in df.columns
            if not pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c])
        ]
        if bad:
            kinds = ", ".join(f"{c!r} ({df[c].dtype})" for c in bad[:5])
            raise TypeError(
                f"FisherZTest: non-numeric columns {kinds}; Fisher-z needs real-valued data "
                "(use GSquareTest for discrete data)"
            )
        x = df.to_numpy(dtype=float)
        if not np.isfinite(x).all():
            cols = [c for c, ok in zip(df.columns, np.isfinite(x).all(axis=0), strict=True) if not ok]
            raise ValueError(f"FisherZTest: columns {cols[:5]!r} contain NaN or inf; impute or drop them")
        sd = x.std(axis=0)
        const = [
            c for c, s in zip(df.columns, sd, strict=True) if s <= 1e-12 * max(1.0, float(np.abs(x).max()))
        ]
        if const:
            raise SingularCovarianceError(
                f"FisherZTest: columns {const[:5]!r} are constant (singular covariance); drop them"
            )
        super().__init__(list(df.columns), alpha)
        self.n_samples = x.shape[0]
        self.corr = np.corrcoef(x, rowvar=False)
        self._check_corr()

    @classmethod
    def from_covariance(
        cls, cov: Any, n_samples: int, variables: Sequence[Hashable] | None = None, alpha: float = 0.05
    ) -> FisherZTest:
        """A Fisher-z test from a covariance matrix (e.g. a SEM's population covariance) and a sample size."""
        cov = np.asarray(cov, dtype=float)
        if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or not np.allclose(cov, cov.T):
            raise ValueError(
                f"FisherZTest.from_covariance: cov must be a symmetric square matrix, got shape {cov.shape}"
            )
        names = list(range(cov.shape[0])) if variables is None else list(variables)
        if len(names) != cov.shape[0]:
            raise ValueError(
                f"FisherZTest.from_covariance: {len(names)} names for a {cov.shape[0]}x{cov.shape[0]} matrix"
            )
        check_int("FisherZTest.from_covariance: n_samples", n_samples, 4)
        sd = np.sqrt(np.diag(cov))
        if (sd <= 0).any():
            zero = [names[i] for i in np.flatnonzero(sd <= 0)]
            raise SingularCovarianceError(
                f"FisherZTest.from_covariance: variables {zero[:5]!r} have zero variance"
            )
        test = cls(None, names, alpha)
        test.n_samples = n_samples
        test.corr = cov / np.outer(sd, sd)
        test._check_corr()
        return test

    def _check_corr(self) -> None:
        eigval, eigvec = np.linalg.eigh(self.corr)
        if eigval[0] < 1e-10:
            loads = np.abs(eigvec[:, 0])
            involved = [self.variables[i] for i in np.argsort(-loads) if loads[i] > 0.05]
            raise SingularCovarianceError(
                f"FisherZTest: the correlation matrix is singular (smallest eigenvalue {eigval[0]:.2e}); "
                f"variables {involved[:8]!r} are (nearly) linearly dependent; drop one of them"
            )

    def partial_correlation(self, x: Node, y: Node, cond: Iterable[Node] = ()) -> float:
        """The sample partial correlation of x and y given cond."""
        cond = tuple(cond)
        self._validate(x, y, cond)
        return self._partial_corr(x, y, cond)

    def _partial_corr(self, x: Node, y: Node, cond: tuple[Node, ...]) -> float:
        idx = [self._index[v] for v in (x, y, *cond)]
        sub = self.corr[np.ix_(idx, idx)]
        if np.linalg.cond(sub) > 1e12:
            raise SingularCovarianceError(
                f"FisherZTest: the correlation matrix of {[x, y, *cond]!r} is singular; "
                "some of these variables are linearly dependent"
            )
        prec = np.linalg.inv(sub)
        return float(-prec[0, 1] / math.sqrt(prec[0, 0] * prec[1, 1]))

    def _p_value(self, x: Node, y: Node, cond: tuple[Node, ...]) -> float:
        dof = self.n_samples - len(cond) - 3
        if dof <= 0:
            raise ValueError(
                f"FisherZTest: {self.n_samples} samples are too few to condition on {len(cond)} variables "
                f"(need n > |S| + 3)"
            )
        r = min(max(self._partial_corr(x, y, cond), -1 + 1e-15), 1 - 1e-15)
        z = 0.5 * math.log((1 + r) / (1 - r)) * math.sqrt(dof)
        return float(2 * stats.norm.sf(abs(z)))


@dataclass(frozen=True)
class GSquareStatistic:
    """The parts of one G² test: statistic, degrees of freedom (after the empty-cell correction), p-value."""

    g2: float
    dof: int
    p_value: float


class GSquareTest(CITest):
    """G² (likelihood-ratio) test of conditional independence for discrete data.

    G² = 2 Σ_s Σ_ij O_sij log(O_sij / E_sij), E_sij = O_si· O_s·j / O_s··, over the strata s of
    the conditioning set that occur in the data. Degrees of freedom: Σ_s (r_s − 1)(c_s − 1), where
    r_s, c_s count the values of x and y that occur in stratum s — the usual correction for empty
    cells (as in Tetrad and causal-learn). With zero
    degrees of freedom the test cannot reject: p = 1.

    Parameters
    ----------
    data : DataFrame or array of shape (n_samples, n_variables)
        Any hashable values per column (they are coded as categories); NaN raises.
    variables : sequence, optional
    alpha : float, default 0.05
    """

    def __init__(self, data: Any, variables: Sequence[Hashable] | None = None, alpha: float = 0.05) -> None:
        df = _frame(data, variables, "GSquareTest")
        nan_cols = [c for c in df.columns if df[c].isna().any()]
        if nan_cols:
            raise ValueError(
                f"GSquareTest: columns {nan_cols[:5]!r} have missing values; impute or drop them"
            )
        super().__init__(list(df.columns), alpha)
        codes, cards = [], []
        for c in df.columns:
            code, levels = pd.factorize(df[c], sort=True)
            codes.append(code.astype(np.int64))
            cards.append(len(levels))
        self.codes = np.stack(codes, axis=1)
        self.cardinalities = dict(zip(self.variables, cards, strict=True))
        self.n_samples = self.codes.shape[0]

    def statistic(self, x: Node, y: Node, cond: Iterable[Node] = ()) -> GSquareStatistic:
        """G², its degrees of freedom and p-value (uncached, uncounted; for inspection)."""
        cond = tuple(cond)
        self._validate(x, y, cond)
        return self._g2(x, y, cond)

    def _g2(self, x: Node, y: Node, cond: tuple[Node, ...]) -> GSquareStatistic:
        cx, cy = self.cardinalities[x], self.cardinalities[y]
        xs, ys = self.codes[:, self._index[x]], self.codes[:, self._index[y]]
        if cond:
            _, strata = np.unique(self.codes[:, [self._index[v] for v in cond]], axis=0, return_inverse=True)
            strata = strata.reshape(-1)
            n_strata = int(strata.max()) + 1
        else:
            strata = np.zeros(self.n_samples, dtype=np.int64)
            n_strata = 1
        counts = np.bincount((strata * cx + xs) * cy + ys, minlength=n_strata * cx * cy).reshape(
            n_strata, cx, cy
        )
        n_sx = counts.sum(axis=2)  # (s, x)
        n_sy = counts.sum(axis=1)  # (s, y)
        n_s = n_sx.sum(axis=1)  # (s,)
        expected = n_sx[:, :, None] * n_sy[:, None, :] / n_s[:, None, None]
        pos = counts > 0
        g2 = float(2.0 * np.sum(counts[pos] * np.log(counts[pos] / expected[pos])))
        # empty-cell correction: only the levels of x and y that occur in a stratum count
        rows = (n_sx > 0).sum(axis=1)
        cols = (n_sy > 0).sum(axis=1)
        dof = int(np.sum(np.maximum(rows - 1, 0) * np.maximum(cols - 1, 0)))
        p = 1.0 if dof == 0 else float(stats.chi2.sf(max(g2, 0.0), dof))
        return GSquareStatistic(g2, dof, p)

    def _p_value(self, x: Node, y: Node, cond: tuple[Node, ...]) -> float:
        return self._g2(x, y, cond).p_value


class OracleCITest(CITest):
    """Exact CI answers from a known graph: d-separation (DAG) or m-separation (ADMG, MAG).

    p = 1.0 if x and y are separated given cond, else 0.0; `independent` is the separation itself.

    Parameters
    ----------
    graph : DAG, ADMG or MAG
    observed : iterable, optional
        The variables a caller may query (default: every node); the others are latent.
    """

    def __init__(self, graph: DAG | ADMG | MAG, observed: Iterable[Node] | None = None) -> None:
        if not isinstance(graph, (DAG, ADMG, MAG)):
            raise TypeError(f"OracleCITest: graph must be a DAG, ADMG or MAG, got {type(graph).__name__}")
        obs = list(graph.nodes) if observed is None else list(observed)
        unknown = [v for v in obs if v not in graph]
        if unknown:
            raise ValueError(f"OracleCITest: observed variables {unknown[:5]!r} are not nodes of the graph")
        super().__init__(obs, alpha=0.5)
        self.graph = graph
        if isinstance(graph, DAG):
            self._sep = graph.d_separated
        else:
            self._sep = graph.m_separated

    def _p_value(self, x: Node, y: Node, cond: tuple[Node, ...]) -> float:
        return 1.0 if self._sep(x, y, list(cond)) else 0.0  # a list: always a set of nodes, never one

    def _decide(self, p: float) -> bool:
        return p == 1.0
