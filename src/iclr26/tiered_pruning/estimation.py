"""Estimation: from an identified estimand and data to a number (issue 4, item 6).

- Discrete data: plug-in. Every P(a | b) in the estimand is replaced by the empirical conditional
  frequency, so the estimate of P(y | do(x), z) is the estimand evaluated on the empirical
  distribution (`estimate_discrete`). A conditional on an event no row shows raises
  `ZeroProbabilityError` naming the term and the values.
- Linear-Gaussian data: when the estimand is an adjustment formula Σ_z P(y | x, z) P(z)
  (back-door; Pearl 2009, Thm. 3.3.2), E[Y | do(x)] is linear in x with slope equal to the
  coefficient of x in the least-squares regression of Y on (X, Z) (`estimate_linear_ace`).
- `average_causal_effect` picks one of the two from the column types.

ID can return an estimand with free variables outside the query, e.g. r in the napkin's
[Σ_w P(w) P(x, y | r, w)] / [Σ_w P(w) P(x | r, w)]: the effect is the same for every value of such
variables (ID's line 3 moves them into the intervention set), so we average the estimand over their
observed distribution, Σ_e P(e) · estimand (see `marginalized_estimand`), which is still exact in the
population and uses all the data.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Literal

import numpy as np
import pandas as pd

from iclr26.core.validation import check_in
from iclr26.tiered_pruning.discrete import DiscreteDistribution, EmpiricalDistribution
from iclr26.tiered_pruning.estimand import (
    Expr,
    Prob,
    Product,
    Sum,
    evaluate,
    prenex,
    product,
    summation,
    variables_of,
)
from iclr26.tiered_pruning.graphs import Node
from iclr26.tiered_pruning.identification import Identified, NotIdentifiable


def _check_identified(result: object, who: str) -> Identified:
    if isinstance(result, NotIdentifiable):
        raise ValueError(f"{who}: {result}; there is no estimand to estimate")
    if not isinstance(result, Identified):
        raise TypeError(f"{who}: expected the Identified result of identify(), got {type(result).__name__}")
    return result


def marginalized_estimand(result: Identified) -> Expr:
    """Σ_e P(e) · estimand over the estimand's free variables e outside the query (the estimand
    itself when it has none); equal to the estimand in the population for every value of e."""
    q = result.query
    extra = result.estimand.free_variables() - (q.outcomes | q.treatments | q.conditions)
    if not extra:
        return result.estimand
    return summation(extra, product(Prob(extra), result.estimand))


def estimate_discrete(
    result: Identified,
    data: pd.DataFrame | DiscreteDistribution,
    values: Mapping[Node, Hashable] | None = None,
) -> pd.Series:
    """Plug-in estimate of P(y | do(x), z) from discrete data.

    Parameters
    ----------
    result : Identified
        The output of `identify` for an identifiable query.
    data : DataFrame of integer / boolean / categorical columns, or a DiscreteDistribution
        Must contain every variable of the estimand and of the query.
    values : mapping, optional
        Fix some query variables, e.g. {"x": 1}; the others range over their observed states.

    Returns
    -------
    Series named "p", indexed by the (remaining) outcome, treatment and condition values.
    """
    result = _check_identified(result, "estimate_discrete")
    q = result.query
    dist = data if isinstance(data, DiscreteDistribution) else _empirical(data, result)
    query_vars = [v for v in dist.variables if v in q.outcomes] + [
        v for v in dist.variables if v in q.treatments | q.conditions and v not in q.outcomes
    ]
    values = dict(values or {})
    outside = [v for v in values if v not in query_vars]
    if outside:
        raise ValueError(
            f"estimate_discrete: values name {outside!r}, which are not query variables {query_vars!r}"
        )
    f = evaluate(marginalized_estimand(result), dist, values)
    keep = [v for v in query_vars if v not in values]
    arr = f.expand(keep, {v: dist.cardinality(v) for v in keep})
    if not keep:
        return pd.Series([float(arr)], name="p")
    if len(keep) == 1:
        index = pd.Index(list(dist.states(keep[0])), name=keep[0])
    else:
        index = pd.MultiIndex.from_product([list(dist.states(v)) for v in keep], names=keep)
    return pd.Series(arr.reshape(-1), index=index, name="p")


def _empirical(data: pd.DataFrame, result: Identified) -> EmpiricalDistribution:
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    q = result.query
    needed = variables_of(result.estimand) | q.outcomes | q.treatments | q.conditions
    missing = sorted(str(v) for v in needed if v not in data.columns)
    if missing:
        raise ValueError(
            f"data has no column(s) {missing}; the estimand needs them (columns: {list(data.columns)})"
        )
    return EmpiricalDistribution(data, [c for c in data.columns if c in needed])


def adjustment_set(result: Identified) -> frozenset[Node] | None:
    """Z if the (marginalized) estimand of P(y | do(x)) is an adjustment formula Σ_z P(y | x', z) P(z)
    with x' ⊆ x (treatments outside x' have no effect), else None. Conditional queries: None."""
    found = _adjustment(_check_identified(result, "adjustment_set"))
    return None if found is None else found[0]


def _adjustment(result: Identified) -> tuple[frozenset[Node], frozenset[Node]] | None:
    """(Z, x') of an adjustment formula Σ_z P(y | x', z) P(z), or None."""
    q = result.query
    if q.conditions:
        return None
    e = prenex(marginalized_estimand(result))
    if isinstance(e, Prob):  # P(y | x'): no confounding to adjust for
        ok = e.vars == q.outcomes and e.given <= q.treatments
        return (frozenset(), e.given) if ok else None
    if not (isinstance(e, Sum) and isinstance(e.expr, Product) and len(e.expr.factors) == 2):
        return None
    z = e.over
    for f_y, f_z in (e.expr.factors, e.expr.factors[::-1]):
        if (
            isinstance(f_y, Prob)
            and isinstance(f_z, Prob)
            and not f_z.given
            and f_z.vars == z
            and f_y.vars == q.outcomes
            and z <= f_y.given
            and (f_y.given - z) <= q.treatments
        ):
            return z, f_y.given - z
    return None


def estimate_linear_ace(result: Identified, data: pd.DataFrame) -> dict[Node, float]:
    """The average causal effect of a unit change of each treatment on the single outcome, assuming a
    linear model: regression of Y on (X', Z) for the adjustment formula Σ_z P(y | x', z) P(z) of the
    estimand; treatments outside x' (no effect on Y, e.g. descendants of Y) get exactly 0.

    Raises ValueError if the estimand is not an adjustment formula (e.g. the front-door formula).
    """
    result = _check_identified(result, "estimate_linear_ace")
    q = result.query
    if len(q.outcomes) != 1:
        raise ValueError(f"estimate_linear_ace: needs one outcome, the query {q} has {len(q.outcomes)}")
    found = _adjustment(result)
    if found is None:
        raise ValueError(
            f"estimate_linear_ace: the estimand of {q}, {result.estimand}, is not an adjustment formula "
            "Σ_z P(y | x, z) P(z); linear estimation covers back-door adjustment only "
            "(discretize the data and use estimate_discrete for the general ID formula)"
        )
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"estimate_linear_ace: data must be a pandas DataFrame, got {type(data).__name__}")
    z, x_used = found
    (y,) = q.outcomes
    order = {v: i for i, v in enumerate(data.columns)}
    xs = sorted(x_used, key=lambda v: order.get(v, -1))
    zs = sorted(z, key=lambda v: order.get(v, -1))
    used = [y, *xs, *zs]
    missing = [str(v) for v in used if v not in data.columns]
    if missing:
        raise ValueError(f"estimate_linear_ace: data has no column(s) {missing}")
    for v in used:
        if data[v].dtype.kind not in "iufb":
            raise TypeError(f"estimate_linear_ace: column {v!r} has non-numeric dtype {data[v].dtype}")
        if data[v].isna().any():
            raise ValueError(f"estimate_linear_ace: column {v!r} has missing values")
    design = np.column_stack([np.ones(len(data))] + [data[v].to_numpy(float) for v in [*xs, *zs]])
    coef, _, rank, _ = np.linalg.lstsq(design, data[y].to_numpy(float), rcond=None)
    if rank < design.shape[1]:
        raise ValueError(
            f"estimate_linear_ace: the regressors {[*xs, *zs]!r} (plus an intercept) are collinear; "
            "the coefficients are not determined"
        )
    effects = dict.fromkeys(sorted(q.treatments, key=lambda v: order.get(v, -1)), 0.0)
    effects.update({x: float(coef[1 + i]) for i, x in enumerate(xs)})
    return effects


def average_causal_effect(
    result: Identified,
    data: pd.DataFrame,
    treatment_values: tuple[Hashable, Hashable] | None = None,
    method: Literal["auto", "discrete", "linear"] = "auto",
) -> float:
    """E[Y | do(x = b)] − E[Y | do(x = a)] for one treatment and one numeric outcome.

    method "discrete": plug-in (treatment_values default to the smallest and largest observed x);
    "linear": the slope of a unit change (treatment_values must be None); "auto": "discrete" when
    every column the estimand uses is integer or boolean, else "linear".
    """
    check_in("average_causal_effect: method", method, ("auto", "discrete", "linear"))
    result = _check_identified(result, "average_causal_effect")
    q = result.query
    if len(q.treatments) != 1 or len(q.outcomes) != 1 or q.conditions:
        raise ValueError(
            f"average_causal_effect: needs one treatment, one outcome and no conditions, got {q}; "
            "use estimate_discrete for joint or conditional effects"
        )
    (x,), (y,) = q.treatments, q.outcomes
    if method == "auto":
        cols = [c for c in data.columns if c in variables_of(result.estimand) | {x, y}]
        method = "discrete" if all(data[c].dtype.kind in "iub" for c in cols) else "linear"
    if method == "linear":
        if treatment_values is not None:
            raise ValueError("average_causal_effect: treatment_values apply to method='discrete' only")
        return estimate_linear_ace(result, data)[x]
    dist = _empirical(data, result)
    states = dist.states(x)
    a, b = treatment_values if treatment_values is not None else (states[0], states[-1])
    if not all(isinstance(s, int | float | bool | np.number) for s in dist.states(y)):
        raise TypeError(
            f"average_causal_effect: outcome {y!r} has non-numeric states {list(dist.states(y))!r}"
        )
    ys = np.asarray(dist.states(y), dtype=float)
    means = [float(estimate_discrete(result, dist, {x: t}).to_numpy() @ ys) for t in (a, b)]
    return means[1] - means[0]
