"""Tiered FCI: FCI with tiered background knowledge (Andrews, Spirtes & Cooper, AISTATS 2020).

The baseline of the paper ("learn the full PAG, then identify"). Stages:

1. adjacency search, PC-stable style (Spirtes et al. 2000; Colombo & Maathuis 2014): for
   growing k, test x ⊥ y | S over S ⊆ Adj(x) minus y with |S| = k, adjacency sets frozen per k;
2. R0 on the result, then the Possible-D-SEP stage (Spirtes et al. 2000, FCI step 4): test
   x ⊥ y | S over S ⊆ Possible-D-SEP(x) minus {x, y} (and the same for y);
3. final orientation (`orientation.orient`): all circles, R0, the arrowheads the tiers imply,
   then Zhang's R1–R4 and R8–R10.

Tiered skeleton rule. If x and y are non-adjacent in the MAG, D-SEP(x, y) ⊆ An({x, y})
m-separates them (Spirtes et al. 2000; Richardson & Spirtes 2002), and An({x, y})
holds no variable in a tier later than both x's and y's. So a conditioning set that contains
such a "future" variable is never needed: with `tiered_skeleton=True` both stages draw their
conditioning sets only from variables in tier ≤ max(tier(x), tier(y)). In particular this skips
every set lying entirely in the future of both endpoints (the rule stated in the issue), and it
preserves soundness and completeness under the oracle (tests check both).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int
from iclr26.tiered_pruning.citests import CITest, FisherZTest, GSquareTest, check_ci_test
from iclr26.tiered_pruning.graphs import PAG, Mark, Node, Tiers, check_tiers
from iclr26.tiered_pruning.orientation import orient, orient_unshielded_colliders


@dataclass(frozen=True)
class FCIConfig:
    """Settings of (tiered) FCI; defaults are the complete algorithm."""

    max_cond_size: int | None = None
    """largest conditioning set |S| in the adjacency search (None: no limit)"""
    possible_dsep: bool = True
    """run the Possible-D-SEP stage (needed for completeness with latents)"""
    max_pds_cond_size: int | None = None
    """largest conditioning set |S| in the Possible-D-SEP stage (None: no limit, complete FCI)"""
    tiered_skeleton: bool = True
    """draw conditioning sets only from tiers <= max(tier(x), tier(y)) (the tiered skeleton rule)"""
    cross_tier_tails: bool = False
    """Chen & Barker's assumption (latent confounders only within a tier): edges between tiers are
    a -> b, tail at the earlier end (`orientation.orient_by_tiers`)"""

    def __post_init__(self) -> None:
        for name in ("max_cond_size", "max_pds_cond_size"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise ConfigError(f"FCIConfig.{name} must be None or an int >= 0, got {v!r}")


@dataclass
class FCIResult:
    """The learned PAG and what it cost."""

    pag: PAG
    sepsets: dict[frozenset[Node], frozenset[Node]]
    n_tests: int  # CI tests run by this call (cache hits excluded)
    n_cache_hits: int  # queries answered from the test's cache during this call
    tests_by_stage: dict[str, int] = field(default_factory=dict)
    orientations: dict[str, int] = field(default_factory=dict)  # endpoints oriented per rule
    seconds: float = 0.0


def possible_d_sep(g: PAG, x: Node) -> set[Node]:
    """Possible-D-SEP(x) in g (Spirtes et al. 2000): nodes v ≠ x joined to x by a path on which
    every interior triple <u, w, z> has w a collider (u *-> w <-* z) or u, w, z a triangle.

    Searched over edge states (u, w), so it may include a few more nodes than the path
    definition; a superset keeps the stage sound and complete.
    """
    out: set[Node] = set()
    seen: set[tuple[Node, Node]] = set()
    queue: deque[tuple[Node, Node]] = deque()
    for w in g.neighbors(x):
        out.add(w)
        seen.add((x, w))
        queue.append((x, w))
    while queue:
        u, w = queue.popleft()
        for z in g.neighbors(w):
            if z == u or (w, z) in seen:
                continue
            if (g.mark(u, w) is Mark.ARROW and g.mark(z, w) is Mark.ARROW) or g.adjacent(u, z):
                seen.add((w, z))
                queue.append((w, z))
                out.add(z)
    out.discard(x)
    return out


def tiered_fci(
    test: CITest,
    tiers: Tiers | None = None,
    variables: Iterable[Node] | None = None,
    config: FCIConfig | None = None,
    min_tier: int = 0,
) -> FCIResult:
    """FCI over `variables` (default: all of the test's) with optional tiered knowledge.

    Parameters
    ----------
    test : CITest
        The CI test (Fisher-z, G² or an oracle); its counters measure the cost.
    tiers : Tiers or None
        Tiered background knowledge covering every variable; None means no knowledge (plain FCI).
    variables : iterable, optional
        A subset of the test's variables to learn a PAG over.
    config : FCIConfig, optional
    min_tier : int, default 0
        Learn only the T-components >= min_tier: a pair with both variables in tiers < min_tier is
        never tested and left out of the PAG, though those variables still enter conditioning sets
        (FCIExogenous as used by Chen & Barker's Algorithm 1). Needs tiers and `cross_tier_tails`:
        the edges from those tiers into later ones are then known to be a -> b.
    """
    cfg = config or FCIConfig()
    check_ci_test("tiered_fci", test)
    check_tiers("tiered_fci", tiers, optional=True)
    check_int("tiered_fci: min_tier", min_tier, 0)
    if min_tier and (tiers is None or not cfg.cross_tier_tails):
        raise ConfigError(
            "tiered_fci: min_tier > 0 needs tiers and FCIConfig(cross_tier_tails=True) (the assumption "
            "that latent confounders stay within a tier, under which the skipped tiers are exogenous)"
        )
    V = list(test.variables if variables is None else variables)
    known = set(test.variables)
    unknown = [v for v in V if v not in known]
    if unknown:
        raise ValueError(f"tiered_fci: variables {unknown[:5]!r} are not variables of the CI test")
    if len(set(V)) < len(V):
        raise ValueError("tiered_fci: variables repeat")
    if tiers is not None:
        tiers.check_covers(V)
    use_tiers = tiers is not None and cfg.tiered_skeleton

    def skipped(a: Node, b: Node) -> bool:
        return bool(min_tier) and max(tiers.tier(a), tiers.tier(b)) < min_tier  # type: ignore[union-attr]

    def allowed(v: Node, x: Node, y: Node) -> bool:
        """Whether v may enter a conditioning set for (x, y) under the tiered skeleton rule."""
        return not (use_tiers and tiers.is_future(v, x, y))  # type: ignore[union-attr]

    t0 = time.perf_counter()
    tests0, hits0 = test.n_tests, test.n_cache_hits
    stage: dict[str, int] = {}
    g = PAG.complete(V)
    for a, b in combinations(V, 2):
        if skipped(a, b):
            g.remove_edge(a, b)
    sepsets: dict[frozenset[Node], frozenset[Node]] = {}

    # -- stage 1: adjacency search (PC-stable) -------------------------------------------------
    depth = 0
    while cfg.max_cond_size is None or depth <= cfg.max_cond_size:
        adj = {v: g.neighbors(v) for v in V}  # frozen for this depth
        more = False
        for x in V:
            for y in adj[x]:
                if not g.adjacent(x, y):
                    continue
                pool = [v for v in adj[x] if v != y and allowed(v, x, y)]
                if len(pool) < depth:
                    continue
                more = True
                for S in combinations(pool, depth):
                    if test.independent(x, y, S):
                        g.remove_edge(x, y)
                        sepsets[frozenset((x, y))] = frozenset(S)
                        break
        if not more:
            break
        depth += 1
    stage["adjacency"] = test.n_tests - tests0

    def sepset(a: Node, c: Node) -> frozenset[Node]:
        if skipped(a, c):  # never tested; the tiers already give every arrowhead R0 could add here
            return frozenset()
        return sepsets[frozenset((a, c))]

    # -- stage 2: Possible-D-SEP ----------------------------------------------------------------
    if cfg.possible_dsep:
        before = test.n_tests
        h = g.with_all_circles()
        orient_unshielded_colliders(h, sepset)
        pds = {v: possible_d_sep(h, v) for v in V}
        for x in V:
            for y in g.neighbors(x):
                if g.index_of(y) < g.index_of(x) or not g.adjacent(x, y):
                    continue
                removed = False
                for u in (x, y):
                    pool = [v for v in g.nodes if v in pds[u] and v not in (x, y) and allowed(v, x, y)]
                    top = (
                        len(pool) if cfg.max_pds_cond_size is None else min(len(pool), cfg.max_pds_cond_size)
                    )
                    for k in range(top + 1):
                        for S in combinations(pool, k):
                            if test.independent(x, y, S):
                                g.remove_edge(x, y)
                                sepsets[frozenset((x, y))] = frozenset(S)
                                removed = True
                                break
                        if removed:
                            break
                    if removed:
                        break
        stage["possible_dsep"] = test.n_tests - before

    # -- stage 3: orientation -------------------------------------------------------------------
    pag, log = orient(g, sepset, tiers, cfg.cross_tier_tails)
    return FCIResult(
        pag=pag,
        sepsets=sepsets,
        n_tests=test.n_tests - tests0,
        n_cache_hits=test.n_cache_hits - hits0,
        tests_by_stage=stage,
        orientations=dict(log.counts),
        seconds=time.perf_counter() - t0,
    )


def fci(test: CITest, variables: Iterable[Node] | None = None, config: FCIConfig | None = None) -> FCIResult:
    """Plain FCI (no background knowledge)."""
    return tiered_fci(test, None, variables, config)


class TieredFCI:
    """scikit-learn-style wrapper: `TieredFCI(alpha=0.05).fit(data, tiers)` sets `pag_` and costs.

    Parameters
    ----------
    ci_test : {"fisherz", "gsq"}, default "fisherz"
    alpha : float, default 0.05
    max_cond_size, possible_dsep, max_pds_cond_size, tiered_skeleton : see `FCIConfig`.
    """

    def __init__(
        self,
        ci_test: Literal["fisherz", "gsq"] = "fisherz",
        alpha: float = 0.05,
        max_cond_size: int | None = None,
        possible_dsep: bool = True,
        max_pds_cond_size: int | None = None,
        tiered_skeleton: bool = True,
    ) -> None:
        self.ci_test = ci_test
        self.alpha = alpha
        self.max_cond_size = max_cond_size
        self.possible_dsep = possible_dsep
        self.max_pds_cond_size = max_pds_cond_size
        self.tiered_skeleton = tiered_skeleton

    def fit(self, data: Any, tiers: Tiers | None = None) -> TieredFCI:
        """Learn the (tier-refined) PAG of `data` (a DataFrame or a 2-D array)."""
        tests = {"fisherz": FisherZTest, "gsq": GSquareTest}
        check_in("TieredFCI: ci_test", self.ci_test, tests)
        config = FCIConfig(
            self.max_cond_size, self.possible_dsep, self.max_pds_cond_size, self.tiered_skeleton
        )
        self.test_ = tests[self.ci_test](data, alpha=self.alpha)
        self.result_ = tiered_fci(self.test_, tiers, config=config)
        self.pag_ = self.result_.pag
        self.sepsets_ = self.result_.sepsets
        self.n_tests_ = self.result_.n_tests
        return self
