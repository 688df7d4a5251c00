"""GSM8K-style word problems generated from templates, with computed answers.

A problem follows one quantity (a person's items) through `level` events, each a sentence that
changes it by one arithmetic step:

    Mia has 12 pencils. She buys 3 packs with 4 pencils in each. She gives 5 pencils to Omar.
    How many pencils does Mia have now?

    worked solution: 3*4=12; 12+12=24; 24-5=19        answer: 19

Events: buying more (+), buying k packs of n (k*n then +, two lines), giving some away (−), the
amount doubling or tripling (*), and sharing equally with friends and keeping one share (÷, drawn
only when it divides evenly). Every intermediate amount stays in 1..999. Level 1 is one event;
the step count of the worked solution grows with the level.
"""

from __future__ import annotations

import numpy as np

NAMES = ("Mia", "Omar", "Lena", "Ravi", "Sofia", "Jun", "Amara", "Tom", "Ines", "Kofi")
ITEMS = ("pencils", "apples", "stickers", "marbles", "cards", "shells", "stamps", "cookies")
PRONOUN = {"Mia": "She", "Lena": "She", "Sofia": "She", "Amara": "She", "Ines": "She"}
CAP = 999


def _event(x: int, name: str, friend: str, item: str, rng: np.random.Generator):
    """One event on the amount x: (sentence, worked-solution lines, new amount), or None if the
    drawn event does not fit (a remainder, a result outside 1..CAP)."""
    she = PRONOUN.get(name, "He")
    kind = int(rng.integers(5))
    if kind == 0:
        b = int(rng.integers(2, 20))
        return f"{she} buys {b} more {item}.", [f"{x}+{b}={x + b}"], x + b
    if kind == 1:
        k, n = int(rng.integers(2, 6)), int(rng.integers(2, 12))
        return (
            f"{she} buys {k} packs with {n} {item} in each.",
            [f"{k}*{n}={k * n}", f"{x}+{k * n}={x + k * n}"],
            x + k * n,
        )
    if kind == 2:
        if x < 3:
            return None
        b = int(rng.integers(1, x))
        return f"{she} gives {b} {item} to {friend}.", [f"{x}-{b}={x - b}"], x - b
    if kind == 3:
        k = int(rng.integers(2, 4))
        word = "doubles" if k == 2 else "triples"
        return f"Then the number of {item} {name} has {word}.", [f"{x}*{k}={x * k}"], x * k
    shares = [k for k in range(2, 6) if x % k == 0 and x // k >= 1]
    if not shares:
        return None
    k = shares[int(rng.integers(len(shares)))]
    return (
        f"{she} shares the {item} equally among {k} people, {name} included, and keeps one share.",
        [f"{x}/{k}={x // k}"],
        x // k,
    )


def word_problem(level: int, rng: np.random.Generator) -> tuple[str, tuple[str, ...], int]:
    """(question, worked-solution lines, answer) of a story with `level` events."""
    name, friend = (str(n) for n in rng.choice(NAMES, size=2, replace=False))
    item = str(rng.choice(ITEMS))
    x = int(rng.integers(3, 25))
    sentences, steps = [f"{name} has {x} {item}."], []
    while len(sentences) <= level:
        drawn = _event(x, name, friend, item, rng)
        if drawn is None or not 1 <= drawn[2] <= CAP:
            continue
        sentence, lines, x = drawn
        sentences.append(sentence)
        steps += lines
    question = " ".join(sentences) + f" How many {item} does {name} have now?"
    return question, tuple(steps), x
