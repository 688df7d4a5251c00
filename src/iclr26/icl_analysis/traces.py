"""Worked reasoning for the chain-of-thought exemplars: each task's checker run step by step in
words, ending in 'So the answer is L' with the item's (possibly noisy) label, as the paper's CoT
exemplars do."""

from __future__ import annotations

from iclr26.icl_analysis.tasks import Item, Task
from iclr26.icl_analysis.tasks.hamiltonian import parse_graph
from iclr26.icl_analysis.tasks.mazes import STEPS, MazeComplete, find
from iclr26.icl_analysis.tasks.stack import apply_ops
from iclr26.icl_analysis.tasks.strings import PATTERN, split_tokens
from iclr26.icl_analysis.tasks.vending import COINS, PRICES


def _parity(entry: str) -> list[str]:
    n = entry.count("0")
    return [f"The string has {n} zeros.", f"{n} is {'even' if n % 2 == 0 else 'odd'}."]


def _pattern(entry: str) -> list[str]:
    i = entry.find(PATTERN)
    return [
        f"Looking for {PATTERN}: " + (f"it starts at position {i + 1}." if i >= 0 else "it does not occur.")
    ]


def _reversal(entry: str) -> list[str]:
    left, _, right = entry.partition("#")
    a, b = split_tokens(left) or [], split_tokens(right) or []
    steps = [f"Before #: {' '.join(a)}.", f"Reversed: {' '.join(a[::-1])}.", f"After #: {' '.join(b)}."]
    steps.append("They are the same." if a[::-1] == b else "They differ.")
    return steps


def _stack(entry: str) -> list[str]:
    lines = entry.split("\n")
    if len(lines) != 3:
        return ["The item does not have three lines."]
    initial, ops_line, final = lines
    ops = [o for o in ops_line.split(",") if o]
    steps, stack, i = [f"Start with {initial or 'empty'}."], initial, 0
    while i < len(ops):
        if ops[i] == "push" and i + 1 < len(ops):
            stack, i = stack + ops[i + 1], i + 2
            steps.append(f"push {ops[i - 1]} gives {stack}.")
            continue
        if ops[i] == "pop":
            stack = stack[:-1]
            steps.append(f"pop gives {stack or 'empty'}.")
        i += 1
    got = apply_ops(initial, ops)
    steps.append(f"The stack ends as {got}; the last line is {final}.")
    return steps


def _vending(entry: str, with_final: bool) -> list[str]:
    tokens = entry.split(",")
    stated = tokens.pop() if with_final else None
    balance, steps = 0, ["The balance starts at 0."]
    for t in tokens:
        if t in COINS:
            balance += COINS[t]
            steps.append(f"{t} makes {balance}.")
        elif t in PRICES:
            if PRICES[t] > balance:
                steps.append(f"{t} costs {PRICES[t]}, more than {balance}: refused.")
                continue
            balance -= PRICES[t]
            steps.append(f"{t} costs {PRICES[t]}, leaving {balance}.")
    steps.append(f"The balance is {balance}" + (f"; the item says {stated}." if stated is not None else "."))
    return steps


def _hamiltonian(entry: str) -> list[str]:
    parsed = parse_graph(entry)
    if parsed is None:
        return ["The graph does not parse."]
    adj, path = parsed
    steps = [f"The graph has {len(adj)} vertices and the path has {len(path)}."]
    seen: set[int] = set()
    for a, b in zip(path, path[1:] + path[:1], strict=True):
        if a in seen:
            steps.append(f"{a} repeats.")
            break
        seen.add(a)
        if b not in adj.get(a, set()):
            steps.append(f"There is no edge {a} to {b}.")
            break
        steps.append(f"{a} to {b} is an edge.")
    return steps


def _maze(entry: str, task: Task) -> list[str]:
    try:
        maze, moves = entry.split("\n", 1)[1].rsplit("\n", 2)[0], entry.rsplit("\n", 1)[1]
    except IndexError:
        return ["The item does not parse."]
    grid = [list(line) for line in maze.split("\n")]
    if isinstance(task, MazeComplete):
        ends = MazeComplete._ends(grid)
        r, c = ends[0] if ends else (0, 0)
        steps = [f"The drawn path stops at row {r}, column {c}."]
    else:
        r, c = find(grid, "S")
        steps = [f"Start at S, row {r}, column {c}."]
    for m in moves.split(","):
        if m not in STEPS:
            steps.append(f"{m} is not a move.")
            break
        r, c = r + STEPS[m][0], c + STEPS[m][1]
        cell = grid[r][c] if 0 <= r < len(grid) and 0 <= c < len(grid[r]) else "#"
        where = {"#": "a wall", "+": "the path", "E": "the exit", "?": "the gap", " ": "an open cell"}.get(
            cell, cell
        )
        steps.append(f"{m} to row {r}, column {c}: {where}.")
    return steps


def trace(task: Task, item: Item) -> str:
    """The step-by-step reasoning for `item`, ending in its label."""
    name = task.name
    if name == "parity":
        steps = _parity(item.entry)
    elif name == "pattern_matching":
        steps = _pattern(item.entry)
    elif name == "reversal":
        steps = _reversal(item.entry)
    elif name == "stack":
        steps = _stack(item.entry)
    elif name in ("vending_machine", "vending_machine_sum"):
        steps = _vending(item.shown, with_final=name == "vending_machine")
    elif name == "hamiltonian":
        steps = _hamiltonian(item.entry)
    else:
        steps = _maze(item.entry, task)
    return " ".join(steps) + f" So the answer is {item.label}"
