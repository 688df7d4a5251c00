"""Tiered background knowledge (Andrews, Spirtes & Cooper, AISTATS 2020): an ordered partition of
the observed variables such that no variable is an ancestor of a variable in an earlier tier."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from iclr26.core.validation import check_int
from iclr26.tiered_pruning.graphs.nodes import Node

if TYPE_CHECKING:
    from iclr26.tiered_pruning.graphs.directed import ADMG, DAG
    from iclr26.tiered_pruning.graphs.marked import MAG


class Tiers:
    """Tiered background knowledge (Andrews, Spirtes & Cooper 2020).

    An ordered partition of the observed variables into tiers T_0, ..., T_{k-1}: a variable in a
    later tier is never an ancestor of a variable in an earlier tier. With `forbid_within=True`,
    no variable is an ancestor of another in its own tier either (our reading of Tetrad's
    "forbid within tier"; see the README).

    Parameters
    ----------
    tiers : sequence of iterables of hashable
        The tiers, earliest first. A variable may appear in only one tier; tiers may not be empty.
    forbid_within : bool, default False
        Forbid ancestral relations (hence directed edges) within a tier.
    """

    def __init__(self, tiers: Sequence[Iterable[Node]], forbid_within: bool = False) -> None:
        if isinstance(tiers, (str, bytes)) or not isinstance(tiers, Sequence):
            raise TypeError(
                f"Tiers: tiers must be a sequence of iterables of variables, got {type(tiers).__name__}"
            )
        self._tiers: list[tuple[Node, ...]] = []
        self._tier_of: dict[Node, int] = {}
        for t, members in enumerate(tiers):
            if isinstance(members, (str, bytes)):
                raise TypeError(f"Tiers: tier {t} is the string {members!r}; give a list of variables")
            members = tuple(members)
            if not members:
                raise ValueError(f"Tiers: tier {t} is empty; drop it")
            for v in members:
                if v in self._tier_of:
                    raise ValueError(f"Tiers: variable {v!r} is in tier {self._tier_of[v]} and tier {t}")
                self._tier_of[v] = t
            self._tiers.append(members)
        self.forbid_within = bool(forbid_within)

    def __repr__(self) -> str:
        return f"Tiers({[list(t) for t in self._tiers]!r}, forbid_within={self.forbid_within})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Tiers)
            and [set(t) for t in self._tiers] == [set(t) for t in other._tiers]
            and self.forbid_within == other.forbid_within
        )

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self._tiers)

    def __iter__(self) -> Iterator[tuple[Node, ...]]:
        return iter(self._tiers)

    def __contains__(self, v: object) -> bool:
        return v in self._tier_of

    @property
    def variables(self) -> list[Node]:
        """All variables, tier by tier."""
        return [v for t in self._tiers for v in t]

    def tier(self, v: Node) -> int:
        """The index of v's tier (0 = earliest)."""
        try:
            return self._tier_of[v]
        except KeyError:
            known = list(self._tier_of)
            shown = ", ".join(map(repr, known[:8])) + (", ..." if len(known) > 8 else "")
            raise ValueError(
                f"Tiers: variable {v!r} is in no tier; the tiers hold {len(known)} variables ({shown})"
            ) from None

    def check_covers(self, variables: Iterable[Node]) -> None:
        """Raise ValueError naming every variable that is in no tier."""
        missing = [v for v in variables if v not in self._tier_of]
        if missing:
            raise ValueError(
                f"Tiers: {len(missing)} variable(s) are in no tier: {missing[:10]!r}"
                f"{' ...' if len(missing) > 10 else ''}; add them to a tier "
                "(tiered_fci also takes tiers=None: no knowledge)"
            )

    def can_be_ancestor(self, a: Node, b: Node) -> bool:
        """Whether the knowledge allows a ∈ An(b) (a ≠ b)."""
        ta, tb = self.tier(a), self.tier(b)
        return ta < tb or (ta == tb and not self.forbid_within)

    def is_future(self, v: Node, x: Node, y: Node) -> bool:
        """Whether v lies in a tier later than both x's and y's."""
        return self.tier(v) > max(self.tier(x), self.tier(y))

    def restricted(self, variables: Iterable[Node]) -> Tiers:
        """The same knowledge over a subset of variables (empty tiers dropped)."""
        keep = set(variables)
        self.check_covers(keep)
        return Tiers(
            [[v for v in t if v in keep] for t in self._tiers if any(v in keep for v in t)],
            self.forbid_within,
        )

    def violations(self, graph: DAG | ADMG | MAG) -> list[tuple[Node, Node]]:
        """Pairs (a, b) of tiered variables with a ∈ An(b) that the knowledge forbids."""
        nodes = [v for v in graph.nodes if v in self._tier_of]
        out = []
        for b in nodes:
            for a in graph.ancestors(b):
                if a != b and a in self._tier_of and not self.can_be_ancestor(a, b):
                    out.append((a, b))
        return out

    def check_graph(self, graph: DAG | ADMG | MAG) -> None:
        """Raise ValueError if the graph contradicts the knowledge (names the first pairs)."""
        bad = self.violations(graph)
        if bad:
            shown = ", ".join(
                f"{a!r} (tier {self.tier(a)}) is an ancestor of {b!r} (tier {self.tier(b)})"
                for a, b in bad[:5]
            )
            raise ValueError(f"Tiers contradict the graph: {shown}{' ...' if len(bad) > 5 else ''}")

    @classmethod
    def from_topological_generations(
        cls,
        dag: DAG,
        observed: Iterable[Node] | None = None,
        n_tiers: int | None = None,
        forbid_within: bool = False,
    ) -> Tiers:
        """Tiers from a DAG's topological generations, restricted to `observed` and merged into at most
        `n_tiers` contiguous groups of generations. Always consistent with the DAG when
        forbid_within is False."""
        obs = set(dag.nodes if observed is None else observed)
        gens = [[v for v in g if v in obs] for g in dag.topological_generations()]
        gens = [g for g in gens if g]
        if check_int("Tiers.from_topological_generations: n_tiers", n_tiers, 1, optional=True) is not None:
            k = min(n_tiers, len(gens))
            merged: list[list[Node]] = [[] for _ in range(k)]
            for i, g in enumerate(gens):
                merged[i * k // len(gens)].extend(g)
            gens = merged
        return cls(gens, forbid_within)


def check_tiers(who: str, tiers: object, *, optional: bool = False) -> Tiers | None:
    """`tiers` when it is a `Tiers` (or None, when `optional`: no knowledge); else a TypeError that
    names `who`. The one type check of every entry point that takes tiered knowledge."""
    if tiers is None and optional:
        return None
    if not isinstance(tiers, Tiers):
        want = "a Tiers or None" if optional else "a Tiers"
        raise TypeError(f"{who}: tiers must be {want}, got {type(tiers).__name__}")
    return tiers
