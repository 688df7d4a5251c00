"""The maze tasks, on mazes made with Eller's algorithm: Maze Solve (does a move list lead from S
to E along the drawn path?) and Maze Complete (do the candidate moves fill the gap cut from the
drawn path?)."""

from __future__ import annotations

import itertools
import random
from collections import deque

from iclr26.icl_analysis.tasks.base import Task

STEPS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
Cell = tuple[int, int]


def eller_maze(k: int, p_join: float, p_down: float, rng: random.Random) -> list[list[str]]:
    """A perfect k×k maze by Eller's algorithm, as a (2k+1)² grid of "#" and " ": row by row, join
    neighbouring cells of different sets with probability `p_join`, then carve down from each cell
    with probability `p_down` (at least once per set); the last row joins every remaining set."""
    size = 2 * k + 1
    grid = [["#"] * size for _ in range(size)]
    sets = list(range(k))
    fresh = k
    for r in range(k):
        for c in range(k):
            grid[2 * r + 1][2 * c + 1] = " "
        last = r == k - 1
        for c in range(k - 1):
            if sets[c] != sets[c + 1] and (last or rng.random() < p_join):
                grid[2 * r + 1][2 * c + 2] = " "
                old, new = sets[c + 1], sets[c]
                sets = [new if s == old else s for s in sets]
        if last:
            break
        below = [-1] * k
        for s in dict.fromkeys(sets):
            members = [c for c in range(k) if sets[c] == s]
            down = [c for c in members if rng.random() < p_down] or [rng.choice(members)]
            for c in down:
                grid[2 * r + 2][2 * c + 1] = " "
                below[c] = s
        for c in range(k):
            if below[c] < 0:
                below[c] = fresh
                fresh += 1
        sets = below
    grid[0][1] = "S"
    grid[2 * k - 1][2 * k] = "E"
    return grid


def find(grid: list[list[str]], mark: str) -> Cell:
    """The cell holding `mark`."""
    for r, row in enumerate(grid):
        if mark in row:
            return r, row.index(mark)
    raise ValueError(f"the maze has no {mark!r}")


def shortest_path(grid: list[list[str]]) -> list[Cell]:
    """The S-to-E path by breadth-first search over open cells (unique in a perfect maze)."""
    start, end = find(grid, "S"), find(grid, "E")
    prev: dict[Cell, Cell | None] = {start: None}
    todo = deque([start])
    while todo:
        cell = todo.popleft()
        if cell == end:
            break
        for dr, dc in STEPS.values():
            nxt = (cell[0] + dr, cell[1] + dc)
            inside = 0 <= nxt[0] < len(grid) and 0 <= nxt[1] < len(grid)
            if inside and grid[nxt[0]][nxt[1]] != "#" and nxt not in prev:
                prev[nxt] = cell
                todo.append(nxt)
    path, cell = [], end
    while cell is not None:
        path.append(cell)
        cell = prev[cell]
    return path[::-1]


def moves_of(path: list[Cell]) -> list[str]:
    """The moves between consecutive cells."""
    names = {v: k for k, v in STEPS.items()}
    return [names[(b[0] - a[0], b[1] - a[1])] for a, b in itertools.pairwise(path)]


def draw(grid: list[list[str]]) -> str:
    return "\n".join("".join(row) for row in grid)


def _mutate(moves: list[str], rng: random.Random) -> list[str]:
    """A corrupted move list: one move added (20%), the last dropped (20%), or one or two moves
    replaced by other directions (60%)."""
    out = list(moves)
    x = rng.random()
    if x < 0.2:
        out.append(rng.choice(list(STEPS)))
    elif x < 0.4 and len(out) > 1:
        out.pop()
    else:
        for _ in range(2 if rng.random() < 0.25 else 1):
            i = rng.randrange(len(out))
            out[i] = rng.choice([m for m in STEPS if m != out[i]])
    return out


class _MazeTask(Task):
    sizes: tuple[int, ...] = (3, 4, 6, 8, 10)

    def _skew(self, delta: float) -> float:
        return 0.5 + 0.45 * delta  # the join/down skew; 0.5 at δ = 0 (Q(0) = P)

    def transitions(self, delta: float) -> list[list[float]]:
        shift = self._skew(delta)
        return [[shift, 1 - shift]]

    def _maze(self, rng: random.Random, delta: float) -> tuple[list[list[str]], list[Cell]]:
        shift = self._skew(delta)
        p_join, p_down = (shift, 1 - shift) if rng.random() < 0.5 else (1 - shift, shift)
        grid = eller_maze(rng.choice(self.sizes), p_join, p_down, rng)
        path = shortest_path(grid)
        for r, c in path[1:-1]:
            grid[r][c] = "+"
        return grid, path


def _parse(entry: str, header: str) -> tuple[list[list[str]], list[str]] | None:
    try:
        maze, moves = entry.split(f"\n{header}\n")
        grid = [list(line) for line in maze.split("\n")[1:]]
        return grid, [m for m in moves.split(",") if m]
    except ValueError:
        return None


def _walk(grid: list[list[str]], start: Cell, moves: list[str], allowed: str) -> list[Cell] | None:
    """The cells `moves` visit from `start`, each one of `allowed` and none twice; None otherwise."""
    cells, seen = [], {start}
    r, c = start
    for m in moves:
        if m not in STEPS:
            return None
        r, c = r + STEPS[m][0], c + STEPS[m][1]
        if not (0 <= r < len(grid) and 0 <= c < len(grid[r])) or grid[r][c] not in allowed or (r, c) in seen:
            return None
        seen.add((r, c))
        cells.append((r, c))
    return cells


class MazeSolve(_MazeTask):
    """A maze with its S-to-E path drawn ("+") and a move list; the label is whether the moves follow
    the drawn path from S to E. Q(δ) skews Eller's join/carve probabilities (0.5 + 0.45δ)."""

    name = "maze_solve"
    description = "the label is 1 when the moves walk the drawn path from S to E"
    _HEADER = "Moves:"

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        grid, path = self._maze(rng, delta)
        moves = moves_of(path)
        if not positive:
            moves = _mutate(moves, rng)
        return f"Maze:\n{draw(grid)}\n{self._HEADER}\n{','.join(moves)}"

    def check(self, entry: str) -> int:
        parsed = _parse(entry, self._HEADER)
        if parsed is None:
            return 0
        grid, moves = parsed
        cells = _walk(grid, find(grid, "S"), moves, "+E")
        marked = sum(row.count("+") for row in grid)
        return int(cells is not None and bool(cells) and grid[cells[-1][0]][cells[-1][1]] == "E"
                   and len(cells) == marked + 1)  # fmt: skip


class MazeComplete(_MazeTask):
    """A maze whose drawn path has three cells cut out (blank, the middle one "?"), and candidate
    moves from the last drawn cell before the gap; the label is whether they cross the gap to the
    drawn path after it."""

    name = "maze_complete"
    description = "the label is 1 when the moves fill the gap (?) in the drawn path"
    sizes = (3, 4, 5, 6)
    _HEADER = "Missing moves:"

    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        grid, path = self._maze(rng, delta)
        if len(path) < 7:
            return None
        i = rng.randrange(2, len(path) - 4)  # the gap is path[i..i+2]; path[i-1] and path[i+3] stay drawn
        for j, (r, c) in enumerate(path[i : i + 3]):
            grid[r][c] = "?" if j == 1 else " "
        moves = moves_of(path[i - 1 : i + 3])
        if not positive:
            moves = _mutate(moves, rng)
        return f"Maze:\n{draw(grid)}\n{self._HEADER}\n{','.join(moves)}"

    @staticmethod
    def _ends(grid: list[list[str]]) -> tuple[Cell, Cell] | None:
        """The drawn cells on either side of the gap: walk the drawn path from S and from E."""

        def walk(start: Cell) -> Cell:
            prev, cell = None, start
            while True:
                nxt = [
                    (cell[0] + dr, cell[1] + dc)
                    for dr, dc in STEPS.values()
                    if 0 <= cell[0] + dr < len(grid) and 0 <= cell[1] + dc < len(grid[0])
                    and grid[cell[0] + dr][cell[1] + dc] in "+SE" and (cell[0] + dr, cell[1] + dc) != prev
                ]  # fmt: skip
                if len(nxt) != 1:
                    return cell
                prev, cell = cell, nxt[0]

        try:
            return walk(find(grid, "S")), walk(find(grid, "E"))
        except ValueError:
            return None

    def check(self, entry: str) -> int:
        parsed = _parse(entry, self._HEADER)
        if parsed is None:
            return 0
        grid, moves = parsed
        ends = self._ends(grid)
        if ends is None:
            return 0
        before, after = ends
        cells = _walk(grid, before, moves, " ?")
        if not cells or not any(grid[r][c] == "?" for r, c in cells):
            return 0
        r, c = cells[-1]
        return int(abs(r - after[0]) + abs(c - after[1]) == 1)
