"""Symbolic estimands: expressions over the observational distribution P(v) of an ADMG.

The ID and IDC algorithms (`identification.py`) return these trees. Nodes:

- `Prob(vars, given)`: P(vars | given) of the observational distribution;
- `Product(factors)`, `Sum(over, expr)` (Σ over the values of `over`), `Fraction(num, den)`, `ONE`.

Variables that are not bound by a `Sum` are free: for P(y | do(x), z) they are (a subset of) y ∪ x ∪ z.
The smart constructors `product`, `summation`, `fraction` apply only exact identities
(chain rule, Σ_a P(a, b | c) = P(b | c), cancellation of common factors, P(a, b | c) / P(b | c) =
P(a | b, c)), so a simplified estimand always has the value of the unsimplified one.

`evaluate(expr, distribution, values)` computes an estimand on a `DiscreteDistribution` (an exact
joint table or the empirical distribution of data) as a `Factor` over its free variables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from iclr26.tiered_pruning.discrete import DiscreteDistribution, Factor, ZeroProbabilityError
from iclr26.tiered_pruning.graphs import Node


def _key(v: Node) -> tuple[str, str]:
    return (type(v).__name__, str(v))


def _names(vs: Iterable[Node], names: Mapping[Node, str] | None = None) -> str:
    names = names or {}
    return ", ".join(names.get(v, str(v)) for v in sorted(vs, key=_key))


@dataclass(frozen=True)
class _Fmt:
    """Printing context: display names of bound variables, names in scope, output flavour."""

    names: Mapping[Node, str]
    in_use: frozenset[str]
    latex: bool


class Expr:
    """Base class of estimand expressions (immutable, hashable, compared structurally).

    `str()` gives a plain rendering; a bound variable that would read like a free one (or like a
    query variable passed as `reserved`) is printed with a prime: Σ_{x'} P(x') P(y | m, x').
    """

    def free_variables(self) -> frozenset[Node]:
        """Variables not bound by a Σ."""
        raise NotImplementedError

    def _fmt(self, ctx: _Fmt, in_product: bool) -> str:
        raise NotImplementedError

    def _top(self, reserved: Iterable[Node], latex: bool) -> str:
        in_use = frozenset(str(v) for v in self.free_variables() | frozenset(reserved))
        return self._fmt(_Fmt({}, in_use, latex), False)

    def to_string(self, reserved: Iterable[Node] = ()) -> str:
        """Plain rendering; bound variables named like `reserved` ones get primes."""
        return self._top(reserved, False)

    def to_latex(self, reserved: Iterable[Node] = ()) -> str:
        """A LaTeX rendering (e.g. for a notebook or the README)."""
        return self._top(reserved, True)

    def __str__(self) -> str:
        return self.to_string()


@dataclass(frozen=True, repr=False)
class Prob(Expr):
    """P(vars | given) of the observational distribution."""

    vars: frozenset[Node]
    given: frozenset[Node] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "vars", frozenset(self.vars))
        object.__setattr__(self, "given", frozenset(self.given))
        if not self.vars:
            raise ValueError("Prob: needs at least one variable (use ONE for the empty product)")
        if self.vars & self.given:
            raise ValueError(
                f"Prob: variables {_names(self.vars & self.given)} are both outcome and condition"
            )

    def free_variables(self) -> frozenset[Node]:
        return self.vars | self.given

    def _fmt(self, ctx: _Fmt, in_product: bool) -> str:
        bar = r" \mid " if ctx.latex else " | "
        given = f"{bar}{_names(self.given, ctx.names)}" if self.given else ""
        return f"P({_names(self.vars, ctx.names)}{given})"

    def __repr__(self) -> str:
        return f"Prob({self})"


@dataclass(frozen=True, repr=False)
class _One(Expr):
    def free_variables(self) -> frozenset[Node]:
        return frozenset()

    def _fmt(self, ctx: _Fmt, in_product: bool) -> str:
        return "1"

    def __repr__(self) -> str:
        return "ONE"


ONE = _One()


@dataclass(frozen=True, repr=False)
class Product(Expr):
    """Π of factors (build with `product`, which flattens and simplifies)."""

    factors: tuple[Expr, ...]

    def free_variables(self) -> frozenset[Node]:
        return frozenset().union(*(f.free_variables() for f in self.factors))

    def _fmt(self, ctx: _Fmt, in_product: bool) -> str:
        if ctx.latex:
            return " ".join(
                rf"\left({f._fmt(ctx, False)}\right)" if isinstance(f, Sum) else f._fmt(ctx, True)
                for f in self.factors
            )
        return " ".join(f._fmt(ctx, True) for f in self.factors)

    def __repr__(self) -> str:
        return f"Product({self})"


@dataclass(frozen=True, repr=False)
class Sum(Expr):
    """Σ_{over} expr: the sum over all joint values of the variables `over`."""

    over: frozenset[Node]
    expr: Expr

    def __post_init__(self) -> None:
        object.__setattr__(self, "over", frozenset(self.over))

    def free_variables(self) -> frozenset[Node]:
        return self.expr.free_variables() - self.over

    def _fmt(self, ctx: _Fmt, in_product: bool) -> str:
        names = dict(ctx.names)
        in_use = set(ctx.in_use)
        for v in sorted(self.over, key=_key):
            name = str(v)
            while name in in_use:
                name += "'"
            names[v] = name
            in_use.add(name)
        inner = _Fmt(names, frozenset(in_use), ctx.latex)
        bound = _names(self.over, names)
        if ctx.latex:
            return rf"\sum_{{{bound}}} {self.expr._fmt(inner, True)}"
        s = f"Σ_{{{bound}}} {self.expr._fmt(inner, True)}"
        return f"[{s}]" if in_product else s

    def __repr__(self) -> str:
        return f"Sum({self})"


@dataclass(frozen=True, repr=False)
class Fraction(Expr):
    """numerator / denominator."""

    numerator: Expr
    denominator: Expr

    def free_variables(self) -> frozenset[Node]:
        return self.numerator.free_variables() | self.denominator.free_variables()

    def _fmt(self, ctx: _Fmt, in_product: bool) -> str:
        num, den = self.numerator._fmt(ctx, False), self.denominator._fmt(ctx, False)
        if ctx.latex:
            return rf"\frac{{{num}}}{{{den}}}"
        num = num if isinstance(self.numerator, Prob) else f"[{num}]"
        den = den if isinstance(self.denominator, Prob) else f"[{den}]"
        return f"({num} / {den})" if in_product else f"{num} / {den}"

    def __repr__(self) -> str:
        return f"Fraction({self})"


# ---------------------------------------------------------------------------------------------
# smart constructors: exact identities only
# ---------------------------------------------------------------------------------------------


def _factors(e: Expr) -> list[Expr]:
    if e is ONE:
        return []
    return list(e.factors) if isinstance(e, Product) else [e]


def _merge_chain(fs: list[Expr]) -> list[Expr]:
    """Chain rule: P(a | c) P(b | a, c) = P(a, b | c), applied until nothing merges."""
    changed = True
    while changed:
        changed = False
        for i, fi in enumerate(fs):
            if not isinstance(fi, Prob):
                continue
            for j, fj in enumerate(fs):
                if (
                    j != i
                    and isinstance(fj, Prob)
                    and fj.given == fi.given | fi.vars
                    and not (fj.vars & fi.free_variables())
                ):
                    fs[i] = Prob(fi.vars | fj.vars, fi.given)
                    del fs[j]
                    changed = True
                    break
            if changed:
                break
    return fs


def product(*factors: Expr) -> Expr:
    """Π factors, flattened, without ONEs, with chain-rule merging (ONE if nothing is left)."""
    fs: list[Expr] = []
    for f in factors:
        fs.extend(_factors(f))
    fs = _merge_chain(fs)
    if not fs:
        return ONE
    return fs[0] if len(fs) == 1 else Product(tuple(fs))


def summation(over: Iterable[Node], expr: Expr) -> Expr:
    """Σ_{over} expr, simplified by marginalization (Σ_a P(a, b | c) = P(b | c)) and by pulling factors
    that do not involve `over` out of the sum."""
    rng = frozenset(over)
    if not rng:
        return expr
    if isinstance(expr, Sum) and not (expr.over & rng):
        return summation(rng | expr.over, expr.expr)
    fs = _factors(expr)
    rest = set(rng)
    progress = True
    while progress:
        progress = False
        for r in sorted(rest, key=_key):
            holders = [f for f in fs if r in f.free_variables()]
            if len(holders) == 1 and isinstance(holders[0], Prob) and r in holders[0].vars:
                # Σ_r P(r, a | c) = P(a | c) when no other factor mentions r
                f = holders[0]
                k = fs.index(f)
                if f.vars == {r}:
                    del fs[k]
                else:
                    fs[k] = Prob(f.vars - {r}, f.given)
                rest.discard(r)
                progress = True
                break
    if not rest:
        return product(*fs)
    # a variable of `rest` that no factor mentions multiplies the value by its number of states:
    # kept as an explicit Σ (ID never produces one)
    inside = [f for f in fs if f.free_variables() & rest]
    outside = [f for f in fs if not (f.free_variables() & rest)]
    return product(*outside, Sum(frozenset(rest), product(*inside)))


def fraction(numerator: Expr, denominator: Expr) -> Expr:
    """numerator / denominator with common factors cancelled and P(a, b | c) / P(b | c) = P(a | b, c)."""
    num, den = _factors(numerator), _factors(denominator)
    common = Counter(num) & Counter(den)
    if common:
        num = _remove(num, common)
        den = _remove(den, common)
    if not den:
        return product(*num)
    # P(a, b | c) / P(b | c) = P(a | b, c)
    for d in list(den):
        if not isinstance(d, Prob):
            continue
        for k, n in enumerate(num):
            if isinstance(n, Prob) and n.given == d.given and d.vars < n.vars:
                num[k] = Prob(n.vars - d.vars, n.given | d.vars)
                den.remove(d)
                break
    if not den:
        return product(*num)
    return Fraction(product(*num), product(*den))


def prenex(expr: Expr) -> Expr:
    """The same value with sums pulled out of products where no variable is captured:
    f · Σ_r g = Σ_r f g when r does not occur in f (then chain-rule merging applies across the sum).
    Used to recognise adjustment formulas; the ID output itself keeps the textbook nesting."""
    if isinstance(expr, Sum):
        return summation(expr.over, prenex(expr.expr))
    if isinstance(expr, Fraction):
        return fraction(prenex(expr.numerator), prenex(expr.denominator))
    if not isinstance(expr, Product):
        return expr
    fs = [prenex(f) for f in expr.factors]
    bound: set[Node] = set()
    out: list[Expr] = []
    for i, f in enumerate(fs):
        others = frozenset().union(*(variables_of(g) for j, g in enumerate(fs) if j != i))
        if isinstance(f, Sum) and not (f.over & (others | bound)):
            bound |= f.over
            out.append(f.expr)
        else:
            out.append(f)
    return summation(bound, product(*out)) if bound else product(*out)


def variables_of(e: Expr) -> frozenset[Node]:
    """Every variable of e, free or bound."""
    if isinstance(e, Sum):
        return e.over | variables_of(e.expr)
    if isinstance(e, Product):
        return frozenset().union(*(variables_of(f) for f in e.factors))
    if isinstance(e, Fraction):
        return variables_of(e.numerator) | variables_of(e.denominator)
    return e.free_variables()


def _remove(fs: list[Expr], common: Counter[Expr]) -> list[Expr]:
    left = Counter(common)
    out = []
    for f in fs:
        if left[f] > 0:
            left[f] -= 1
        else:
            out.append(f)
    return out


# ---------------------------------------------------------------------------------------------
# evaluation on a discrete distribution
# ---------------------------------------------------------------------------------------------


def _event(dist: DiscreteDistribution, f: Factor, zero: np.ndarray, fixed: Mapping[Node, int]) -> str:
    """A readable description of the first cell where `zero` holds (plus the fixed values)."""
    cell = np.argwhere(np.broadcast_to(zero, f.values.shape))[0]
    parts = {v: dist.states(v)[int(i)] for v, i in zip(f.variables, cell, strict=True)}
    parts.update({v: dist.states(v)[i] for v, i in fixed.items()})
    return ", ".join(f"{v}={parts[v]!r}" for v in sorted(parts, key=_key))


def evaluate(
    expr: Expr, distribution: DiscreteDistribution, values: Mapping[Node, Hashable] | None = None
) -> Factor:
    """The value of `expr` on a discrete distribution, as a Factor over its free variables that are
    not fixed in `values` (state labels, e.g. {"x": 1}).

    Raises ZeroProbabilityError naming the term and the event when a needed conditional
    probability conditions on an event of probability zero.
    """
    fixed = {}
    for v, label in (values or {}).items():
        if v not in distribution.variables:
            raise ValueError(
                f"evaluate: values name {v!r}, which is not a variable of the distribution "
                f"({list(distribution.variables)!r})"
            )
        fixed[v] = distribution.state_index(v, label)
    free = expr.free_variables()
    unknown = [v for v in free if v not in distribution.variables]
    if unknown:
        raise ValueError(
            f"evaluate: the estimand uses {sorted(map(str, unknown))}, which the distribution does not have "
            f"(it has {list(distribution.variables)!r})"
        )
    return _eval(expr, distribution, {v: i for v, i in fixed.items() if v in free})


def _eval(e: Expr, dist: DiscreteDistribution, fixed: Mapping[Node, int]) -> Factor:
    if e is ONE:
        return Factor.scalar(1.0)
    if isinstance(e, Prob):
        order = [v for v in dist.variables if v in e.vars or v in e.given]
        joint = dist.marginal(order).restrict(fixed)
        if not e.given:
            return joint
        cond = dist.marginal([v for v in order if v in e.given]).restrict(fixed)
        out, zero = joint.divide(cond)
        if zero.any():
            event = _event(dist, cond, cond.values == 0, {k: i for k, i in fixed.items() if k in e.given})
            raise ZeroProbabilityError(
                f"{e}: the conditioning event {event} "
                "has probability zero, so this conditional is undefined (with data: no row has these values; "
                "collect more data, merge rare states or drop variables from the query)"
            )
        return out
    if isinstance(e, Product):
        out = Factor.scalar(1.0)
        for f in e.factors:
            out = out * _eval(f, dist, fixed)
        return out
    if isinstance(e, Sum):
        inner = _eval(e.expr, dist, {v: i for v, i in fixed.items() if v not in e.over})
        out = inner.sum_out(e.over)
        scale = float(np.prod([dist.cardinality(v) for v in e.over if v not in inner.variables]))
        return out if scale == 1.0 else Factor(out.variables, out.values * scale)
    if isinstance(e, Fraction):
        num = _eval(e.numerator, dist, fixed)
        den = _eval(e.denominator, dist, fixed)
        out, zero = num.divide(den)
        if zero.any():
            raise ZeroProbabilityError(
                f"the denominator {e.denominator} is zero at {_event(dist, out, zero, fixed)}, so the "
                "estimand is undefined there (with data: too few rows with these values)"
            )
        return out
    raise TypeError(f"evaluate: unknown expression type {type(e).__name__}")
