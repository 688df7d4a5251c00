"""Scoring query-specific discovery: random queries over tiered variables, and adjacency / arrowhead
precision, recall, F1 and SHD of a learned PAG against a reference on the pairs a query keeps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr26.core.validation import check_in, check_int
from iclr26.tiered_pruning.graphs import PAG, Mark, Node, Tiers
from iclr26.tiered_pruning.identification import Query

QUERY_KINDS = ("local", "late_z", "random")


def random_query(tiers: Tiers, rng: np.random.Generator, kind: str, size: int = 2) -> Query:
    """A random query P(Y | do(X), Z).

    local: `size` treatments from one tier t and `size` outcomes from tier t or t + 1 (a question
    about one stage of a process), plus, half the time, one condition from a tier before t (Props.
    3.2 and 3.5). late_z: the same with one condition from tier t or later (Prop. 3.6, which prunes
    only the tiers after the condition). random: `size` treatments and `size` outcomes drawn from
    all variables (what a query that spans the whole process costs), no conditions.
    """
    check_in("random_query: query kind", kind, QUERY_KINDS)
    check_int("random_query: size", size, 1)
    groups = [list(t) for t in tiers]
    if kind == "random":
        pool = list(tiers.variables)
        if len(pool) < 2:
            raise ValueError("random_query: need at least 2 variables")
        k = min(size, len(pool) // 2)
        pick = rng.choice(len(pool), size=2 * k, replace=False)
        return Query(frozenset(pool[i] for i in pick[k:]), frozenset(pool[i] for i in pick[:k]))
    t = int(rng.integers(0, len(groups)))
    x = frozenset(rng.choice(groups[t], size=min(size, len(groups[t])), replace=False).tolist())
    t_y = min(t + int(rng.integers(0, 2)), len(groups) - 1)
    rest = [v for v in groups[t_y] if v not in x]
    if not rest:  # a one-variable tier: take the outcome from the next tier that has room
        t_y = next((u for u in range(t + 1, len(groups))), None)
        if t_y is None:
            return random_query(tiers, rng, kind, size) if len(groups) > 1 else Query(x)
        rest = groups[t_y]
    y = frozenset(rng.choice(rest, size=min(size, len(rest)), replace=False).tolist())
    z: frozenset[Node] = frozenset()
    if kind == "late_z":  # Prop. 3.6: a condition in the treatments' tier or later
        free = [v for g in groups[t:] for v in g if v not in x and v not in y]
        if free:
            z = frozenset([free[int(rng.integers(0, len(free)))]])
    elif t > 0 and rng.random() < 0.5:  # Prop. 3.5: a condition before the treatments
        z = frozenset([rng.choice(groups[int(rng.integers(0, t))]).item()])
    return Query(y, x, z)


@dataclass(frozen=True)
class PAGScores:
    """Adjacency and arrowhead precision / recall / F1, and SHD (pairs whose edge differs)."""

    adjacency_precision: float
    adjacency_recall: float
    adjacency_f1: float
    arrowhead_precision: float
    arrowhead_recall: float
    arrowhead_f1: float
    shd: int


def _prf(tp: int, n_pred: int, n_true: int) -> tuple[float, float, float]:
    p = tp / n_pred if n_pred else 1.0
    r = tp / n_true if n_true else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _arrowheads(g: PAG) -> set[tuple[Node, Node]]:
    """(u, v) for every arrowhead at v on an edge u *-> v."""
    out = set()
    for a, b, mark_a, mark_b in g.edges():
        if mark_a is Mark.ARROW:
            out.add((b, a))
        if mark_b is Mark.ARROW:
            out.add((a, b))
    return out


def score_pag(learned: PAG, truth: PAG) -> PAGScores:
    """Compare two PAGs over the same nodes (e.g. both restricted to a query's T-components)."""
    adj_l, adj_t = learned.skeleton(), truth.skeleton()
    heads_l, heads_t = _arrowheads(learned), _arrowheads(truth)
    ap, ar, af = _prf(len(adj_l & adj_t), len(adj_l), len(adj_t))
    hp, hr, hf = _prf(len(heads_l & heads_t), len(heads_l), len(heads_t))
    marks_differ = 0
    for e in adj_l & adj_t:
        a, b = sorted(e, key=str)
        marks_differ += learned.endpoints(a, b) != truth.endpoints(a, b)
    return PAGScores(ap, ar, af, hp, hr, hf, len(adj_l ^ adj_t) + marks_differ)
