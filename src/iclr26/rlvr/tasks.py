"""Arithmetic tasks with worked scratchpad solutions and verifiable final answers.

Every problem renders as

    Q:347+589                      ← the prompt (question)
    7+9+0=16                       ← scratchpad, one line per column, right to left:
    4+8+1=13                         digit + digit + carry-in = column sum
    3+5+1=9
    A:936                          ← the final answer, checked by `verify`

Difficulty `level` is the number of digits. Multiplication multiplies a `level`-digit number by
one digit with the same column-wise scratchpad (d*m+carry=product). A verifier parses the first
`A:` line; a completion without one earns reward 0 and is counted as unparsed, never an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

TASK_NAMES = ("addition", "multiplication")
MAX_LEVEL = 12
_ANSWER = re.compile(r"A:(-?\d+)")


@dataclass(frozen=True)
class Problem:
    """One problem: the question, its worked solution steps and the answer."""

    task: str
    level: int
    question: str
    steps: tuple[str, ...]
    answer: str
    operands: tuple[int, ...] = field(default=())

    @property
    def prompt(self) -> str:
        """What the policy is conditioned on: `Q:<question>` and a newline."""
        return f"Q:{self.question}\n"

    def hinted_prompt(self, hint: str) -> str:
        """The prompt with a hint line: `Q:<question>`, `H:<hint>` (one line, `;` for breaks)."""
        return f"Q:{self.question}\nH:{hint.replace(chr(10), ';')}\n"

    @property
    def solution(self) -> str:
        """The worked solution the policy should produce after the prompt."""
        return "".join(s + "\n" for s in self.steps) + f"A:{self.answer}\n"


def _check_level(level: int) -> None:
    if not isinstance(level, int) or not 1 <= level <= MAX_LEVEL:
        raise ValueError(f"level must be an int in 1..{MAX_LEVEL}, got {level!r}")


def _digits(rng: np.random.Generator, n: int) -> int:
    if n == 1:
        return int(rng.integers(0, 10))
    return int(rng.integers(10 ** (n - 1), 10**n))


def addition(level: int, rng: np.random.Generator) -> Problem:
    """a + b with `level`-digit operands; one scratchpad line per column."""
    _check_level(level)
    a, b = _digits(rng, level), _digits(rng, level)
    da, db = str(a).zfill(level)[::-1], str(b).zfill(level)[::-1]
    steps, carry = [], 0
    for i in range(level):
        s = int(da[i]) + int(db[i]) + carry
        steps.append(f"{da[i]}+{db[i]}+{carry}={s}")
        carry = s // 10
    return Problem("addition", level, f"{a}+{b}", tuple(steps), str(a + b), (a, b))


def multiplication(level: int, rng: np.random.Generator) -> Problem:
    """a × m with a `level`-digit a and a one-digit m (2..9); one line per digit of a."""
    _check_level(level)
    a, m = _digits(rng, level), int(rng.integers(2, 10))
    da = str(a).zfill(level)[::-1]
    steps, carry = [], 0
    for i in range(level):
        p = int(da[i]) * m + carry
        steps.append(f"{da[i]}*{m}+{carry}={p}")
        carry = p // 10
    return Problem("multiplication", level, f"{a}*{m}", tuple(steps), str(a * m), (a, m))


GENERATORS = {"addition": addition, "multiplication": multiplication}


def make_problems(task: str, level: int, count: int, seed: int) -> list[Problem]:
    """`count` problems of `task` at `level`, reproducible from `seed`."""
    if task not in GENERATORS:
        raise ValueError(f"task must be one of {TASK_NAMES}, got {task!r}")
    rng = np.random.default_rng([seed, level, TASK_NAMES.index(task)])
    return [GENERATORS[task](level, rng) for _ in range(count)]


@dataclass(frozen=True)
class Verdict:
    """The reward of one completion and whether an answer could be parsed at all."""

    reward: float
    parsed: bool


def verify(problem: Problem, completion: str) -> Verdict:
    """Reward 1 if the first `A:<int>` in `completion` equals the answer, else 0."""
    m = _ANSWER.search(completion)
    if m is None:
        return Verdict(0.0, False)
    return Verdict(1.0 if m.group(1) == problem.answer else 0.0, True)
