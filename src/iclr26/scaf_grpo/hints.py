"""Scaf-GRPO's hint tiers, built from a problem's worked solution.

Three tiers of increasing information (Knowledge → Planning → Solution), each with levels 1..4
that reveal cumulative parts:
- knowledge: the rule of the procedure, one clause per level;
- planning: the column plan (which digits meet in which order), a quarter of it per level;
  for countdown, the order in which the worked solution combines the numbers (`use 50,25,7`);
- solution: the first lines of the scratchpad, a quarter of them per level.
The release comments the Planning tier out; `tiers=("knowledge", "solution")` does the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in
from iclr26.rlvr.tasks import Problem

TIERS = ("knowledge", "planning", "solution")
LEVELS = (1, 2, 3, 4)

_RULES = {
    "addition": (
        "add columns right to left",
        "line: digit+digit+carry=sum",
        "carry 1 if sum>9",
        "answer: last digit of each sum, last sum whole",
    ),
    "multiplication": (
        "multiply digits right to left",
        "line: digit*m+carry=product",
        "carry the tens",
        "answer: last digit of each product, last product whole",
    ),
    "countdown": (
        "join two numbers by + - or *",
        "line: x op y=result",
        "each number or result once",
        "answer: last result, the target",
    ),
}


@dataclass(frozen=True)
class Hint:
    """One rung of the hint ladder."""

    tier: str
    level: int
    text: str

    @property
    def rank(self) -> int:
        """Position on the full 12-rung ladder (0 = least information)."""
        return TIERS.index(self.tier) * len(LEVELS) + self.level - 1


def _share(items: list[str], level: int) -> list[str]:
    return items[: math.ceil(len(items) * level / len(LEVELS))]


def hint_text(problem: Problem, tier: str, level: int) -> str:
    """The hint of `tier` at `level` (1..4) for `problem`; cumulative within a tier."""
    check_in("tier", tier, TIERS)
    check_in("level", level, LEVELS)
    if tier == "knowledge":
        return "; ".join(_RULES[problem.task][:level])
    if tier == "planning":
        if problem.task == "countdown":
            order = [str(n) for n in problem.operands]  # the numbers in the order they are combined
            return "use " + ",".join(_share(order, level))
        if problem.task == "addition":
            plan = ["+".join(s.split("+")[:2]) for s in problem.steps]  # "d+d" per column
        else:
            plan = [s.split("+")[0] for s in problem.steps]  # "d*m" per digit
        return "cols " + ",".join(_share(plan, level))
    return ";".join(_share(list(problem.steps), level))


def check_tiers(tiers: tuple[str, ...]) -> tuple[str, ...]:
    """`tiers` when it is a non-empty collection of tier names; else an error naming the unknown ones."""
    bad = [t for t in tiers if t not in TIERS]
    if bad or not tiers:
        raise ConfigError(f"tiers: unknown {bad}; choose a non-empty subset of {TIERS}, got {tiers!r}")
    return tiers


def hint_ladder(problem: Problem, tiers: tuple[str, ...] = TIERS) -> list[Hint]:
    """All hints of `tiers`, ordered from least to most information."""
    check_tiers(tiers)
    return [Hint(t, lv, hint_text(problem, t, lv)) for t in TIERS if t in tiers for lv in LEVELS]


def pretraining_hint(problem: Problem, rng: np.random.Generator, p: float = 0.5) -> str | None:
    """With probability p, a random tier and level's hint (teaches a from-scratch model to read them)."""
    if rng.random() >= p:
        return None
    return hint_text(problem, TIERS[int(rng.integers(len(TIERS)))], int(rng.integers(1, 5)))
