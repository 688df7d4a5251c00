"""Block clusters on the 5x5x5 grid, and the facts the verifier proves about them.

A shape is a tuple of blocks in growth order; a block is a unit cube (one cell) or a 2x1x1
prism (two face-adjacent cells). The authors grow a cluster on the grid {-2..2}^3 from a random
start cell, adding a face neighbour at a time; a new block is a prism with probability 0.3, and
when prisms fall below 0.8x that rate the probability is raised to min(0.95, 1.5 x 0.3) until
they catch up. Block counts are 3-5 (easy), 5-8 (medium) and 8-12 (hard).

Equivalence is exact, on scene parameters only: two shapes are the same object when one maps onto
the other, block for block, under one of the 24 proper rotations of the cube and a translation
(`canonical`). Mirror images are different objects. Orthographic projections are compared as sets
of grid cells in the viewer's image plane (`projection`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

Cell = tuple[int, int, int]
GRID_MIN, GRID_MAX = -2, 2
PRISM_PROB = 0.3
BLOCKS = {"easy": (3, 5), "medium": (5, 8), "hard": (8, 12)}
"""Blocks per shape by difficulty (inclusive ranges, the authors' cell counts)."""
AXES = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))


@dataclass(frozen=True, order=True)
class Block:
    """A unit cube (one cell) or a 2x1x1 prism (two face-adjacent cells), cells sorted."""

    cells: tuple[Cell, ...]

    def __post_init__(self) -> None:
        if len(self.cells) not in (1, 2) or tuple(sorted(self.cells)) != self.cells:
            raise ValueError(f"a block is one cell or two sorted cells, got {self.cells}")
        if len(self.cells) == 2 and sum(abs(a - b) for a, b in zip(*self.cells, strict=True)) != 1:
            raise ValueError(f"a prism's two cells must share a face, got {self.cells}")

    @property
    def kind(self) -> str:
        """'cube' or 'prism'."""
        return "cube" if len(self.cells) == 1 else "prism"

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners of the box in world units (cells are unit cubes centred on ints)."""
        arr = np.array(self.cells, dtype=float)
        return arr.min(axis=0) - 0.5, arr.max(axis=0) + 0.5


Shape = tuple[Block, ...]


def block(*cells: Cell) -> Block:
    """A block from one or two cells in any order."""
    return Block(tuple(sorted(tuple(int(v) for v in c) for c in cells)))


def cells_of(shape: Iterable[Block]) -> frozenset[Cell]:
    """Every occupied cell."""
    return frozenset(c for b in shape for c in b.cells)


def counts(shape: Iterable[Block]) -> tuple[int, int]:
    """(cubes, prisms)."""
    kinds = [b.kind for b in shape]
    return kinds.count("cube"), kinds.count("prism")


def in_grid(cell: Cell) -> bool:
    """Whether a cell lies on the 5x5x5 grid."""
    return all(GRID_MIN <= v <= GRID_MAX for v in cell)


def _add(a: Cell, b: Sequence[int]) -> Cell:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@cache
def rotations() -> tuple[np.ndarray, ...]:
    """The 24 proper rotations of the cube: signed permutation matrices with determinant +1."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = np.zeros((3, 3), dtype=int)
            for row, (col, s) in enumerate(zip(perm, signs, strict=True)):
                m[row, col] = s
            if round(np.linalg.det(m)) == 1:
                out.append(m)
    return tuple(out)


def transform(shape: Iterable[Block], matrix: np.ndarray) -> Shape:
    """Every block mapped by an integer 3x3 matrix (a rotation or a mirror), order kept."""
    return tuple(block(*(tuple(int(v) for v in matrix @ np.array(c)) for c in b.cells)) for b in shape)


def mirror(shape: Iterable[Block]) -> Shape:
    """The mirror image (x -> -x)."""
    return transform(shape, np.diag([-1, 1, 1]))


def normalize(shape: Iterable[Block]) -> tuple[Block, ...]:
    """Blocks translated so each axis starts at 0, sorted: equal iff equal up to translation."""
    blocks = list(shape)
    if not blocks:
        return ()
    low = np.array([min(c[k] for b in blocks for c in b.cells) for k in range(3)])
    return tuple(sorted(block(*(tuple(int(v) for v in np.array(c) - low) for c in b.cells)) for b in blocks))


def canonical(shape: Iterable[Block]) -> tuple[Block, ...]:
    """The least normalised form over the 24 rotations: equal iff the shapes are one rigid object."""
    blocks = tuple(shape)
    return min(normalize(transform(blocks, r)) for r in rotations())


def same_object(a: Iterable[Block], b: Iterable[Block]) -> bool:
    """Whether b is a and only a, rotated and moved (mirror images are different objects)."""
    a, b = tuple(a), tuple(b)
    return len(a) == len(b) and object_key(a) == object_key(b)


# --- rigid-object keys, vectorised over the 24 rotations -----------------------------------------


@cache
def _rotation_stack() -> np.ndarray:
    """The 24 proper rotations as one (24, 3, 3) array, in `rotations()` order."""
    return np.stack(rotations())


def _block_array(shape: Shape) -> np.ndarray:
    """(n, 2, 3) cells per block, a cube's cell written twice."""
    return np.array([[b.cells[0], b.cells[-1]] for b in shape], dtype=np.int64)


def pose_keys(shape: Shape) -> list[bytes]:
    """For each of the 24 rotations, a key of the rotated shape up to translation.

    Two shapes are one rigid object iff their key sets meet (`object_key` takes the least); this is
    `canonical`'s equivalence, vectorised (each block is coded by its two cells' ids).
    """
    cells = np.einsum("rij,nkj->rnki", _rotation_stack(), _block_array(shape))  # (24, n, 2, 3)
    cells = cells - cells.min(axis=(1, 2), keepdims=True)
    ids = (cells[..., 0] * 64 + cells[..., 1]) * 64 + cells[..., 2]  # (24, n, 2): coordinates < 64
    codes = np.sort(ids.min(axis=2) * 4096 * 64 + ids.max(axis=2), axis=1)  # (24, n)
    return [row.tobytes() for row in codes]


def object_key(shape: Shape) -> bytes:
    """A key equal for two shapes iff one is the other rotated and moved (mirrors differ)."""
    return min(pose_keys(shape))


def carrying_rotations(a: Shape, b: Shape) -> list[np.ndarray]:
    """Every rotation N with N a = b up to translation (empty: different objects)."""
    target = pose_keys(b)[_identity_index()]
    return [r for r, k in zip(rotations(), pose_keys(a), strict=True) if k == target]


@cache
def _identity_index() -> int:
    return next(i for i, r in enumerate(rotations()) if (r == np.eye(3, dtype=int)).all())


def _touch(a: Block, b: Block) -> bool:
    return any(sum(abs(p - q) for p, q in zip(x, y, strict=True)) == 1 for x in a.cells for y in b.cells)


def components(shape: Sequence[Block]) -> list[list[int]]:
    """Indices of the face-connected components of the blocks, largest first."""
    seen: set[int] = set()
    comps: list[list[int]] = []
    for start in range(len(shape)):
        if start in seen:
            continue
        stack, comp = [start], []
        seen.add(start)
        while stack:
            i = stack.pop()
            comp.append(i)
            for j in range(len(shape)):
                if j not in seen and _touch(shape[i], shape[j]):
                    seen.add(j)
                    stack.append(j)
        comps.append(sorted(comp))
    return sorted(comps, key=lambda c: (-len(c), c))


def largest_component(shape: Sequence[Block]) -> Shape:
    """Only the blocks of the largest connected component, growth order kept."""
    if not shape:
        return ()
    keep = set(components(shape)[0])
    return tuple(b for i, b in enumerate(shape) if i in keep)


def is_connected(shape: Sequence[Block]) -> bool:
    """Whether the blocks form one face-connected piece."""
    return len(shape) > 0 and len(components(shape)[0]) == len(shape)


def grow(rng: np.random.Generator, n_blocks: int, *, prism_prob: float = PRISM_PROB) -> Shape:
    """A connected cluster of up to `n_blocks` blocks grown on the 5x5x5 grid (the authors' rule).

    Each step takes a free face neighbour of the cluster; with the (rebalanced) prism probability
    the new block is a prism reaching one cell further in the growth direction, else a cube.
    """
    start = tuple(int(v) for v in rng.integers(GRID_MIN, GRID_MAX + 1, size=3))
    blocks: list[Block] = [block(start)]
    used = {start}
    frontier: dict[Cell, Cell] = {}  # free neighbour -> the direction it was reached in

    def extend(cell: Cell) -> None:
        for d in AXES:
            n = _add(cell, d)
            if in_grid(n) and n not in used and n not in frontier:
                frontier[n] = d

    extend(start)
    while len(blocks) < n_blocks and frontier:
        options = sorted(frontier)
        cell = options[int(rng.integers(len(options)))]
        direction = frontier.pop(cell)
        prisms = sum(b.kind == "prism" for b in blocks)
        p = min(0.95, prism_prob * 1.5) if prisms / len(blocks) < 0.8 * prism_prob else prism_prob
        new = block(cell)
        if rng.random() < p:
            for d in (direction, *(a for a in AXES if a != direction)):  # growth direction first
                far = _add(cell, d)
                if in_grid(far) and far not in used and far not in frontier:
                    new = block(cell, far)
                    break
        blocks.append(new)
        used.update(new.cells)
        frontier = {c: d for c, d in frontier.items() if c not in used}
        for c in new.cells:
            extend(c)
    return largest_component(blocks)


def random_shape(rng: np.random.Generator, difficulty: str) -> Shape:
    """A cluster with the difficulty's block count."""
    lo, hi = BLOCKS[difficulty]
    return grow(rng, int(rng.integers(lo, hi + 1)))


# --- orthographic views -------------------------------------------------------------------------

VIEW_DIRECTIONS: dict[str, tuple[int, int, int]] = {
    "top": (0, 0, 1),
    "bottom": (0, 0, -1),
    "front": (0, -1, 0),
    "back": (0, 1, 0),
    "right": (1, 0, 0),
    "left": (-1, 0, 0),
}
"""Each named view as the direction from the object towards the viewer (z up, front = -y)."""
OPPOSITE = {
    "top": "bottom",
    "bottom": "top",
    "front": "back",
    "back": "front",
    "right": "left",
    "left": "right",
}


def view_axes(
    direction: Sequence[float], up_hint: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The image's right and up vectors for a viewer looking along -direction (z up when possible)."""
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    if up_hint is None:
        up_hint = (0.0, 1.0, 0.0) if abs(d[2]) > 0.99 * np.linalg.norm(d) and d[2] > 0 else (0.0, 0.0, 1.0)
        if d[2] < -0.99:
            up_hint = (0.0, -1.0, 0.0)
    forward = -d
    right = np.cross(forward, np.asarray(up_hint, dtype=float))
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    return right, up


def projection(shape: Iterable[Block], view: str) -> frozenset[tuple[int, int]]:
    """The grid cells an orthographic view covers, in the viewer's (right, up) image coordinates.

    Translated to start at (0, 0): two views draw the same silhouette iff the sets are equal.
    """
    right, up = view_axes(VIEW_DIRECTIONS[view])
    pts = {(round(float(np.dot(c, right))), round(float(np.dot(c, up)))) for c in cells_of(shape)}
    u0, v0 = min(p[0] for p in pts), min(p[1] for p in pts)
    return frozenset((u - u0, v - v0) for u, v in pts)


def set_difference(a: frozenset, b: frozenset) -> float:
    """|a symmetric-difference b| / |a union b| (the authors' >= 0.3 rule for distinct projections)."""
    union = a | b
    return len(a ^ b) / len(union) if union else 0.0


ISOMETRIC = tuple((sx * 6.0, sy * 4.0, 4.0) for sx, sy in ((1, -1), (1, 1), (-1, 1), (-1, -1)))
"""The authors' four isometric camera positions (+-6, +-4, 4), as directions towards the viewer."""


def jittered(direction: Sequence[float], rng: np.random.Generator, amount: float = 0.4) -> tuple[float, ...]:
    """A camera direction moved a little, as the authors jitter their views."""
    return tuple(float(v + rng.uniform(-amount, amount)) for v in direction)
