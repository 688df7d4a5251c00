"""Stack: an initial bit string, push/pop operations, and a final string; the label is whether
applying the operations to the initial string gives the final one."""

from __future__ import annotations

import random

from iclr26.icl_analysis.tasks.base import Task

INITIAL_LENGTHS = (3, 5, 10, 15, 20, 25, 30)
MIN_OPS = (5, 10, 15)


def apply_ops(initial: str, ops: list[str]) -> str:
    """The stack after `ops` (push B appends bit B on the right, pop removes the rightmost bit and is
    ignored on an empty stack); "empty" for no bits."""
    stack = list(initial)
    i = 0
    while i < len(ops):
        if ops[i] == "push":
            stack.append(ops[i + 1])
            i += 2
            continue
        if ops[i] == "pop" and stack:
            stack.pop()
        i += 1
    return "".join(stack) or "empty"


class Stack(Task):
    """The generator draws ops with weights [push, pop, stop] and pushes "0" with probability
    p0; "stop" is accepted once at least `min_ops` draws were made. A negative keeps the initial
    string and a final string from one op sequence but shows another op sequence from the same
    start whose result differs. Q(δ) shifts mass to pushing zeros and away from popping and
    stopping, linearly (Q(0) = P): OOD stacks are longer and zero-heavy.
    """

    name = "stack"
    description = "the label is 1 when applying the operations to the first line gives the last line"

    def _probs(self, delta: float) -> list[float]:
        # [push, pop, stop, P(0 | push)]
        return [0.4 + 0.3 * delta, 0.4 - 0.17 * delta, 0.2 - 0.17 * delta, 0.5 + 0.25 * delta]

    def transitions(self, delta: float) -> list[list[float]]:
        push, pop, stop, zero = self._probs(delta)
        return [[push, pop, stop], [zero, 1 - zero]]

    def _ops(self, rng: random.Random, delta: float, min_ops: int) -> list[str]:
        push, pop, stop, zero = self._probs(delta)
        ops: list[str] = []
        draws = 0
        while len(ops) < 200:
            draws += 1
            op = rng.choices(("push", "pop", "stop"), weights=(push, pop, stop))[0]
            if op == "stop":
                if draws >= min_ops:
                    break
                continue
            ops.append(op)
            if op == "push":
                ops.append("0" if rng.random() < zero else "1")
        return ops

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        initial = "".join(rng.choice("01") for _ in range(rng.choice(INITIAL_LENGTHS)))
        min_ops = rng.choice(MIN_OPS)
        ops = self._ops(rng, delta, min_ops)
        final = apply_ops(initial, ops)
        if not positive:
            for _ in range(5):
                other = self._ops(rng, delta, min_ops)
                if apply_ops(initial, other) != final:
                    ops = other
                    break
            else:
                return None
        return f"{initial}\n{','.join(ops)}\n{final}"

    def check(self, entry: str) -> int:
        lines = entry.split("\n")
        if len(lines) != 3:
            return 0
        initial, ops, final = lines
        return int(apply_ops(initial, [o for o in ops.split(",") if o]) == final)
