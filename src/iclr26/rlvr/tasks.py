"""Arithmetic and countdown tasks with worked scratchpad solutions and verifiable final answers.

Every arithmetic problem renders as

    Q:347+589                      ← the prompt (question)
    7+9+0=16                       ← scratchpad, one line per column, right to left:
    4+8+1=13                         digit + digit + carry-in = column sum
    3+5+1=9
    A:936                          ← the final answer, checked by `verify`

Difficulty `level` is the number of digits. Multiplication multiplies a `level`-digit number by
one digit with the same column-wise scratchpad (d*m+carry=product). A verifier parses the first
`A:` line; a completion without one earns reward 0 and is counted as unparsed, never an error.

Countdown: reach a target from `level`+1 numbers (level 1..5, so 2..6 numbers) with + - *,
each number used at most once:

    Q:3,7,25,50>82                 ← the numbers in ascending order, `>`, the target
    50+25=75                       ← one operation per line: x op y=z
    75+7=82
    A:82                           ← the target

Numbers are drawn from 1..12; from level 3 on one of them is a large number from 25, 50, 75, 100.
The worked solution is a random left-to-right chain over all the numbers in a random order (each
step combines the running result with the next number), whose results stay in 1..999; the
chain's last result is the target, and a target equal to one of the given numbers is redrawn.
`Problem.operands` holds the numbers in the order the worked solution combines them.

Countdown verification rule. The scratchpad is every line before the first line that starts with
`A:`; text after that line is ignored.
- Unparsed (reward 0, `parsed=False`): no line starts with `A:`, that line is not exactly
  `A:<int>`, or a scratchpad line is not exactly `x op y=z` (x, y: non-negative integers without
  leading zeros, op one of + - *, z an integer; no blank lines).
- Parsed, reward 1 only if: the scratchpad has at least one step; in every step z = x op y and
  z >= 0; x and y are each taken from the pool of given numbers and earlier results, and a taken
  value leaves the pool (every number and every result is used at most once; z joins the pool);
  the last step's z equals the target; and the `A:` value equals the target. Otherwise reward 0.
Using every number is not required; any correct derivation earns the reward.

GSM-style word problems (`gsm`, `rlvr.word_problems`): `level` events change one amount; the
worked solution is one `x op y=z` line per arithmetic step and the answer is the final amount.

Two prompt styles. `scratchpad` (the default) is the `Q:` format above, for models trained on it.
`natural` is for pretrained chat models: the question in words and an instruction to end with
"Answer: <number>" (countdown: "Answer: <expression>"); hints follow as a "Hint:" line. Natural
completions are read leniently (`rlvr.answers`): arithmetic and gsm by their final number,
countdown by evaluating the final expression with each given number used at most once.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from iclr26.core.validation import check_in, check_int
from iclr26.rlvr.answers import countdown_correct, final_expression, final_number
from iclr26.rlvr.word_problems import word_problem

TASK_NAMES = ("addition", "multiplication", "countdown", "gsm")  # append only: the index seeds make_problems
STYLES = ("scratchpad", "natural")
MAX_LEVEL = 12
MAX_LEVELS = {"addition": MAX_LEVEL, "multiplication": MAX_LEVEL, "countdown": 5, "gsm": 8}  # level caps
COUNTDOWN_SMALL = (1, 12)  # small numbers are drawn uniformly from this closed range
COUNTDOWN_LARGE = (25, 50, 75, 100)  # one of these joins the numbers from level 3 on
COUNTDOWN_LARGE_FROM = 3
COUNTDOWN_CAP = 999  # every intermediate result of a generated chain lies in 1..COUNTDOWN_CAP
_ANSWER = re.compile(r"A:(-?\d+)")
_NUM = r"(?:0|[1-9]\d{0,17})"  # a non-negative integer without leading zeros (bounded: no int() limits)
_CD_STEP = re.compile(rf"({_NUM})([+*-])({_NUM})=(-?{_NUM})")


@dataclass(frozen=True)
class Problem:
    """One problem: the question, its worked solution steps and the answer."""

    task: str
    level: int
    question: str
    steps: tuple[str, ...]
    answer: str
    operands: tuple[int, ...] = field(default=())
    style: str = "scratchpad"

    @property
    def prompt(self) -> str:
        """What the policy is conditioned on: `Q:<question>` and a newline (scratchpad), or the
        question in words with the answer-format instruction (natural)."""
        if self.style == "natural":
            return natural_prompt(self)
        return f"Q:{self.question}\n"

    def hinted_prompt(self, hint: str) -> str:
        """The prompt with a hint line: `Q:<question>`, `H:<hint>` (one line, `;` for breaks), or
        the natural prompt followed by `Hint: <hint>`."""
        if self.style == "natural":
            return f"{natural_prompt(self)}\nHint: {hint}"
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


def _chain_step(acc: int, n: int) -> list[tuple[int, str, int, int]]:
    """The (x, op, y, z) steps combining `acc` with `n` whose result z lies in 1..COUNTDOWN_CAP."""
    options = []
    if acc + n <= COUNTDOWN_CAP:
        options.append((acc, "+", n, acc + n))
    if acc != n:  # larger minus smaller, so the result stays positive
        options.append((max(acc, n), "-", min(acc, n), abs(acc - n)))
    if acc * n <= COUNTDOWN_CAP:
        options.append((acc, "*", n, acc * n))
    return options  # never empty: if acc + n > CAP then acc > CAP - 12 > n, so "-" is possible


def countdown(level: int, rng: np.random.Generator) -> Problem:
    """Reach a target from `level`+1 numbers with + - *; the worked solution chains all of them."""
    cap = MAX_LEVELS["countdown"]
    if not isinstance(level, int) or not 1 <= level <= cap:
        raise ValueError(f"level must be an int in 1..{cap} for countdown, got {level!r}")
    lo, hi = COUNTDOWN_SMALL
    n_large = 1 if level >= COUNTDOWN_LARGE_FROM else 0
    while True:  # redraw the rare chain whose target is one of the given numbers
        numbers = [int(x) for x in rng.integers(lo, hi + 1, size=level + 1 - n_large)]
        if n_large:
            numbers.append(int(rng.choice(COUNTDOWN_LARGE)))
        order = [numbers[i] for i in rng.permutation(len(numbers))]
        acc, steps, used = order[0], [], []
        for n in order[1:]:
            options = _chain_step(acc, n)
            x, op, y, acc = options[int(rng.integers(len(options)))]
            used += [x, y] if not used else [n]  # the order in which numbers enter the chain
            steps.append(f"{x}{op}{y}={acc}")
        if acc not in numbers:
            break
    question = ",".join(map(str, sorted(numbers))) + f">{acc}"
    return Problem("countdown", level, question, tuple(steps), str(acc), tuple(used))


def gsm(level: int, rng: np.random.Generator) -> Problem:
    """A templated word problem with `level` events (`rlvr.word_problems`)."""
    cap = MAX_LEVELS["gsm"]
    if not isinstance(level, int) or not 1 <= level <= cap:
        raise ValueError(f"level must be an int in 1..{cap} for gsm, got {level!r}")
    question, steps, answer = word_problem(level, rng)
    return Problem("gsm", level, question, steps, str(answer))


GENERATORS = {"addition": addition, "multiplication": multiplication, "countdown": countdown, "gsm": gsm}
_FINAL = 'End with a last line of the form "Answer: <number>".'


def natural_prompt(problem: Problem) -> str:
    """The question in words for a chat model, with the answer-format instruction."""
    if problem.task == "addition":
        a, b = problem.question.split("+")
        return f"What is {a} + {b}? {_FINAL}"
    if problem.task == "multiplication":
        a, m = problem.question.split("*")
        return f"What is {a} × {m}? {_FINAL}"
    if problem.task == "countdown":
        numbers, target = problem.question.split(">")
        return (
            f"Use the numbers {numbers.replace(',', ', ')} to make {target}. You may use +, - and *, "
            "and each number at most once. End with a last line of the form "
            '"Answer: <expression>", for example "Answer: (3 + 5) * 2".'
        )
    return f"{problem.question} {_FINAL}"


def check_levels(task: str, name: str, levels: tuple[int, ...]) -> None:
    """Raise a ValueError naming `name` unless `levels` is a non-empty set of valid `task` levels."""
    top = MAX_LEVELS[task]
    if not levels or any(not 1 <= x <= top for x in levels):
        raise ValueError(f"{name} must be non-empty {task} levels in 1..{top}, got {levels}")


def make_problems(task: str, level: int, count: int, seed: int, style: str = "scratchpad") -> list[Problem]:
    """`count` problems of `task` at `level` in prompt `style`, reproducible from `seed`."""
    check_in("task", task, TASK_NAMES)
    check_in("style", style, STYLES)
    check_int("count", count, 0)
    rng = np.random.default_rng([seed, level, TASK_NAMES.index(task)])
    problems = [GENERATORS[task](level, rng) for _ in range(count)]
    return problems if style == "scratchpad" else [replace(p, style=style) for p in problems]


@dataclass(frozen=True)
class Verdict:
    """The reward of one completion and whether it could be parsed at all (an `A:<int>`; for
    countdown also a scratchpad of well-formed steps)."""

    reward: float
    parsed: bool


def _apply(x: int, op: str, y: int) -> int:
    return x + y if op == "+" else x - y if op == "-" else x * y


def verify_countdown(problem: Problem, completion: str) -> Verdict:
    """Reward 1 if the scratchpad derives the target by the countdown rule (module docstring)."""
    lines = completion.split("\n")
    end = next((i for i, line in enumerate(lines) if line.startswith("A:")), None)
    if end is None or _ANSWER.fullmatch(lines[end]) is None:
        return Verdict(0.0, False)
    steps = [_CD_STEP.fullmatch(line) for line in lines[:end]]
    if any(m is None for m in steps):
        return Verdict(0.0, False)
    pool = Counter(problem.operands)  # given numbers and unused earlier results
    z = None
    for m in steps:
        x, op, y, z = int(m[1]), m[2], int(m[3]), int(m[4])
        pool[x] -= 1
        pool[y] -= 1
        if pool[x] < 0 or pool[y] < 0 or z != _apply(x, op, y) or z < 0:
            return Verdict(0.0, True)
        pool[z] += 1
    ok = z is not None and str(z) == problem.answer and lines[end][2:] == problem.answer
    return Verdict(1.0 if ok else 0.0, True)


def verify_natural(problem: Problem, completion: str) -> Verdict:
    """Reward of a prose completion: its final number (or, for countdown, its final expression)
    read by the lenient rule of `rlvr.answers`."""
    if problem.task == "countdown":
        expr = final_expression(completion)
        if expr is None:
            return Verdict(0.0, False)
        parsed, ok = countdown_correct(expr, problem.operands, int(problem.answer))  # operands: every number
        return Verdict(1.0 if ok else 0.0, parsed)
    number = final_number(completion)
    if number is None:
        return Verdict(0.0, False)
    return Verdict(1.0 if str(number) == problem.answer else 0.0, True)


def verify(problem: Problem, completion: str) -> Verdict:
    """Reward of `completion`: natural style leniently, countdown by its rule, the rest by the
    first `A:<int>` alone."""
    if problem.style == "natural":
        return verify_natural(problem, completion)
    if problem.task == "countdown":
        return verify_countdown(problem, completion)
    m = _ANSWER.search(completion)
    if m is None:
        return Verdict(0.0, False)
    return Verdict(1.0 if m.group(1) == problem.answer else 0.0, True)
