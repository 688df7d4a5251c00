"""Shared fixtures for identification tests: textbook ADMGs, random queries on random graphs with
latents, and the exact comparison of an estimand with the truncated factorisation."""

from __future__ import annotations

import numpy as np

from iclr26.tiered_pruning import ADMG, random_tiered_dag
from iclr26.tiered_pruning.discrete import DiscreteSEM, Factor, random_discrete_sem
from iclr26.tiered_pruning.estimand import Expr, evaluate


def admg(spec: str, nodes: str | list[str] | None = None) -> ADMG:
    """An ADMG from 'a->b b<->c ...' (nodes in order of appearance unless given)."""
    directed, bidirected, order = [], [], {}
    for tok in spec.split():
        if "<->" in tok:
            a, b = tok.split("<->")
            bidirected.append((a, b))
        else:
            a, b = tok.split("->")
            directed.append((a, b))
        order.setdefault(a, None)
        order.setdefault(b, None)
    if nodes is not None:
        order = dict.fromkeys(nodes.split() if isinstance(nodes, str) else nodes)
    return ADMG(list(order), directed, bidirected)


def verma(k: int) -> ADMG:
    """Verma graphs 1-5 (Verma & Pearl 1990; Tian 2002 pp. 59, 70; as in y0.examples)."""
    chain = "V1->V2 V2->V3 V3->V4" + (" V4->V5" if k > 1 else "") + (" V5->V6" if k == 5 else "")
    bi = {
        1: "V2<->V4",
        2: "V1<->V3 V2<->V4 V3<->V5",
        3: "V1<->V5 V1<->V3 V2<->V4",
        4: "V1<->V5 V1<->V3 V2<->V4 V3<->V5",
        5: "V0<->V1 V0<->V6 V1<->V5 V1<->V3 V2<->V4",
    }[k]
    return admg(f"{chain} {bi}")


# (name, graph, treatments, outcomes, conditions, identifiable)
TEXTBOOK = [
    ("back-door", admg("z->x z->y x->y"), ["x"], ["y"], [], True),
    ("front-door", admg("x->m m->y x<->y"), ["x"], ["y"], [], True),
    ("bow arc", admg("x->y x<->y"), ["x"], ["y"], [], False),
    ("instrument + bow", admg("z->x x->y x<->y"), ["x"], ["y"], [], False),
    ("front-door, m<->y", admg("x->m m->y x<->y m<->y"), ["x"], ["y"], [], False),
    ("napkin", admg("w->r r->x x->y w<->x w<->y"), ["x"], ["y"], [], True),
    ("verma 1", verma(1), ["V3"], ["V4"], [], True),
    ("verma 2", verma(2), ["V1"], ["V5"], [], True),
    ("verma 3", verma(3), ["V1"], ["V5"], [], True),
    ("verma 4", verma(4), ["V1"], ["V5"], [], True),
    ("verma 5", verma(5), ["V1"], ["V5"], [], True),
    ("verma 1, do(V2)", verma(1), ["V2"], ["V4"], [], True),
    (
        "verma 1, V2 confounded with V3",
        admg("V1->V2 V2->V3 V3->V4 V2<->V4 V2<->V3"),
        ["V3"],
        ["V4"],
        [],
        False,
    ),
    # IDC
    ("back-door | z", admg("z->x z->y x->y"), ["x"], ["y"], ["z"], True),
    ("front-door | m", admg("x->m m->y x<->y"), ["x"], ["y"], ["m"], True),
    ("descendant of y", admg("x->y y->z"), ["x"], ["y"], ["z"], True),
    ("Shpitser-Pearl 2008 Fig. 6a", admg("x->z z->y x<->z"), ["x"], ["y"], ["z"], True),
    ("bow | instrument", admg("z->x x->y x<->y"), ["x"], ["y"], ["z"], False),
    # do(x) cuts y <-> x <-> z, so z says nothing about y: rule 2 must drop x's bidirected edges
    ("y<->x<->z, x->z", admg("x->z y<->x x<->z"), ["x"], ["y"], ["z"], True),
    ("napkin | r", admg("w->r r->x x->y w<->x w<->y"), ["x"], ["y"], ["r"], False),
    ("front-door, y | do(x), collider c", admg("x->m m->y x<->y x->c y->c"), ["x"], ["y"], ["c"], True),
]


def random_queries(
    n_queries: int, seed0: int = 0
) -> list[tuple[int, ADMG, DiscreteSEM, tuple, list, list, list]]:
    """(seed, ADMG, SEM over the DAG with latents, the latents, x, y, z): 4-6 observed nodes, 1-2 latents,
    1-2 treatments, 1-2 outcomes, 0-1 conditions; the SEM has 2 or 3 states per variable."""
    out = []
    for seed in range(seed0, seed0 + n_queries):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(4, 7))
        tg = random_tiered_dag(
            n, int(rng.integers(1, 4)), float(rng.uniform(1.5, 3.0)), int(rng.integers(1, 3)), rng
        )
        g = tg.dag.latent_projection(tg.latents)
        perm = [str(v) for v in rng.permutation(list(g.nodes))]
        nx_, ny, nz = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(0, 2))
        x, y, z = perm[:nx_], perm[nx_ : nx_ + ny], perm[nx_ + ny : nx_ + ny + nz]
        sem = random_discrete_sem(tg.dag, seed=rng, n_states=int(rng.integers(2, 4)))
        out.append((seed, g, sem, tg.latents, x, y, z))
    return out


def compare(estimate: Factor, truth: Factor, cards: dict) -> float:
    """max |estimate − truth| over all cells (broadcasting over variables only one side has: an
    estimand may keep free variables the effect does not depend on, e.g. r in the napkin)."""
    allv = tuple(dict.fromkeys(truth.variables + estimate.variables))
    return float(np.abs(estimate.expand(allv, cards) - truth.expand(allv, cards)).max())


def error_vs_truth(expr: Expr, graph: ADMG, x, y, z, seed: int = 0, n_states: int = 2) -> float:
    """max |expr − P(y | do(x), z)| on a random discrete SEM over the canonical DAG of `graph`."""
    dag, latents = graph.canonical_dag()
    sem = random_discrete_sem(dag, seed=seed, n_states=n_states)
    return sem_error(expr, sem, latents, x, y, z)


def sem_error(expr: Expr, sem: DiscreteSEM, latents, x, y, z) -> float:
    """max |expr evaluated on the SEM's observed margin − the SEM's true P(y | do(x), z)|."""
    est = evaluate(expr, sem.observational(latents))
    truth = sem.interventional(y, x, z)
    cards = {v: sem.cardinality(v) for v in sem.dag.nodes}
    return compare(est, truth, cards)
