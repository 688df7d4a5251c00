"""Discrete distributions: factors (probability tables over named variables), explicit joint tables,
empirical distributions from data, and discrete structural causal models with exact interventions.

The ID/IDC estimands of `identification.py` are functionals of the observational distribution;
`estimand.evaluate` computes them on any `DiscreteDistribution`:

- `JointTable`: an explicit joint table (exact evaluation, e.g. the observed margin of a SEM);
- `EmpiricalDistribution`: relative frequencies of a DataFrame of discrete columns (plug-in estimate).

`DiscreteSEM` is a discrete causal model over a DAG with latents; `interventional` computes the true
P(y | do(x), z) by the truncated factorisation Π_{v ∉ X} P(v | pa_v) (Pearl 2009, Eq. 3.10), the
reference the identification tests compare estimands with.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from iclr26.tiered_pruning.graphs import DAG, Node

_MAX_CELLS = 50_000_000  # largest probability table we agree to build


class ZeroProbabilityError(ValueError):
    """A conditional probability in an estimand conditions on an event of probability zero."""


# ---------------------------------------------------------------------------------------------
# factors
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Factor:
    """A non-negative table over named discrete variables: `values[i_1, ..., i_k]` for states i_j
    of `variables[j]` (state indices 0..card−1)."""

    variables: tuple[Node, ...]
    values: np.ndarray

    def __post_init__(self) -> None:
        if self.values.ndim != len(self.variables):
            raise ValueError(
                f"Factor: values has {self.values.ndim} axes but {len(self.variables)} variables were named"
            )
        if len(set(self.variables)) < len(self.variables):
            raise ValueError(f"Factor: variables must be distinct, got {self.variables!r}")

    @staticmethod
    def scalar(x: float) -> Factor:
        """A factor over no variables."""
        return Factor((), np.asarray(float(x)))

    def cardinality(self, v: Node) -> int:
        """Number of states of v in this factor."""
        return int(self.values.shape[self.variables.index(v)])

    def aligned(self, variables: Sequence[Node]) -> np.ndarray:
        """The values transposed to `variables`' order, with a length-1 axis for each variable this
        factor does not have (ready for numpy broadcasting)."""
        missing = [v for v in self.variables if v not in variables]
        if missing:
            raise ValueError(f"Factor.aligned: variables {missing!r} are not in the target {variables!r}")
        mine = [v for v in variables if v in self.variables]
        arr = np.transpose(self.values, [self.variables.index(v) for v in mine])
        shape = [arr.shape[mine.index(v)] if v in self.variables else 1 for v in variables]
        return arr.reshape(shape)

    def expand(self, variables: Sequence[Node], cards: Mapping[Node, int]) -> np.ndarray:
        """The values as a full array over `variables` (broadcast along variables it lacks)."""
        return np.broadcast_to(self.aligned(variables), [cards[v] for v in variables]).copy()

    def _union(self, other: Factor) -> tuple[Node, ...]:
        return self.variables + tuple(v for v in other.variables if v not in self.variables)

    def __mul__(self, other: Factor) -> Factor:
        vs = self._union(other)
        return Factor(vs, self.aligned(vs) * other.aligned(vs))

    def divide(self, other: Factor) -> tuple[Factor, np.ndarray]:
        """self / other, with 0 where other is 0; also the boolean mask (over the result's variables)
        of cells where other is 0."""
        vs = self._union(other)
        num, den = np.broadcast_arrays(self.aligned(vs), other.aligned(vs))
        zero = den == 0
        out = np.divide(num, den, out=np.zeros(num.shape), where=~zero)
        return Factor(vs, out), zero

    def sum_out(self, variables: Iterable[Node]) -> Factor:
        """Σ over the given variables (those this factor lacks are ignored)."""
        drop = [v for v in variables if v in self.variables]
        if not drop:
            return self
        axes = tuple(self.variables.index(v) for v in drop)
        return Factor(tuple(v for v in self.variables if v not in drop), self.values.sum(axis=axes))

    def marginal(self, variables: Sequence[Node]) -> Factor:
        """The factor summed down to `variables` (all must be present), in that order."""
        variables = tuple(variables)
        missing = [v for v in variables if v not in self.variables]
        if missing:
            raise ValueError(f"Factor.marginal: {missing!r} not in {self.variables!r}")
        f = self.sum_out([v for v in self.variables if v not in variables])
        return Factor(variables, f.aligned(variables))

    def restrict(self, assignment: Mapping[Node, int]) -> Factor:
        """The slice at the given states (state indices) of the variables it has."""
        idx: list[object] = []
        keep = []
        for v in self.variables:
            if v in assignment:
                idx.append(int(assignment[v]))
            else:
                idx.append(slice(None))
                keep.append(v)
        if len(keep) == len(self.variables):
            return self
        return Factor(tuple(keep), np.asarray(self.values[tuple(idx)]))


# ---------------------------------------------------------------------------------------------
# distributions
# ---------------------------------------------------------------------------------------------


class DiscreteDistribution(ABC):
    """A joint distribution over named discrete variables, queried through its marginals."""

    variables: tuple[Node, ...]

    @abstractmethod
    def states(self, v: Node) -> tuple[Hashable, ...]:
        """The labels of v's states, in state-index order."""

    @abstractmethod
    def _marginal(self, variables: tuple[Node, ...]) -> Factor:
        """P(variables) as a Factor in this order (variables already validated)."""

    def cardinality(self, v: Node) -> int:
        """Number of states of v."""
        return len(self.states(v))

    def marginal(self, variables: Iterable[Node]) -> Factor:
        """The marginal table P(variables), axes in the given order."""
        vs = tuple(variables)
        unknown = [v for v in vs if v not in self.variables]
        if unknown:
            raise ValueError(
                f"{type(self).__name__}.marginal: unknown variable(s) {unknown!r}; "
                f"the distribution has {list(self.variables)!r}"
            )
        if len(set(vs)) < len(vs):
            raise ValueError(f"{type(self).__name__}.marginal: repeated variable in {vs!r}")
        cells = math.prod(self.cardinality(v) for v in vs)
        if cells > _MAX_CELLS:
            raise ValueError(
                f"{type(self).__name__}.marginal: a table over {vs!r} would have {cells:,} cells "
                f"(limit {_MAX_CELLS:,}); the estimand involves too many variables for a plug-in table"
            )
        return self._marginal(vs)

    def state_index(self, v: Node, label: Hashable) -> int:
        """The index of state `label` of v; ValueError naming v and its states if there is none."""
        st = self.states(v)
        try:
            return st.index(label)
        except ValueError:
            raise ValueError(f"variable {v!r} has no state {label!r}; its states are {list(st)!r}") from None


class JointTable(DiscreteDistribution):
    """An explicit joint probability table (states are 0..card−1)."""

    def __init__(self, factor: Factor, atol: float = 1e-9) -> None:
        vals = np.asarray(factor.values, dtype=float)
        if (vals < 0).any() or not np.isclose(vals.sum(), 1.0, atol=atol):
            raise ValueError(
                f"JointTable: values must be non-negative and sum to 1, got sum {vals.sum():.6g} "
                f"and minimum {vals.min():.3g}"
            )
        self.factor = Factor(factor.variables, vals)
        self.variables = factor.variables

    def states(self, v: Node) -> tuple[Hashable, ...]:
        return tuple(range(self.factor.cardinality(v)))

    def _marginal(self, variables: tuple[Node, ...]) -> Factor:
        return self.factor.marginal(variables)


class EmpiricalDistribution(DiscreteDistribution):
    """Relative frequencies of the rows of a DataFrame of discrete (integer, boolean or categorical)
    columns. A variable's states are its observed values, sorted; marginals are cached."""

    def __init__(self, data: pd.DataFrame, variables: Iterable[Node] | None = None) -> None:
        if not isinstance(data, pd.DataFrame):
            raise TypeError(
                f"EmpiricalDistribution: data must be a pandas DataFrame, got {type(data).__name__}"
            )
        if len(data) == 0:
            raise ValueError("EmpiricalDistribution: data has no rows")
        cols = list(data.columns) if variables is None else list(variables)
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise ValueError(
                f"EmpiricalDistribution: column(s) {missing!r} are not in the data; "
                f"it has {list(data.columns)!r}"
            )
        self.variables = tuple(cols)
        self.n_samples = len(data)
        self._states: dict[Node, tuple[Hashable, ...]] = {}
        self._codes: dict[Node, np.ndarray] = {}
        for c in cols:
            col = data[c]
            if col.isna().any():
                raise ValueError(
                    f"EmpiricalDistribution: column {c!r} has missing values; drop or impute them"
                )
            kind = col.dtype.kind
            if not (kind in "iub" or isinstance(col.dtype, pd.CategoricalDtype)):
                raise TypeError(
                    f"EmpiricalDistribution: column {c!r} has dtype {col.dtype}; discrete plug-in estimation "
                    "needs integer, boolean or categorical columns (discretize continuous data first)"
                )
            codes, uniques = pd.factorize(col, sort=True)
            self._states[c] = tuple(uniques.tolist())
            self._codes[c] = codes.astype(np.int64)
        self._cache: dict[tuple[Node, ...], Factor] = {}

    def states(self, v: Node) -> tuple[Hashable, ...]:
        return self._states[v]

    def _marginal(self, variables: tuple[Node, ...]) -> Factor:
        key = tuple(sorted(variables, key=self.variables.index))
        if key not in self._cache:
            shape = tuple(self.cardinality(v) for v in key)
            if key:
                flat = np.ravel_multi_index([self._codes[v] for v in key], shape)
                counts = np.bincount(flat, minlength=math.prod(shape)).reshape(shape)
            else:
                counts = np.asarray(self.n_samples)
            self._cache[key] = Factor(key, counts / self.n_samples)
        return self._cache[key].marginal(variables)


# ---------------------------------------------------------------------------------------------
# a discrete causal model with exact interventions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiscreteSEM:
    """A discrete causal Bayesian network: `cpts[v]` is P(v | pa_v) as a Factor over (parents..., v).

    Nodes may be latent: pass `latents` to `observational` / `interventional` to marginalize them.
    """

    dag: DAG
    cpts: dict[Node, Factor]
    _cards: dict[Node, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        cards: dict[Node, int] = {}
        for v in self.dag.nodes:
            if v not in self.cpts:
                raise ValueError(f"DiscreteSEM: no CPT for node {v!r}")
            f = self.cpts[v]
            if f.variables[-1] != v or set(f.variables[:-1]) != self.dag.parents(v):
                raise ValueError(
                    f"DiscreteSEM: CPT of {v!r} must be over (parents..., {v!r}), got {f.variables!r}"
                )
            if not np.allclose(f.values.sum(axis=-1), 1.0):
                raise ValueError(f"DiscreteSEM: CPT of {v!r} does not sum to 1 over {v!r}")
            cards[v] = f.values.shape[-1]
        for v, f in self.cpts.items():
            for p in f.variables[:-1]:
                if f.cardinality(p) != cards[p]:
                    raise ValueError(f"DiscreteSEM: CPT of {v!r} gives {p!r} {f.cardinality(p)} states")
        object.__setattr__(self, "_cards", cards)

    def cardinality(self, v: Node) -> int:
        """Number of states of v."""
        return self._cards[v]

    def _product_marginal(self, keep: Sequence[Node], skip: Iterable[Node] = ()) -> Factor:
        """Σ over the nodes not in `keep` of Π_{v ∉ skip} P(v | pa_v), a Factor over `keep` in that
        order (nodes in `skip` stay free arguments, each a factor of ones). Summed by variable
        elimination (`np.einsum` with a contraction path), never as the full joint over every node."""
        skip, keep = set(skip), tuple(keep)
        order = tuple(self.dag.nodes)
        if len(order) > 52:  # einsum's index limit: the full joint, as a product of aligned CPTs
            arr = np.ones([self._cards[v] for v in order])
            for v in order:
                if v not in skip:
                    arr = arr * self.cpts[v].aligned(order)
            return Factor(order, arr).marginal(keep)
        index = {v: i for i, v in enumerate(order)}
        operands: list[Any] = []
        for v in order:
            if v in skip:
                operands += [np.ones(self._cards[v]), [index[v]]]
            else:
                f = self.cpts[v]
                operands += [f.values, [index[u] for u in f.variables]]
        return Factor(keep, np.einsum(*operands, [index[v] for v in keep], optimize=True))

    def observational(self, latents: Iterable[Node] = ()) -> JointTable:
        """The joint distribution of the non-latent nodes."""
        lat = set(latents)
        return JointTable(self._product_marginal([v for v in self.dag.nodes if v not in lat]))

    def interventional(
        self, outcomes: Iterable[Node], treatments: Iterable[Node] = (), conditions: Iterable[Node] = ()
    ) -> Factor:
        """P(y | do(x), z) as a Factor over (y..., x..., z...), by the truncated factorisation.

        Cells whose conditioning event {do(x), z} has probability zero are NaN.
        """
        ys, xs, zs = tuple(outcomes), tuple(treatments), tuple(conditions)
        for name, vs in (("outcomes", ys), ("treatments", xs), ("conditions", zs)):
            unknown = [v for v in vs if v not in self.dag]
            if unknown:
                raise ValueError(f"DiscreteSEM.interventional: unknown {name} {unknown!r}")
        if len(set(ys + xs + zs)) < len(ys + xs + zs):
            raise ValueError(
                f"DiscreteSEM.interventional: outcomes {ys!r}, treatments {xs!r} and conditions {zs!r} "
                "must be disjoint"
            )
        # Π_{v ∉ X} P(v | pa_v) with x as free arguments: P(v \ x | do(x)) (Eq. 3.10 of Pearl 2009)
        joint = self._product_marginal(ys + xs + zs, skip=xs)  # P(y, z | do(x)) as a function of (y, x, z)
        den = joint.sum_out(ys)
        with np.errstate(invalid="ignore", divide="ignore"):
            vals = joint.values / den.aligned(joint.variables)
        return Factor(joint.variables, vals)

    def sample(self, n_samples: int, seed: int | np.random.Generator = 0) -> pd.DataFrame:
        """n_samples ancestral draws of every node (latents included; select the observed columns)."""
        if not isinstance(n_samples, int) or n_samples < 1:
            raise ValueError(f"DiscreteSEM.sample: n_samples must be an int >= 1, got {n_samples!r}")
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        cols: dict[Node, np.ndarray] = {}
        for v in self.dag.topological_order():
            f = self.cpts[v]
            idx = tuple(cols[p] for p in f.variables[:-1])
            prob = f.values[idx] if idx else np.broadcast_to(f.values, (n_samples, f.values.shape[-1]))
            u = rng.random(n_samples)[:, None]
            cols[v] = (u > np.cumsum(prob, axis=1)).sum(axis=1).clip(max=prob.shape[1] - 1)
        return pd.DataFrame({v: cols[v] for v in self.dag.nodes})


def random_discrete_sem(
    dag: DAG,
    seed: int | np.random.Generator = 0,
    n_states: int | Mapping[Node, int] = 2,
    strength: float = 1.5,
) -> DiscreteSEM:
    """A random DiscreteSEM with the log-linear CPTs of `simulate.sample_discrete`:
    P(v = k | pa) ∝ exp(b_vk + Σ_p E_vp[pa_p, k]), each state of a parent pushing v towards a different
    state (cycled when the parent has more states than v).
    Every CPT entry is positive, so every conditional of the joint is defined."""
    if strength <= 0:
        raise ValueError(f"random_discrete_sem: strength must be > 0, got {strength}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    cards = {v: (n_states[v] if isinstance(n_states, Mapping) else n_states) for v in dag.nodes}
    bad = {v: k for v, k in cards.items() if not (isinstance(k, int | np.integer) and k >= 2)}
    if bad:
        raise ValueError(f"random_discrete_sem: n_states must be ints >= 2, got {bad!r}")
    index = {v: i for i, v in enumerate(dag.nodes)}
    cpts: dict[Node, Factor] = {}
    for v in dag.topological_order():
        pa = tuple(sorted(dag.parents(v), key=index.__getitem__))
        k = cards[v]
        shape = [cards[p] for p in pa] + [k]
        logits = np.broadcast_to(rng.normal(0.0, 0.5, k), shape).copy()
        for j, p in enumerate(pa):
            w = rng.uniform(strength / 2, strength)
            effect = np.full((cards[p], k), -w / (k - 1))
            # distinct targets (cycled if the parent has more states): every parent state matters
            effect[np.arange(cards[p]), np.resize(rng.permutation(k), cards[p])] = w
            view = [1] * len(shape)
            view[j], view[-1] = cards[p], k
            logits += effect.reshape(view)
        prob = np.exp(logits - logits.max(axis=-1, keepdims=True))
        cpts[v] = Factor((*pa, v), prob / prob.sum(axis=-1, keepdims=True))
    return DiscreteSEM(dag, cpts)
