"""The three string tasks: PARITY, pattern matching and reversal (the paper's Sec. 3.1 tasks
over small alphabets)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import ClassVar

from iclr26.icl_analysis.tasks.base import Task


class Parity(Task):
    """PARITY: binary strings starting with "0"; the label is whether the number of zeros is even.

    A two-state automaton (states: odd / even count of zeros so far) writes "1" to stay and "0" to
    switch; the positive generator may stop only in the even state, the negative one only in the
    odd state. Rows are [stay, switch, stop]. Q(δ) moves mass from switching to staying (longer runs
    of ones), linearly in δ, with Q(0) = P. (The authors' Q has Q(0.2) = P, and their draw is an
    integer coin, so their OOD split is not shifted; ours is.)
    """

    name = "parity"
    description = "the label is 1 when the string has an even number of zeros"

    def _rows(self, delta: float, positive: bool) -> list[list[float]]:
        odd = [0.2 + 0.6 * delta, 0.8 - 0.6 * delta, 0.0]
        even = [0.2 + 0.6 * delta, 0.7 - 0.6 * delta, 0.1]
        if not positive:  # the mirror automaton stops only with an odd count
            odd, even = [odd[0], even[1], even[2]], [even[0], odd[1], odd[2]]
        return [odd, even]

    def transitions(self, delta: float) -> list[list[float]]:
        return self._rows(delta, True) + self._rows(delta, False)

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        rows = self._rows(delta, positive)
        out, state = ["0"], 0  # after the first "0": an odd count
        while len(out) < 200:
            stay, switch, stop = rows[state]
            x = rng.random() * (stay + switch + stop)
            if x < stop:
                break
            if x < stop + stay:
                out.append("1")
            else:
                out.append("0")
                state = 1 - state
        else:
            return None
        return "".join(out) if len(out) >= 4 else None

    def check(self, entry: str) -> int:
        return int(entry.count("0") % 2 == 0)


PATTERN = "abcabb"


def _kmp_next(state: int, symbol: str) -> int:
    """The KMP automaton of PATTERN: the length of the longest prefix of PATTERN that is a suffix of
    (the matched prefix + symbol); state 6 (found) absorbs."""
    if state == len(PATTERN):
        return state
    text = PATTERN[:state] + symbol
    for k in range(min(len(text), len(PATTERN)), -1, -1):
        if text.endswith(PATTERN[:k]):
            return k
    return 0


class PatternMatching(Task):
    """Pattern matching: strings over {a, b, c}; the label is whether "abcabb" occurs.

    The generator walks the pattern's KMP automaton (states 0..6 = characters matched), choosing a
    next *state* with the row's probabilities and writing a symbol that leads there. Positive
    strings stop only from state 6 (found); negative ones never enter it and stop from state 0.
    Q(δ) tilts every row linearly in δ (Q(0) = P), lengthening strings as δ grows, as the paper's
    Table 1 perturbation does.
    """

    name = "pattern_matching"
    description = 'the label is 1 when the string contains the substring "abcabb"'

    # P: for each state, weights over next states 0..6 and stop (the authors' shape of P)
    _P: ClassVar = [
        [0.2, 0.8, 0, 0, 0, 0, 0, 0],
        [0.1, 0.1, 0.8, 0, 0, 0, 0, 0],
        [0.1, 0.15, 0, 0.75, 0, 0, 0, 0],
        [0.25, 0, 0, 0, 0.75, 0, 0, 0],
        [0.1, 0.2, 0, 0, 0, 0.7, 0, 0],
        [0, 0.15, 0, 0.1, 0, 0, 0.75, 0],
        [0, 0, 0, 0, 0, 0, 0.8, 0.2],
    ]
    # dQ/dδ: each row sums to 0, so Q(δ) stays a distribution; stopping from 6 becomes rarer
    _D: ClassVar = [
        [-1 / 6, 1 / 6, 0, 0, 0, 0, 0, 0],
        [-1 / 12, -1 / 12, 1 / 6, 0, 0, 0, 0, 0],
        [1 / 6, 1 / 6, 0, -1 / 3, 0, 0, 0, 0],
        [-1 / 5, 0, 0, 0, 1 / 5, 0, 0, 0],
        [1 / 8, 1 / 8, 0, 0, 0, -1 / 4, 0, 0],
        [0, 1 / 6, 0, 1 / 6, 0, 0, -1 / 3, 0],
        [0, 0, 0, 0, 0, 0, 1 / 6, -1 / 6],
    ]

    def transitions(self, delta: float) -> list[list[float]]:
        return [
            [p + delta * d for p, d in zip(rp, rd, strict=True)]
            for rp, rd in zip(self._P, self._D, strict=True)
        ]

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        rows = self.transitions(delta)
        if not positive:  # never reach 6; stop from 0 with the weight 6 had
            rows = [[*r[:6], 0.0, 0.0] for r in rows[:6]]
            rows[0][7] = self.transitions(delta)[6][7]
        out, state = [], 0
        while len(out) < 400:
            weights = rows[state]
            nxt = rng.choices(range(8), weights=weights)[0]
            if nxt == 7:
                break
            symbols = [c for c in "abc" if _kmp_next(state, c) == nxt]
            if not symbols:  # the row asks for a transition the automaton does not have
                return None
            out.append(rng.choice(symbols))
            state = nxt
        else:
            return None
        return "".join(out) if len(out) >= 8 else None

    def check(self, entry: str) -> int:
        return int(PATTERN in entry)


TOKENS = ("gfx", "chtte", "%", "ltintprk", "¯\\_(ツ)_/¯")  # the paper's token set; prefix-free


def edit_noise(tokens: list[str], alphabet: Sequence[str], rng: random.Random) -> list[str]:
    """1–3 deletions, substitutions (by another symbol of `alphabet`) or adjacent swaps: the noise
    of reversal's negatives."""
    out = list(tokens)
    for _ in range(rng.randint(1, 3)):
        op, i = rng.randrange(3), rng.randrange(len(out))
        if op == 0 and len(out) > 1:
            del out[i]
        elif op == 1:
            out[i] = rng.choice([t for t in alphabet if t != out[i]])
        elif i + 1 < len(out):
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def split_tokens(text: str) -> list[str] | None:
    """`text` parsed into TOKENS (unique, since no token is a prefix of another), or None."""
    out, i = [], 0
    while i < len(text):
        for t in TOKENS:
            if text.startswith(t, i):
                out.append(t)
                i += len(t)
                break
        else:
            return None
    return out


class Reversal(Task):
    """Reversal: `w#v` over an odd token set; the label is whether v is w reversed (token-wise).

    w comes from a Markov chain over the tokens (stay, move to each other token, stop); the negative
    generator writes a noisy reversal (1–3 deletions, substitutions or adjacent swaps) that is never
    the exact reversal. Q(δ) lowers the stop probability linearly (Q(0) = P), so OOD strings are
    longer.
    """

    name = "reversal"
    description = "the label is 1 when the part after # is the part before # reversed, token by token"

    def _row(self, delta: float) -> list[float]:
        # [stay, each other token (x4), stop]
        return [0.3 - 0.1 * delta, *([0.1 + 0.1 * delta] * 4), 0.3 - 0.3 * delta]

    def transitions(self, delta: float) -> list[list[float]]:
        return [self._row(delta)]

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        row = self._row(delta)
        stay, stop = row[0], row[-1]
        tape = [rng.choice(TOKENS)]
        while len(tape) < 60:
            x = rng.random()
            if x < stop:
                break
            if x < stop + stay:
                tape.append(tape[-1])
            else:
                tape.append(rng.choice([t for t in TOKENS if t != tape[-1]]))
        else:
            return None
        if len(tape) < 6:
            return None
        right = tape[::-1]
        if not positive:
            right = edit_noise(right, TOKENS, rng)
            if right == tape[::-1] or not right:
                return None
        return "".join(tape) + "#" + "".join(right)

    def check(self, entry: str) -> int:
        left, sep, right = entry.partition("#")
        a, b = split_tokens(left), split_tokens(right)
        return int(bool(sep) and a is not None and b is not None and a[::-1] == b)
