"""Task families of rules for the stack, reversal and vending-machine tasks, so the GPT trained here
(`gpt.py`) can be evaluated on them with the task's own rule held out of its training, as the `dfa`
family holds PARITY out and the `pattern` family "contains abcabb".

A family is a set of rules of the task's shape, one drawn per training sequence; the task's rule is
one member. Each task string is rendered one character per task symbol (`Family.render`), so the
GPT reads a tape token as one token:

- `reversal` (task reversal, `w#v`): the rule σ, a permutation of the five tokens, labels 1 when v
  is w reversed with every token mapped by σ. The task's rule is σ = identity.
- `stack` (task stack, initial bits | operations | final bits): the rule says where a push writes
  (right or left end), where a pop takes from (right or left), how many bits a pop removes (1 or 2)
  and what a push writes (the bit, its complement, always 0, always 1): 32 rules. The task's rule:
  push and pop on the right, one bit, the bit itself.
- `vending` (task vending machine, a tape of coins and purchases, then the stated balance): the rule
  gives each coin a value in {5, 10, 15, 20} and each product a price in {5, ..., 30}; the label is 1
  when no purchase costs more than the balance and the stated balance is right. The task's rule:
  coins 5 and 10, coffee 15, biscuit 20, soda 25.

Held out (`is_held_out`): the task's rule, and every rule whose labels agree with the task's (or
their negation) on at least HOLD_OUT_AGREEMENT of a fixed sample of the task's ID strings
(`agreement`). One other rule in VALIDATION_SHARE (a stable hash of its parameters) is a validation
rule, never trained on either. A family's inputs are its own generator's (`Family.sample_input`),
positive or negative with probability 1/2 each (the label is then computed by the rule), of at most
`max_len` characters.
"""

from __future__ import annotations

import itertools
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache

from iclr26.core.seeding import derive_seed
from iclr26.icl_analysis.tasks import TASKS
from iclr26.icl_analysis.tasks.strings import TOKENS, edit_noise, split_tokens
from iclr26.icl_analysis.tasks.vending import COINS, PRICES

HOLD_OUT_AGREEMENT = 0.9
VALIDATION_SHARE = 8
REFERENCE_SIZE, REFERENCE_MAX_LEN = 500, 64

Params = tuple[int, ...]


@dataclass(frozen=True)
class Rule:
    """One rule of a family: labels a rendered string 0 or 1."""

    family: str
    params: Params

    def __call__(self, x: str) -> int:
        return FAMILIES[self.family].label(self.params, x)


class Family(ABC):
    """A set of rules over rendered strings of one task, with the task's rule among them."""

    name: str
    task: str
    alphabet: str
    min_len: int  # the shortest input the family's generator writes
    task_params: Params

    @abstractmethod
    def render(self, text: str) -> str | None:
        """The task string `text` one character per symbol, or None when it is not of the task's shape."""

    @abstractmethod
    def label(self, params: Params, x: str) -> int:
        """The label rule `params` gives the rendered string `x` (0 for a malformed one)."""

    @abstractmethod
    def sample_params(self, rng: random.Random) -> Params:
        """A uniformly random rule's parameters."""

    @abstractmethod
    def sample_input(self, params: Params, rng: random.Random, positive: bool, max_len: int) -> str | None:
        """A rendered input meant as a positive (or a negative) of rule `params`, at most `max_len`
        characters, or None when this draw does not fit."""

    def task_rule(self) -> Rule:
        return Rule(self.name, self.task_params)


# ---------------------------------------------------------------------------------------------
# Reversal: v is σ(w) reversed

_REV_CHARS = "vwxyz"
_REV_OF = dict(zip(TOKENS, _REV_CHARS, strict=True))


class ReversalFamily(Family):
    name, task, alphabet, min_len = "reversal", "reversal", _REV_CHARS + "#", 7
    task_params = (0, 1, 2, 3, 4)

    def render(self, text: str) -> str | None:
        left, sep, right = text.partition("#")
        a, b = split_tokens(left), split_tokens(right)
        if not sep or a is None or b is None:
            return None
        return "".join(_REV_OF[t] for t in a) + "#" + "".join(_REV_OF[t] for t in b)

    def _target(self, params: Params, left: str) -> str:
        return "".join(_REV_CHARS[params[_REV_CHARS.index(c)]] for c in reversed(left))

    def label(self, params: Params, x: str) -> int:
        left, sep, right = x.partition("#")
        ok = sep and left and set(left + right) <= set(_REV_CHARS)
        return int(bool(ok) and right == self._target(params, left))

    def sample_params(self, rng: random.Random) -> Params:
        p = list(range(len(_REV_CHARS)))
        rng.shuffle(p)
        return tuple(p)

    def sample_input(self, params: Params, rng: random.Random, positive: bool, max_len: int) -> str | None:
        n = rng.randint(3, (max_len - 1) // 2)
        left = [rng.choice(_REV_CHARS)]
        while len(left) < n:  # the task's chain: stay with probability 0.3
            left.append(left[-1] if rng.random() < 0.3 else rng.choice(_REV_CHARS.replace(left[-1], "")))
        target = self._target(params, "".join(left))
        right = target if positive else "".join(edit_noise(list(target), _REV_CHARS, rng))
        x = "".join(left) + "#" + right
        return x if len(x) <= max_len and len(right) >= 3 and (positive or right != target) else None


# ---------------------------------------------------------------------------------------------
# Stack: where pushes write, where pops take from, how many bits a pop removes, what a push writes

_WRITES = ("bit", "complement", "zero", "one")


def _stack_run(params: Params, initial: str, ops: str) -> str:
    push_left, pop_left, pop_n, writes = params
    stack = list(initial)
    i = 0
    while i < len(ops):
        if ops[i] == "P" and i + 1 < len(ops):
            b = ops[i + 1]
            bit = {0: b, 1: "1" if b == "0" else "0", 2: "0", 3: "1"}[writes]
            stack.insert(0, bit) if push_left else stack.append(bit)
            i += 2
            continue
        for _ in range(pop_n):
            if ops[i] == "O" and stack:
                stack.pop(0) if pop_left else stack.pop()
        i += 1
    return "".join(stack) or "e"


class StackFamily(Family):
    name, task, alphabet, min_len = "stack", "stack", "01PO|e", 6
    task_params = (0, 0, 1, 0)

    def render(self, text: str) -> str | None:
        lines = text.split("\n")
        if len(lines) != 3 or set(lines[0]) - set("01"):
            return None
        if set(lines[2]) - set("01") and lines[2] != "empty":
            return None
        ops = {"push": "P", "pop": "O", "0": "0", "1": "1"}
        parts = [o for o in lines[1].split(",") if o]
        if any(o not in ops for o in parts):
            return None
        final = "e" if lines[2] == "empty" else lines[2]
        return f"{lines[0]}|{''.join(ops[o] for o in parts)}|{final}"

    def label(self, params: Params, x: str) -> int:
        parts = x.split("|")
        if len(parts) != 3 or set(parts[0]) - set("01") or set(parts[1]) - set("01PO"):
            return 0
        return int(_stack_run(params, parts[0], parts[1]) == parts[2])

    def sample_params(self, rng: random.Random) -> Params:
        return (rng.randrange(2), rng.randrange(2), rng.choice((1, 2)), rng.randrange(len(_WRITES)))

    def _ops(self, rng: random.Random, n: int) -> str:
        return "".join(("P" + rng.choice("01")) if rng.random() < 0.5 else "O" for _ in range(n))

    def sample_input(self, params: Params, rng: random.Random, positive: bool, max_len: int) -> str | None:
        room = max_len - 4  # two '|' and at least a one-character final
        initial = "".join(rng.choice("01") for _ in range(rng.randint(1, max(1, room // 3))))
        ops = self._ops(rng, rng.randint(2, max(2, room // 3)))
        final = _stack_run(params, initial, ops)
        if not positive:
            for _ in range(5):  # another op sequence from the same start, with another result
                other = self._ops(rng, rng.randint(2, max(2, room // 3)))
                if _stack_run(params, initial, other) != final:
                    ops = other
                    break
            else:
                return None
        x = f"{initial}|{ops}|{final}"
        return x if len(x) <= max_len else None


# ---------------------------------------------------------------------------------------------
# Vending machine: the coins' values and the products' prices

_VM_OF = {"+5": "f", "+10": "t", "coffee": "C", "biscuit": "B", "soda": "S"}
_VM_COINS, _VM_GOODS = "ft", "CBS"
_COIN_VALUES, _PRICE_VALUES = (5, 10, 15, 20), (5, 10, 15, 20, 25, 30)
_VM_CAP = 40  # the family's tapes never hold more


def _vm_balance(params: Params, tape: str) -> int | None:
    """The balance after `tape` under rule `params`, or None when a purchase costs more than it."""
    value = dict(zip(_VM_COINS + _VM_GOODS, params, strict=True))
    balance = 0
    for c in tape:
        if c in _VM_COINS:
            balance += value[c]
        elif value[c] > balance:
            return None
        else:
            balance -= value[c]
    return balance


class VendingFamily(Family):
    name, task, alphabet, min_len = "vending", "vending_machine", "ftCBS=0123456789", 5
    task_params = (COINS["+5"], COINS["+10"], PRICES["coffee"], PRICES["biscuit"], PRICES["soda"])

    def render(self, text: str) -> str | None:
        *tokens, last = text.split(",")
        if not tokens or any(t not in _VM_OF for t in tokens) or not last.isdigit():
            return None
        return "".join(_VM_OF[t] for t in tokens) + "=" + last

    def label(self, params: Params, x: str) -> int:
        tape, sep, stated = x.partition("=")
        if not sep or not tape or set(tape) - set(_VM_COINS + _VM_GOODS) or not stated.isdigit():
            return 0
        balance = _vm_balance(params, tape)
        return int(balance is not None and int(stated) == balance)

    def sample_params(self, rng: random.Random) -> Params:
        return tuple(rng.choice(_COIN_VALUES) for _ in _VM_COINS) + tuple(
            rng.choice(_PRICE_VALUES) for _ in _VM_GOODS
        )

    def sample_input(self, params: Params, rng: random.Random, positive: bool, max_len: int) -> str | None:
        value = dict(zip(_VM_COINS + _VM_GOODS, params, strict=True))
        n = rng.randint(3, max(3, max_len - 4))  # '=' and up to two digits after the tape
        tape, balance = "", 0
        while len(tape) < n:  # a walk of the machine: a coin that fits the cap or an affordable purchase
            moves = [c for c in _VM_COINS if balance + value[c] <= _VM_CAP]
            moves += [g for g in _VM_GOODS if value[g] <= balance]
            c = rng.choice(moves)
            tape += c
            balance += value[c] if c in _VM_COINS else -value[c]
        stated = balance
        if not positive:
            spots = [(i, g) for i in range(len(tape) + 1) for g in _VM_GOODS
                     if value[g] > (_vm_balance(params, tape[:i]) or 0)]  # fmt: skip
            if spots and rng.random() < 0.5:  # a purchase the balance at that point cannot pay for
                i, g = rng.choice(spots)
                tape = tape[:i] + g + tape[i:]
                stated = rng.randrange(0, _VM_CAP + 1, 5)
            else:
                stated = rng.choice([b for b in range(0, _VM_CAP + 1, 5) if b != balance])
        x = f"{tape}={stated}"
        return x if len(x) <= max_len else None


FAMILIES: dict[str, Family] = {f.name: f for f in (StackFamily(), ReversalFamily(), VendingFamily())}


# ---------------------------------------------------------------------------------------------
# Held-out and validation rules


@cache
def reference(family: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A fixed sample of the task's ID strings (δ = 0, half positive, rendered, at most
    REFERENCE_MAX_LEN characters) and the task's own labels on them."""
    fam = FAMILIES[family]
    task = TASKS[fam.task]
    rng = random.Random(derive_seed(0, "reference", family))
    xs: list[str] = []
    ys: list[int] = []
    while len(xs) < REFERENCE_SIZE:
        text = task.sample(rng, 0.0, len(xs) % 2 == 0)
        x = None if text is None else fam.render(text)
        if x is not None and len(x) <= REFERENCE_MAX_LEN:
            xs.append(x)
            ys.append(task.check(text))
    return tuple(xs), tuple(ys)


@cache
def agreement(rule: Rule) -> float:
    """The share of the task's reference strings on which `rule` gives the task's label, or the
    opposite label, whichever is larger (1.0: the task's rule, or its negation, there)."""
    xs, ys = reference(rule.family)
    same = sum(rule(x) == y for x, y in zip(xs, ys, strict=True)) / len(xs)
    return max(same, 1.0 - same)


def is_held_out(rule: Rule) -> bool:
    """The task's rule, or a rule whose `agreement` with it is at least HOLD_OUT_AGREEMENT."""
    return rule.params == FAMILIES[rule.family].task_params or agreement(rule) >= HOLD_OUT_AGREEMENT


def is_validation(rule: Rule) -> bool:
    """One rule in VALIDATION_SHARE, by a stable hash of its parameters (never trained on)."""
    return derive_seed(0, "validation", rule.family, str(rule.params)) % VALIDATION_SHARE == 0


def sample_rule(family: str, rng: random.Random, split: str = "train") -> Rule:
    """A random rule of `family` that is not held out: a training one, or a validation one."""
    fam = FAMILIES[family]
    for _ in range(10_000):
        rule = Rule(family, fam.sample_params(rng))
        if not is_held_out(rule) and is_validation(rule) == (split == "validation"):
            return rule
    raise RuntimeError(f"no {split} rule of family {family!r} found in 10000 draws")


def sample_pair(rule: Rule, rng: random.Random, max_len: int) -> tuple[str, int]:
    """One (input, label) of `rule`: positive or negative with probability 1/2, labelled by the rule."""
    fam = FAMILIES[rule.family]
    for _ in range(1000):
        x = fam.sample_input(rule.params, rng, rng.random() < 0.5, max_len)
        if x is not None:
            return x, rule(x)
    raise RuntimeError(f"family {rule.family!r} wrote no input of at most {max_len} characters")


def all_rules(family: str) -> list[Rule]:
    """Every rule of a family with a finite, small rule set (stack, reversal); for the tests."""
    if family == "stack":
        grid = itertools.product(range(2), range(2), (1, 2), range(len(_WRITES)))
    elif family == "reversal":
        grid = itertools.permutations(range(len(_REV_CHARS)))
    else:
        grid = itertools.product(*[_COIN_VALUES] * 2, *[_PRICE_VALUES] * 3)
    return [Rule(family, tuple(p)) for p in grid]


__all__ = [
    "FAMILIES",
    "HOLD_OUT_AGREEMENT",
    "Family",
    "ReversalFamily",
    "Rule",
    "StackFamily",
    "VendingFamily",
    "agreement",
    "all_rules",
    "is_held_out",
    "is_validation",
    "reference",
    "sample_pair",
    "sample_rule",
]
