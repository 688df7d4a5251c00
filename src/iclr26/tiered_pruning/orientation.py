"""FCI's orientation phase: R0, the tiered-knowledge arrowheads, and Zhang's rules R1–R4, R8–R10.

References
----------
- Zhang (2008), "On the completeness of orientation rules for causal discovery in the presence of
  latent confounders and selection bias", AIJ 172: rules R0–R10. Without selection bias R5–R7
  never apply, and R0–R4 with R8–R10 are arrowhead- and tail-complete (Zhang 2008).
- Andrews, Spirtes & Cooper (2020), "On the completeness of causal discovery in the presence of
  latent confounding with tiered background knowledge", AISTATS: adding, after R0, the arrowheads
  the tiers imply (a *-> b whenever b's tier is later than a's) and then closing under R1–R4,
  R8–R10 keeps FCI sound and complete. Only *arrowheads* follow from tiers: an edge a *-* b with
  a in an earlier tier may still be a <-> b (latent confounding), so the mark at a stays a circle
  unless the rules orient it (causal-learn puts a tail there: causal-learn issue 266).

Notation: `g.mark(a, b)` is the mark at b on the edge a *-* b. "a *-> b": mark(a, b) is ARROW;
"a o-* b": mark(b, a) is CIRCLE; "a -> b": mark(b, a) TAIL and mark(a, b) ARROW.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from iclr26.tiered_pruning.graphs import MAG, PAG, Mark, Node, Tiers

# sepset(a, c): the separating set FCI recorded for a non-adjacent pair (a, c)
Sepset = Callable[[Node, Node], Collection[Node]]

A, T, C = Mark.ARROW, Mark.TAIL, Mark.CIRCLE


@dataclass
class OrientationLog:
    """How many endpoints each rule oriented (rule name -> count)."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, rule: str, n: int = 1) -> None:
        self.counts[rule] = self.counts.get(rule, 0) + n


def _directed(g: PAG, a: Node, b: Node) -> bool:
    """a -> b."""
    return g.mark(b, a) is T and g.mark(a, b) is A


def _set(g: PAG, a: Node, b: Node, mark: Mark, log: OrientationLog | None, rule: str) -> bool:
    """Set the mark at b on a *-* b; report whether it changed."""
    if g.mark(a, b) is mark:
        return False
    g.set_mark(a, b, mark)
    if log is not None:
        log.add(rule)
    return True


# ---------------------------------------------------------------------------------------------
# R0 and tiered knowledge
# ---------------------------------------------------------------------------------------------


def orient_unshielded_colliders(g: PAG, sepset: Sepset, log: OrientationLog | None = None) -> None:
    """R0: for every unshielded triple a *-* b *-* c with b ∉ Sepset(a, c), orient a *-> b <-* c."""
    for b in g.nodes:
        nbrs = g.neighbors(b)
        for i, a in enumerate(nbrs):
            for c in nbrs[i + 1 :]:
                if not g.adjacent(a, c) and b not in sepset(a, c):
                    _set(g, a, b, A, log, "R0")
                    _set(g, c, b, A, log, "R0")


def orient_by_tiers(
    g: PAG, tiers: Tiers, log: OrientationLog | None = None, cross_tier_tails: bool = False
) -> None:
    """Arrowheads implied by tiered knowledge (Andrews et al. 2020).

    For an edge a *-* b with tier(a) < tier(b), b is not an ancestor of a, so the mark at b is an
    arrowhead; the mark at a is left alone (a may or may not be an ancestor of b: a <-> b is
    possible). With `forbid_within`, an edge inside a tier gets arrowheads at both ends (our
    reading of "no ancestral relation within a tier").

    `cross_tier_tails` adds the tail at a: under the assumption of Chen & Barker (ICLR 2026) that
    latent confounders only join variables of the same tier, an adjacency between tiers is a -> b
    (an inducing path from a must leave a by a -> c, and every collider after it lies in a tier
    ≥ tier(b), so is an ancestor of b, making a an ancestor of b).
    """
    for a, b, _, _ in g.edges():
        ta, tb = tiers.tier(a), tiers.tier(b)
        if tb < ta:
            a, b, ta, tb = b, a, tb, ta
        if ta < tb:
            _set(g, a, b, A, log, "tiers")
            if cross_tier_tails:
                if g.mark(b, a) is A and log is not None:  # R0 put an arrowhead there: data vs knowledge
                    log.add("tier conflict")
                _set(g, b, a, T, log, "tiers")
        elif tiers.forbid_within:
            _set(g, a, b, A, log, "tiers")
            _set(g, b, a, A, log, "tiers")


# ---------------------------------------------------------------------------------------------
# R1–R4 (Zhang 2008; Spirtes et al. 2000)
# ---------------------------------------------------------------------------------------------


def rule_1(g: PAG, log: OrientationLog | None = None) -> bool:
    """R1: a *-> b o-* c, a and c non-adjacent ⇒ b -> c."""
    changed = False
    for b in g.nodes:
        nbrs = g.neighbors(b)
        into_b = [a for a in nbrs if g.mark(a, b) is A]
        for c in nbrs:
            if g.mark(c, b) is not C:
                continue
            if any(a != c and not g.adjacent(a, c) for a in into_b):
                changed |= _set(g, c, b, T, log, "R1")
                changed |= _set(g, b, c, A, log, "R1")
    return changed


def rule_2(g: PAG, log: OrientationLog | None = None) -> bool:
    """R2: a -> b *-> c or a *-> b -> c, and a *-o c ⇒ a *-> c."""
    changed = False
    for a in g.nodes:
        for c in g.neighbors(a):
            if g.mark(a, c) is not C:
                continue
            for b in g.neighbors(a):
                if b == c or not g.adjacent(b, c):
                    continue
                if (_directed(g, a, b) and g.mark(b, c) is A) or (g.mark(a, b) is A and _directed(g, b, c)):
                    changed |= _set(g, a, c, A, log, "R2")
                    break
    return changed


def rule_3(g: PAG, log: OrientationLog | None = None) -> bool:
    """R3: a *-> b <-* c, a *-o d o-* c, a and c non-adjacent, d *-o b ⇒ d *-> b."""
    changed = False
    for b in g.nodes:
        nbrs = g.neighbors(b)
        into_b = [v for v in nbrs if g.mark(v, b) is A]
        if len(into_b) < 2:
            continue
        for d in nbrs:
            if g.mark(d, b) is not C:
                continue
            cands = [v for v in into_b if v != d and g.adjacent(v, d) and g.mark(v, d) is C]
            if any(not g.adjacent(a, c) for i, a in enumerate(cands) for c in cands[i + 1 :]):
                changed |= _set(g, d, b, A, log, "R3")
    return changed


def find_discriminating_path(g: PAG, a: Node, b: Node, c: Node) -> list[Node] | None:
    """A discriminating path <d, ..., a, b, c> for b (Zhang 2008), or None.

    Requirements checked here: every vertex strictly between d and b is a collider on the path
    and a parent of c, and d is not adjacent to c. (The caller checks a <-* b and a -> c.)
    Breadth-first from a, so the path found is a shortest one.
    """
    pred: dict[Node, Node] = {a: b}
    queue = deque([a])
    while queue:
        x = queue.popleft()
        for w in g.neighbors(x):
            if w in pred or w == c or g.mark(w, x) is not A:  # need w *-> x (x a collider)
                continue
            if not g.adjacent(w, c):
                path = [w, x]
                while path[-1] != a:
                    path.append(pred[path[-1]])
                return [*path, b, c]
            if _directed(g, w, c) and g.mark(x, w) is A:  # w a collider on the path and w -> c
                pred[w] = x
                queue.append(w)
    return None


def rule_4(g: PAG, sepset: Sepset, log: OrientationLog | None = None) -> bool:
    """R4: on a discriminating path <d, ..., a, b, c> for b with b o-* c: if b ∈ Sepset(d, c),
    b -> c; otherwise a <-> b <-> c."""
    changed = False
    for b in g.nodes:
        for c in g.neighbors(b):
            if g.mark(c, b) is not C:
                continue
            for a in g.neighbors(b):
                if a == c or not g.adjacent(a, c) or not _directed(g, a, c) or g.mark(b, a) is not A:
                    continue
                path = find_discriminating_path(g, a, b, c)
                if path is None:
                    continue
                d = path[0]
                if b in sepset(d, c):
                    changed |= _set(g, c, b, T, log, "R4")
                    changed |= _set(g, b, c, A, log, "R4")
                else:
                    for u, v in ((a, b), (b, a), (b, c), (c, b)):
                        changed |= _set(g, u, v, A, log, "R4")
                break
    return changed


# ---------------------------------------------------------------------------------------------
# R8–R10 (Zhang 2008: the tail rules that matter without selection bias)
# ---------------------------------------------------------------------------------------------


def rule_8(g: PAG, log: OrientationLog | None = None) -> bool:
    """R8: a -> b -> c or a -o b -> c, and a o-> c ⇒ a -> c."""
    changed = False
    for a in g.nodes:
        for c in g.neighbors(a):
            if not (g.mark(c, a) is C and g.mark(a, c) is A):
                continue
            for b in g.neighbors(a):
                # a -> b or a -o b: tail at a, arrowhead or circle at b
                if (
                    b != c
                    and g.adjacent(b, c)
                    and _directed(g, b, c)
                    and g.mark(b, a) is T
                    and g.mark(a, b) in (A, C)
                ):
                    changed |= _set(g, c, a, T, log, "R8")
                    break
    return changed


def _potentially_directed(g: PAG, u: Node, v: Node) -> bool:
    """The edge u *-* v can be read u ... -> v: no arrowhead at u, no tail at v."""
    return g.mark(v, u) is not A and g.mark(u, v) is not T


def uncovered_pd_targets(
    g: PAG, a: Node, first: Node, targets: Collection[Node], avoid: Collection[Node] = ()
) -> set[Node]:
    """The targets t reachable by an uncovered potentially directed path <a, first, ..., t>.

    Uncovered: every consecutive triple on the path is unshielded (Zhang 2008). Depth-first
    over simple paths; `avoid` nodes are never visited.
    """
    targets = set(targets)
    if not _potentially_directed(g, a, first) or first in avoid:
        return set()
    found = {first} & targets
    # stack of (path as list, set); extend while unshielded and potentially directed
    stack = [([a, first], {a, first})]
    while stack and found != targets:
        path, on = stack.pop()
        u, v = path[-2], path[-1]
        for w in g.neighbors(v):
            if w in on or w in avoid or g.adjacent(u, w) or not _potentially_directed(g, v, w):
                continue
            if w in targets:
                found.add(w)
            stack.append(([*path, w], on | {w}))
    return found


def rule_9(g: PAG, log: OrientationLog | None = None) -> bool:
    """R9: a o-> c and an uncovered p.d. path <a, b, ..., c> with b, c non-adjacent ⇒ a -> c."""
    changed = False
    for a in g.nodes:
        for c in g.neighbors(a):
            if not (g.mark(c, a) is C and g.mark(a, c) is A):
                continue
            for b in g.neighbors(a):
                if b != c and not g.adjacent(b, c) and uncovered_pd_targets(g, a, b, {c}):
                    changed |= _set(g, c, a, T, log, "R9")
                    break
    return changed


def rule_10(g: PAG, log: OrientationLog | None = None) -> bool:
    """R10: a o-> c, b -> c <- d, uncovered p.d. paths p1 from a to b and p2 from a to d whose
    vertices next to a (μ on p1, ω on p2; μ = b, ω = d allowed) are distinct and non-adjacent
    ⇒ a -> c. Paths do not pass through c."""
    changed = False
    for a in g.nodes:
        for c in g.neighbors(a):
            if not (g.mark(c, a) is C and g.mark(a, c) is A):
                continue
            pa_c = [v for v in g.neighbors(c) if v != a and _directed(g, v, c)]
            if len(pa_c) < 2:
                continue
            reach = {mu: uncovered_pd_targets(g, a, mu, pa_c, avoid={c}) for mu in g.neighbors(a) if mu != c}
            reach = {mu: r for mu, r in reach.items() if r}
            mus = list(reach)
            hit = any(
                not g.adjacent(mu, om) and any(b != d for b in reach[mu] for d in reach[om])
                for i, mu in enumerate(mus)
                for om in mus[i + 1 :]
            )
            if hit:
                changed |= _set(g, c, a, T, log, "R10")
    return changed


def apply_rules(g: PAG, sepset: Sepset, log: OrientationLog | None = None) -> OrientationLog:
    """Close g under R1–R4, then R8–R10 (re-closing under R1–R4 after each change), in place."""
    log = log if log is not None else OrientationLog()
    while True:
        while rule_1(g, log) | rule_2(g, log) | rule_3(g, log) | rule_4(g, sepset, log):
            pass
        if not (rule_8(g, log) | rule_9(g, log) | rule_10(g, log)):
            return log


def orient(
    skeleton: PAG, sepset: Sepset, tiers: Tiers | None = None, cross_tier_tails: bool = False
) -> tuple[PAG, OrientationLog]:
    """FCI's final orientation of a skeleton: all circles, R0, tier arrowheads, R1–R4 and R8–R10.
    `cross_tier_tails`: also tails at the earlier end of edges between tiers (see `orient_by_tiers`)."""
    g = skeleton.with_all_circles()
    log = OrientationLog()
    orient_unshielded_colliders(g, sepset, log)
    if tiers is not None:
        orient_by_tiers(g, tiers, log, cross_tier_tails)
    apply_rules(g, sepset, log)
    return g, log


def mag_to_pag(mag: MAG, tiers: Tiers | None = None, cross_tier_tails: bool = False) -> PAG:
    """The PAG of a MAG's Markov equivalence class, refined by tiered knowledge if given.

    Runs `orient` on the MAG's skeleton with the separating sets An({a, c}) minus {a, c}, which
    m-separate every non-adjacent pair of a MAG (Richardson & Spirtes 2002). This is the
    oracle FCI result without any search; `equivalence.pag_by_enumeration` checks it.
    """
    if tiers is not None:
        tiers.check_covers(mag.nodes)
        tiers.check_graph(mag)
    skeleton = PAG(mag.nodes, [(a, b, C, C) for a, b, _, _ in mag.edges()])
    cache: dict[frozenset[Node], frozenset[Node]] = {}

    def sepset(a: Node, c: Node) -> frozenset[Node]:
        key = frozenset((a, c))
        if key not in cache:
            cache[key] = frozenset(mag.ancestors([a, c]) - {a, c})
        return cache[key]

    pag, _ = orient(skeleton, sepset, tiers, cross_tier_tails)
    return pag
