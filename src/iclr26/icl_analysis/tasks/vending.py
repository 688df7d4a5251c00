"""The vending machine tasks: a tape of coins and purchases, then a balance. VM: is the tape valid
(no purchase costs more than the balance, and the stated balance is right)? VM-Sum: what is the
final balance?"""

from __future__ import annotations

import random
from typing import ClassVar

from iclr26.icl_analysis.tasks.base import Task

COINS = {"+5": 5, "+10": 10}
PRICES = {"coffee": 15, "biscuit": 20, "soda": 25}
BALANCES = (0, 5, 10, 15, 20, 25)

# The machine's moves per balance: (token, next balance); the automaton never overdraws and never
# holds more than 25 (the authors' machine, with its 20 --coffee--> 20 edge corrected to 5).
MOVES: dict[int, list[tuple[str, int]]] = {
    0: [("+10", 10), ("+5", 5)],
    10: [("+10", 20), ("+5", 15)],
    20: [("biscuit", 0), ("coffee", 5), ("+5", 25)],
    5: [("+10", 15)],
    15: [("coffee", 0), ("+10", 25)],
    25: [("soda", 0), ("coffee", 10), ("biscuit", 5)],
}


def run_tape(tokens: list[str]) -> int | None:
    """The balance after `tokens` from 0, or None when a purchase costs more than the balance."""
    balance = 0
    for t in tokens:
        if t in COINS:
            balance += COINS[t]
        elif t in PRICES:
            if PRICES[t] > balance:
                return None
            balance -= PRICES[t]
        else:
            return None
    return balance


class VendingMachine(Task):
    """The generator walks the machine with each balance's move weights (and a stop weight) and
    writes at least 7 tokens. A positive states the true final balance; a negative either states a
    wrong one or has a purchase inserted where the balance cannot pay for it. Q(δ) shifts each
    row's weights linearly (Q(0) = P)."""

    name = "vending_machine"
    description = (
        "the label is 1 when no purchase costs more than the balance and the last number is the balance"
    )

    # weights per balance: the moves in MOVES' order, then stop
    _P: ClassVar = {0: [0.75, 0.2, 0.05], 10: [0.75, 0.2, 0.05], 20: [0.4, 0.4, 0.15, 0.05],
                    5: [0.8, 0.2], 15: [0.75, 0.2, 0.05], 25: [0.4, 0.4, 0.15, 0.05]}  # fmt: skip
    _D: ClassVar = {0: [-0.5, 0.5, 0], 10: [-0.5, 0.5, 0], 20: [1 / 16, 1 / 16, -1 / 8, 0],
                    5: [1 / 6, -1 / 6], 15: [-0.5, 0.5, 0], 25: [1 / 16, 1 / 16, -1 / 8, 0]}  # fmt: skip

    def transitions(self, delta: float) -> list[list[float]]:
        return [[p + delta * d for p, d in zip(self._P[b], self._D[b], strict=True)] for b in BALANCES]

    def _walk(self, rng: random.Random, delta: float) -> list[str] | None:
        rows = dict(zip(BALANCES, self.transitions(delta), strict=True))
        tokens, balance = [], 0
        while len(tokens) < 80:
            moves = MOVES[balance]
            k = rng.choices(range(len(moves) + 1), weights=rows[balance])[0]
            if k == len(moves):
                break
            token, balance = moves[k]
            tokens.append(token)
        else:
            return None
        return tokens if len(tokens) >= 7 else None

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        tokens = self._walk(rng, delta)
        if tokens is None:
            return None
        final = run_tape(tokens)
        assert final is not None  # the machine never overdraws
        if not positive:
            if rng.random() < 0.5:
                final = rng.choice([b for b in BALANCES if b != final])
            else:  # a purchase the balance at that point cannot pay for
                spots = [
                    (i, p)
                    for i in range(len(tokens) + 1)
                    for p in PRICES
                    if PRICES[p] > (run_tape(tokens[:i]) or 0)
                ]
                i, p = rng.choice(spots)
                tokens = [*tokens[:i], p, *tokens[i:]]
                final = rng.choice(BALANCES)
        return ",".join(tokens) + f",{final}"

    def check(self, entry: str) -> int:
        *tokens, last = entry.split(",")
        balance = run_tape(tokens)
        return int(balance is not None and last.lstrip("-").isdigit() and int(last) == balance)


class VendingMachineSum(VendingMachine):
    """VM-Sum: the same valid tapes without the balance; the answer is the final balance (graded as
    a number). A noisy label is another balance. (The authors' grader added the shown balance back
    to the answer; we grade the balance the exemplars teach.)"""

    name = "vending_machine_sum"
    binary = False
    description = "the answer is the balance left after the coins and purchases"

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        tokens = self._walk(rng, delta)
        return None if tokens is None else ",".join(tokens) + f",{run_tape(tokens)}"

    def check(self, entry: str) -> int:
        *tokens, _ = entry.split(",")
        balance = run_tape(tokens)
        if balance is None:
            raise ValueError(f"not a valid vending-machine tape: {entry!r}")
        return balance

    def query(self, entry: str) -> str:
        return entry.rsplit(",", 1)[0]

    def noisy(self, label: int, rng: random.Random) -> int:
        return rng.choice([b for b in BALANCES if b != label])
