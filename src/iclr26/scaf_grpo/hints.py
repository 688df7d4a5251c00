"""Scaf-GRPO's hint tiers, built from a problem's worked solution.

Three tiers of increasing information (Knowledge → Planning → Solution), each with levels 1..4
that reveal cumulative parts:
- knowledge: the rule of the procedure, one clause per level;
- planning: the column plan (which digits meet in which order), a quarter of it per level;
  for countdown, the order in which the worked solution combines the numbers (`use 50,25,7`);
- solution: the first lines of the scratchpad, a quarter of them per level.
For gsm word problems the plan is the operation sequence ("add 13, then add 3, then multiply
3 by 4, then add 12"). Problems in the natural prompt style get the rules in plain words and their
plan and solution lines joined by "; " (a chat model reads "Hint: 3+5+0=8; 5+0+0=5").
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
    "gsm": (
        "line: x op y=result",
        "buying adds, giving away subtracts",
        "doubles/triples multiply, equal shares divide",
        "answer: the amount after the last event",
    ),
}
# The same rules in plain words, for the natural prompt style.
_NATURAL_RULES = {
    "addition": (
        "Add the numbers column by column, starting from the ones digits on the right.",
        "In each column add the two digits and the carry from the column before.",
        "When a column's sum is 10 or more, write its last digit and carry 1 to the next column.",
        "The answer's digits are the column results, read from left to right.",
    ),
    "multiplication": (
        "Multiply each digit of the long number by the one-digit number, starting from the right.",
        "Add the carry from the previous digit to each product.",
        "Write the last digit of each result and carry its tens to the next digit.",
        "The last result is written in full; the answer is the digits read from left to right.",
    ),
    "countdown": (
        "Combine two numbers at a time with +, - or *.",
        "Each result can be combined again with another number.",
        "Use each given number at most once.",
        "Write the whole calculation as one expression with parentheses that equals the target.",
    ),
    "gsm": (
        "Follow the amount through the story one sentence at a time.",
        "Buying adds to the amount and giving away subtracts from it.",
        "Doubling or tripling multiplies; sharing equally and keeping one share divides.",
        "The answer is the amount after the last sentence.",
    ),
}
_OPS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}  # plan verbs


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
    natural = problem.style == "natural"
    sep, comma = ("; ", ", ") if natural else (";", ",")
    if tier == "knowledge":
        rules = (_NATURAL_RULES if natural else _RULES)[problem.task][:level]
        return (" " if natural else "; ").join(rules)
    if tier == "planning":
        if problem.task == "countdown":
            order = [str(n) for n in problem.operands]  # the numbers in the order they are combined
            return ("Combine in this order: " if natural else "use ") + comma.join(_share(order, level))
        if problem.task == "gsm":
            plan = [_plan_step(s) for s in problem.steps]  # "add 13", "multiply 3 by 4", ...
            return ("Plan: " if natural else "plan ") + ", then ".join(_share(plan, level))
        if problem.task == "addition":
            plan = ["+".join(s.split("+")[:2]) for s in problem.steps]  # "d+d" per column
        else:
            plan = [s.split("+")[0] for s in problem.steps]  # "d*m" per digit
        return ("Columns from the right: " if natural else "cols ") + comma.join(_share(plan, level))
    return sep.join(_share(list(problem.steps), level))


def _plan_step(line: str) -> str:
    """One worked-solution line as a plan step: "37+3=40" → "add 3", "3*4=12" → "multiply 3 by 4"
    (a product names both factors: it may be a pack count, not the running amount)."""
    expr = line.split("=")[0]
    op = next(c for c in expr[1:] if c in _OPS)
    x, y = expr.split(op, 1)
    if op == "*":
        return f"multiply {x} by {y}"
    return f"{_OPS[op]} {'by ' if op == '/' else ''}{y}"


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
