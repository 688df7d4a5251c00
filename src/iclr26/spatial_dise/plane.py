"""2D geometry of the Spatial-DISE 2D tasks (arXiv 2510.13394): figures on a small integer grid.

The paper draws its 2D items from psychometric tests; we generate them, so every fact an item
rests on is computed here from plain data, never from pixels.

- A polyomino is a frozenset of cells `(row, col)`; a line figure is a frozenset of unit segments
  between lattice points `(x, y)` (horizontal, vertical or diagonal). y grows downward as on
  screen, so `ROTATIONS[1]` turns a figure 90 degrees clockwise as drawn.
- `SYMMETRIES` are the 8 symmetries of the square: 4 rotations and 4 mirrors (mirror, then
  rotate). `canonical(f, group)` is the least normalised image of f under the group, so two
  figures are equal up to rotation iff their canonical forms under `ROTATIONS` agree.
- Folding works on an n x n sheet whose cells are cut by their diagonals into four facets
  (N, E, S, W), so that folds along vertical, horizontal and diagonal lines map facets onto
  facets. Positions are kept in quarter units (4 per cell side): a facet is represented by a
  point strictly inside it, a cell by its centre. A `Fold` reflects every position on its moving
  side through its line; the packet is where the facets lie after all folds. Punched holes are
  unfolded by reflecting them back through every fold (`unfold_holes`) and, independently,
  found by tracking every sheet cell forward through the folds (`holes_by_tracking`).

Drawing helpers paint panels on white with black outlines and grey fills, at the exact pixel
sizes of the item layout (`OPTION_SIZE`, `question_size`), so question and options share a scale.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from iclr26.spatial_dise.items import option_box, question_boxes

Cell = tuple[int, int]  # (row, col)
Point = tuple[int, int]  # (x, y), y down
Segment = tuple[Point, Point]  # endpoints in sorted order
Facet = tuple[int, int, int]  # (row, col, k): k = 0 N, 1 E, 2 S, 3 W quarter of the cell
Polyomino = frozenset[Cell]
LineFigure = frozenset[Segment]

Q = 4
"""Quarter units per cell side: facet and cell-centre positions are integers in these units."""


# ---------------------------------------------------------------- the 8 symmetries of the square


@dataclass(frozen=True)
class Symmetry:
    """A symmetry of the square: (x, y) -> (a x + b y, c x + d y)."""

    name: str
    a: int
    b: int
    c: int
    d: int

    def point(self, x: int, y: int) -> Point:
        """The image of a point."""
        return (self.a * x + self.b * y, self.c * x + self.d * y)

    @property
    def is_rotation(self) -> bool:
        """Rotations have determinant +1, mirrors -1."""
        return self.a * self.d - self.b * self.c == 1

    def then(self, other: Symmetry, name: str) -> Symmetry:
        """`self` followed by `other` (matrix product other @ self)."""
        return Symmetry(
            name,
            other.a * self.a + other.b * self.c,
            other.a * self.b + other.b * self.d,
            other.c * self.a + other.d * self.c,
            other.c * self.b + other.d * self.d,
        )


_R90 = Symmetry("rot90", 0, -1, 1, 0)  # clockwise on screen (y down)
_ID = Symmetry("rot0", 1, 0, 0, 1)
_R180 = _R90.then(_R90, "rot180")
ROTATIONS: tuple[Symmetry, ...] = (_ID, _R90, _R180, _R180.then(_R90, "rot270"))
MIRROR = Symmetry("mirror", -1, 0, 0, 1)
"""Left-right mirror (x -> -x)."""
MIRRORS: tuple[Symmetry, ...] = tuple(MIRROR.then(r, f"mirror+{r.name}") for r in ROTATIONS)
"""Mirror, then rotate by 0/90/180/270 degrees: the 4 reflections of the square."""
SYMMETRIES: tuple[Symmetry, ...] = ROTATIONS + MIRRORS


def _is_segment_figure(figure: Iterable) -> bool:
    """Whether the elements are segments (pairs of points) rather than cells."""
    for element in figure:
        return isinstance(element[0], tuple)
    return False


def normalize(figure: frozenset) -> frozenset:
    """The figure translated so that its least row/col (or x/y) is 0."""
    if not figure:
        return frozenset()
    if _is_segment_figure(figure):
        x0 = min(min(p[0], q[0]) for p, q in figure)
        y0 = min(min(p[1], q[1]) for p, q in figure)
        return frozenset(_segment((p[0] - x0, p[1] - y0), (q[0] - x0, q[1] - y0)) for p, q in figure)
    r0 = min(r for r, _ in figure)
    c0 = min(c for _, c in figure)
    return frozenset((r - r0, c - c0) for r, c in figure)


def _segment(p: Point, q: Point) -> Segment:
    """A segment with its endpoints in sorted order."""
    return (p, q) if p <= q else (q, p)


def transform(symmetry: Symmetry, figure: frozenset) -> frozenset:
    """The normalised image of a polyomino or line figure under a symmetry of the square."""
    if _is_segment_figure(figure):
        return normalize(frozenset(_segment(symmetry.point(*p), symmetry.point(*q)) for p, q in figure))
    # a cell turns about its centre: map the doubled centre (2c+1, 2r+1), which stays odd
    image = set()
    for r, c in figure:
        x, y = symmetry.point(2 * c + 1, 2 * r + 1)
        image.add(((y - 1) // 2, (x - 1) // 2))
    return normalize(frozenset(image))


def canonical(figure: frozenset, group: Sequence[Symmetry] = SYMMETRIES) -> tuple:
    """The least sorted normalised image of `figure` under `group` (its canonical form)."""
    return min(tuple(sorted(transform(s, figure))) for s in group)


def same_up_to_rotation(f: frozenset, g: frozenset) -> bool:
    """Whether g is a rotation (and translation) of f; mirror images differ."""
    return canonical(f, ROTATIONS) == canonical(g, ROTATIONS)


def same_up_to_mirror(f: frozenset, g: frozenset) -> bool:
    """Whether g is f under any of the 8 symmetries (and a translation)."""
    return canonical(f, SYMMETRIES) == canonical(g, SYMMETRIES)


def is_chiral(figure: frozenset) -> bool:
    """Whether no rotation of the figure equals its mirror image."""
    return not same_up_to_rotation(figure, transform(MIRROR, figure))


def is_asymmetric(figure: frozenset) -> bool:
    """Whether the 8 images of the figure are pairwise distinct (trivial symmetry group)."""
    return len({transform(s, figure) for s in SYMMETRIES}) == len(SYMMETRIES)


def rotation_taking(f: frozenset, g: frozenset) -> Symmetry | None:
    """A rotation that maps f onto g (up to translation), if any."""
    target = normalize(g)
    for rotation in ROTATIONS:
        if transform(rotation, f) == target:
            return rotation
    return None


# ---------------------------------------------------------------- polyominoes


def neighbours(cell: Cell) -> list[Cell]:
    """The 4 edge neighbours of a cell."""
    r, c = cell
    return [(r - 1, c), (r, c + 1), (r + 1, c), (r, c - 1)]


def is_connected(cells: frozenset[Cell]) -> bool:
    """Whether the cells form one edge-connected piece."""
    if not cells:
        return False
    start = min(cells)
    seen, stack = {start}, [start]
    while stack:
        for n in neighbours(stack.pop()):
            if n in cells and n not in seen:
                seen.add(n)
                stack.append(n)
    return len(seen) == len(cells)


def random_polyomino(rng: np.random.Generator, size: int, max_side: int = 5) -> Polyomino:
    """A random connected polyomino of `size` cells grown one edge neighbour at a time."""
    cells = {(0, 0)}
    while len(cells) < size:
        frontier = sorted({n for cell in cells for n in neighbours(cell)} - cells)
        rng_cell = frontier[int(rng.integers(len(frontier)))]
        grown = normalize(frozenset(cells | {rng_cell}))
        if max(max(r, c) for r, c in grown) < max_side:
            cells = set(grown)
    return frozenset(cells)


def perimeter(cells: frozenset[Cell]) -> int:
    """The number of unit edges on the polyomino's boundary (how much outline it draws)."""
    return sum(n not in cells for cell in cells for n in neighbours(cell))


def moved_cell(rng: np.random.Generator, cells: Polyomino) -> Polyomino | None:
    """The polyomino with one cell moved to another free neighbour spot, still connected."""
    for _ in range(20):
        order = sorted(cells)
        removed = order[int(rng.integers(len(order)))]
        rest = frozenset(cells - {removed})
        spots = sorted({n for cell in rest for n in neighbours(cell)} - cells)
        if not spots or not is_connected(rest):
            continue
        added = spots[int(rng.integers(len(spots)))]
        moved = normalize(rest | {added})
        if is_connected(moved) and moved != normalize(cells):
            return moved
    return None


def dims(cells: Iterable[Cell]) -> tuple[int, int]:
    """(columns, rows) of a polyomino's bounding box."""
    cells = list(cells)
    return (
        1 + max(c for _, c in cells) - min(c for _, c in cells),
        1 + max(r for r, _ in cells) - min(r for r, _ in cells),
    )


def outline(cells: Polyomino) -> tuple[int, int, int, int]:
    """(perimeter, convex corners, concave corners, pinch points) of a polyomino's outline: how
    much outline it draws and how often the outline turns."""
    counts = [0, 0, 0, 0]
    points = {(r + dr, c + dc) for r, c in cells for dr in (0, 1) for dc in (0, 1)}
    for r, c in points:
        around = [(r - 1, c - 1) in cells, (r - 1, c) in cells, (r, c) in cells, (r, c - 1) in cells]
        k = sum(around)
        if k == 1:
            counts[1] += 1
        elif k == 3:
            counts[2] += 1
        elif k == 2 and around[0] == around[2]:
            counts[3] += 1
    counts[0] = perimeter(cells)
    return tuple(counts)


def overlap(f: Polyomino, g: Polyomino) -> int:
    """How many half-cells two polyominoes share (or leave both empty) when each is centred in
    their common square box: how alike the two look side by side at one scale."""
    side = 2 * max(*dims(f), *dims(g))

    def grid(cells: Polyomino) -> np.ndarray:
        w, h = dims(cells)
        out = np.zeros((side, side), dtype=bool)
        r0, c0 = side // 2 - h, side // 2 - w
        for r, c in normalize(cells):
            out[r0 + 2 * r : r0 + 2 * r + 2, c0 + 2 * c : c0 + 2 * c + 2] = True
        return out

    return int((grid(f) == grid(g)).sum())


def near_miss(rng: np.random.Generator, cells: Polyomino, tries: int = 20) -> Polyomino | None:
    """`moved_cell` with the same `outline` and the same bounding box, so
    that a near miss draws as much outline and fills its box as the original does."""
    box = dims(cells)
    for _ in range(tries):
        moved = moved_cell(rng, cells)
        if moved is not None and outline(moved) == outline(cells) and dims(moved) == box:
            return moved
    return None


def random_partition(
    rng: np.random.Generator, cells: Polyomino, k: int, min_size: int = 2
) -> tuple[Polyomino, ...] | None:
    """The cells split into k connected pieces grown from random seeds (None if one stays small)."""
    order = sorted(cells)
    seeds = [order[int(i)] for i in rng.choice(len(order), size=k, replace=False)]
    pieces = [{s} for s in seeds]
    owner = {s: i for i, s in enumerate(seeds)}
    while len(owner) < len(cells):
        sizes = sorted((len(p), i) for i, p in enumerate(pieces))
        for _, i in sizes:  # grow the smallest piece that can grow
            frontier = sorted({n for c in pieces[i] for n in neighbours(c)} & cells - owner.keys())
            if frontier:
                cell = frontier[int(rng.integers(len(frontier)))]
                pieces[i].add(cell)
                owner[cell] = i
                break
        else:
            return None
    if min(len(p) for p in pieces) < min_size:
        return None
    return tuple(frozenset(p) for p in pieces)


def translate_cells(cells: Iterable[Cell], dr: int, dc: int) -> Polyomino:
    """The cells shifted by (dr, dc)."""
    return frozenset((r + dr, c + dc) for r, c in cells)


@dataclass(frozen=True)
class Placement:
    """Piece `piece` turned by ROTATIONS[`turn`] (normalised) and shifted by (dr, dc)."""

    piece: int
    turn: int
    dr: int
    dc: int

    def cells(self, pieces: Sequence[Polyomino]) -> Polyomino:
        """The cells this placement covers."""
        return translate_cells(transform(ROTATIONS[self.turn], pieces[self.piece]), self.dr, self.dc)


def placements_cover(target: Polyomino, pieces: Sequence[Polyomino], placements: Sequence[Placement]) -> bool:
    """Whether the placements use every piece once and cover `target` exactly, without overlap."""
    if sorted(p.piece for p in placements) != list(range(len(pieces))):
        return False
    covered: list[Cell] = [cell for p in placements for cell in p.cells(pieces)]
    return len(covered) == len(set(covered)) and frozenset(covered) == target


def exact_cover(target: Polyomino, pieces: Sequence[Polyomino]) -> tuple[Placement, ...] | None:
    """A tiling of `target` by the pieces (each once, rotations allowed, no flips), or None.

    Exhaustive: the least uncovered cell must be covered by the least cell of some unused piece in
    some rotation, so trying each gives every tiling.
    """
    if sum(len(p) for p in pieces) != len(target):
        return None
    turns = [
        sorted({(tuple(sorted(transform(r, p))), k) for k, r in enumerate(ROTATIONS)}, key=lambda t: t[1])
        for p in pieces
    ]
    unique = [list({cells: k for cells, k in reversed(t)}.items()) for t in turns]

    def search(free: frozenset[Cell], unused: tuple[int, ...]) -> list[Placement] | None:
        if not free:
            return []
        anchor = min(free)
        tried: set[tuple] = set()
        for i in unused:
            for cells, k in unique[i]:
                if (cells, len(pieces[i])) in tried:
                    continue
                tried.add((cells, len(pieces[i])))
                dr, dc = anchor[0] - cells[0][0], anchor[1] - cells[0][1]
                placed = translate_cells(cells, dr, dc)
                if placed <= free:
                    rest = search(free - placed, tuple(j for j in unused if j != i))
                    if rest is not None:
                        return [Placement(i, k, dr, dc), *rest]
        return None

    found = search(target, tuple(range(len(pieces))))
    return None if found is None else tuple(found)


# ---------------------------------------------------------------- line figures


def lattice_segments(width: int, height: int) -> list[Segment]:
    """Every unit segment (horizontal, vertical, both diagonals) in a width x height cell box."""
    out: list[Segment] = []
    for y in range(height + 1):
        for x in range(width + 1):
            if x < width:
                out.append(((x, y), (x + 1, y)))
            if y < height:
                out.append(((x, y), (x, y + 1)))
            if x < width and y < height:
                out.append(((x, y), (x + 1, y + 1)))
                out.append(_segment((x + 1, y), (x, y + 1)))
    return sorted(out)


def random_line_figure(rng: np.random.Generator, n_segments: int, width: int, height: int) -> LineFigure:
    """A connected figure of unit segments inside a width x height box, grown at shared endpoints."""
    pool = lattice_segments(width, height)
    chosen = {pool[int(rng.integers(len(pool)))]}
    while len(chosen) < n_segments:
        ends = {p for s in chosen for p in s}
        touching = [s for s in pool if s not in chosen and (s[0] in ends or s[1] in ends)]
        chosen.add(touching[int(rng.integers(len(touching)))])
    return frozenset(chosen)


def translate_segments(segments: Iterable[Segment], dx: int, dy: int) -> LineFigure:
    """The segments shifted by (dx, dy)."""
    return frozenset(((p[0] + dx, p[1] + dy), (q[0] + dx, q[1] + dy)) for p, q in segments)


def extent(segments: Iterable[Segment]) -> tuple[int, int]:
    """(width, height) of the bounding box of a normalised line figure."""
    points = [p for s in segments for p in s]
    return max(p[0] for p in points), max(p[1] for p in points)


def occurrences(figure: LineFigure, target: LineFigure) -> list[Point]:
    """Every shift t with target + t a subset of figure (same size and orientation)."""
    if not figure or not target:
        return []
    target = normalize(target)
    w, h = extent(target)
    xs = [p[0] for s in figure for p in s]
    ys = [p[1] for s in figure for p in s]
    return [
        (dx, dy)
        for dy in range(min(ys), max(ys) - h + 1)
        for dx in range(min(xs), max(xs) - w + 1)
        if translate_segments(target, dx, dy) <= figure
    ]


# ---------------------------------------------------------------- paper folding

_FACET_OFFSETS = ((2, 1), (3, 2), (2, 3), (1, 2))  # N, E, S, W: (dx, dy) inside the cell, quarter units


def facet_point(facet: Facet) -> Point:
    """The quarter-unit point that represents a facet (strictly inside it)."""
    r, c, k = facet
    dx, dy = _FACET_OFFSETS[k]
    return (Q * c + dx, Q * r + dy)


def point_facet(point: Point) -> Facet:
    """The facet a representative point stands for."""
    x, y = point
    return (y // Q, x // Q, _FACET_OFFSETS.index((x % Q, y % Q)))


def cell_point(cell: Cell) -> Point:
    """The centre of a cell in quarter units."""
    return (Q * cell[1] + Q // 2, Q * cell[0] + Q // 2)


def point_cell(point: Point) -> Cell:
    """The cell whose centre is `point`."""
    return (point[1] // Q, point[0] // Q)


def cell_facets(cell: Cell) -> frozenset[Facet]:
    """The four facets of a cell."""
    return frozenset((cell[0], cell[1], k) for k in range(4))


def sheet_facets(n: int) -> frozenset[Facet]:
    """Every facet of the n x n sheet."""
    return frozenset((r, c, k) for r in range(n) for c in range(n) for k in range(4))


@dataclass(frozen=True)
class Fold:
    """Fold along a line, turning the `moving` side (+1/-1 sign of the line's function) over.

    axis "v": x = at, "h": y = at, "d": x - y = at, "a": x + y = at (in cell units).
    """

    axis: str
    at: int
    moving: int

    def side(self, point: Point) -> int:
        """-1, 0 or +1: which side of the fold line a quarter-unit point lies on."""
        x, y = point
        value = {"v": x, "h": y, "d": x - y, "a": x + y}[self.axis] - Q * self.at
        return (value > 0) - (value < 0)

    def reflect(self, point: Point) -> Point:
        """The mirror image of a quarter-unit point in the fold line."""
        x, y, t = point[0], point[1], Q * self.at
        if self.axis == "v":
            return (2 * t - x, y)
        if self.axis == "h":
            return (x, 2 * t - y)
        if self.axis == "d":
            return (y + t, x - t)
        return (t - y, t - x)

    def apply(self, point: Point) -> Point:
        """Where a point of the packet lies after this fold."""
        return self.reflect(point) if self.side(point) == self.moving else point


def fold_point(point: Point, folds: Sequence[Fold]) -> Point:
    """Where a sheet point lies after all the folds."""
    for fold in folds:
        point = fold.apply(point)
    return point


def packet(region: frozenset[Facet], fold: Fold) -> frozenset[Facet]:
    """The facets covered by paper after folding `region` once."""
    return frozenset(point_facet(fold.apply(facet_point(f))) for f in region)


def packets(n: int, folds: Sequence[Fold]) -> list[frozenset[Facet]]:
    """The covered facets before each fold and after the last: len(folds) + 1 regions."""
    return list(_packets(n, tuple(folds)))


@lru_cache(maxsize=4096)
def _packets(n: int, folds: tuple[Fold, ...]) -> tuple[frozenset[Facet], ...]:
    if not folds:
        return (sheet_facets(n),)
    before = _packets(n, folds[:-1])
    return (*before, packet(before[-1], folds[-1]))


def bounding_box(region: Iterable[Facet]) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) in cell units of the cells touched by a facet set."""
    cells = [(r, c) for r, c, _ in region]
    return (
        min(c for _, c in cells),
        min(r for r, _ in cells),
        max(c for _, c in cells) + 1,
        max(r for r, _ in cells) + 1,
    )


def rectangle_facets(x0: int, y0: int, x1: int, y1: int) -> frozenset[Facet]:
    """Every facet of the cells in a box."""
    return frozenset((r, c, k) for r in range(y0, y1) for c in range(x0, x1) for k in range(4))


def legal_folds(region: frozenset[Facet]) -> list[Fold]:
    """Folds that lay a flap no larger than the rest onto it: a packet stays inside itself.

    Only a full rectangle is folded: along any vertical or horizontal grid line whose flap is
    at most half, and along either diagonal when it is a square (then both halves are flaps).
    """
    x0, y0, x1, y1 = bounding_box(region)
    if region != rectangle_facets(x0, y0, x1, y1):
        return []
    folds = []
    for axis, lo, hi in (("v", x0, x1), ("h", y0, y1)):
        for at in range(lo + 1, hi):
            if at - lo <= hi - at:
                folds.append(Fold(axis, at, -1))
            if hi - at <= at - lo:
                folds.append(Fold(axis, at, +1))
    if x1 - x0 == y1 - y0:
        for moving in (-1, 1):
            folds.append(Fold("d", x0 - y0, moving))
            folds.append(Fold("a", x1 + y0, moving))
    return folds


def random_folds(rng: np.random.Generator, n: int, count: int, *, diagonal: bool = True) -> tuple[Fold, ...]:
    """`count` random legal folds of the n x n sheet (a diagonal fold can only come last)."""
    folds: list[Fold] = []
    region = sheet_facets(n)
    for step in range(count):
        options = [f for f in legal_folds(region) if diagonal or f.axis in "vh"]
        if step < count - 1:  # after a diagonal fold the packet is a triangle: nothing more folds
            options = [f for f in options if f.axis in "vh"]
        if not options:
            break
        fold = options[int(rng.integers(len(options)))]
        folds.append(fold)
        region = packet(region, fold)
    return tuple(folds)


def folded_view(
    n: int, folds: Sequence[Fold], shaded: Iterable[Cell]
) -> tuple[frozenset[Facet], frozenset[Facet]]:
    """(covered facets, shaded facets) of the folded packet seen from above, when the shading of
    every layer shows through (tracing paper): each shaded sheet facet is tracked through the folds.
    """
    region = packets(n, folds)[-1]
    marks = frozenset(
        point_facet(fold_point(facet_point(f), folds)) for cell in shaded for f in cell_facets(cell)
    )
    return region, marks


def full_cells(region: frozenset[Facet]) -> list[Cell]:
    """The cells all four of whose facets are covered (where a hole can be punched)."""
    return sorted({(r, c) for r, c, _ in region if cell_facets((r, c)) <= region})


def holes_by_tracking(n: int, folds: Sequence[Fold], punches: Iterable[Cell]) -> frozenset[Cell]:
    """The sheet cells that lie under a punch after folding: the holes of the unfolded sheet."""
    targets = {cell_point(p) for p in punches}
    return frozenset(
        (r, c) for r in range(n) for c in range(n) if fold_point(cell_point((r, c)), folds) in targets
    )


def unfold_holes(
    n: int, folds: Sequence[Fold], punches: Iterable[Cell], *, error: tuple[int, str] | None = None
) -> frozenset[Cell]:
    """Holes after unfolding: each punch is reflected back through every fold, last fold first.

    A hole at p after fold i was punched through the part that stayed (if it covers p) and through
    the flap (if it covered p's mirror image). `error=(i, mode)` replaces the reflection at fold i
    by a plausible mistake, for distractors: "rotate" (the flap turned 180 degrees in the plane
    about the fold line's midpoint) or "slide" (the flap shifted across the line, not flipped).
    """
    regions = packets(n, folds)
    holes = {cell_point(p) for p in punches}
    for i in range(len(folds) - 1, -1, -1):
        fold, before = folds[i], regions[i]
        source = fold.reflect
        if error is not None and error[0] == i:
            source = _mistaken_source(fold, before, error[1])
        stay, flap = _split(n, tuple(folds), i)
        unfolded = set()
        for p in holes:
            if cell_facets(point_cell(p)) <= stay:
                unfolded.add(p)
            q = source(p)
            if q[0] % Q == Q // 2 and q[1] % Q == Q // 2 and cell_facets(point_cell(q)) <= flap:
                unfolded.add(q)
        holes = unfolded
    return frozenset(point_cell(p) for p in holes)


@lru_cache(maxsize=4096)
def _split(n: int, folds: tuple[Fold, ...], i: int) -> tuple[frozenset[Facet], frozenset[Facet]]:
    """(the part that stays, the flap) of the packet folded by fold i."""
    fold, before = folds[i], _packets(n, folds[: i + 1])[i]
    stay = frozenset(f for f in before if fold.side(facet_point(f)) != fold.moving)
    return stay, before - stay


def _mistaken_source(fold: Fold, region: frozenset[Facet], mode: str):
    """Where a mistaken unfold thinks a flap point came from (see `unfold_holes`)."""
    x0, y0, x1, y1 = bounding_box(region)
    t = Q * fold.at
    if mode == "rotate":  # point reflection about the fold line's midpoint in the packet
        if fold.axis == "v":
            cx, cy = 2 * t, Q * (y0 + y1)
        elif fold.axis == "h":
            cx, cy = Q * (x0 + x1), 2 * t
        else:
            cx, cy = Q * (x0 + x1), Q * (y0 + y1)
        return lambda p: (cx - p[0], cy - p[1])
    if mode == "slide" and fold.axis in "vh":
        lo, hi = (x0, x1) if fold.axis == "v" else (y0, y1)
        width = Q * ((fold.at - lo) if fold.moving < 0 else (hi - fold.at))
        shift = width if fold.moving < 0 else -width  # the flap slid onto the rest; undo it
        if fold.axis == "v":
            return lambda p: (p[0] - shift, p[1])
        return lambda p: (p[0], p[1] - shift)
    raise ValueError(f"mode must be 'rotate' or 'slide' ('slide' only on v/h folds), got {mode!r} on {fold}")


def mistaken_view(
    n: int, folds: Sequence[Fold], shaded: Iterable[Cell], error: tuple[int, str]
) -> tuple[frozenset[Facet], frozenset[Facet]] | None:
    """The folded view if fold `error[0]` were done by mistake `error[1]` (see `unfold_holes`)."""
    i, mode = error
    regions = packets(n, folds)
    region = regions[i]
    fold = folds[i]
    wrong = _mistaken_source(fold, region, mode)  # for rotate/slide, source and destination are inverse
    if mode == "slide":
        back = wrong((0, 0))
        move = lambda p: (p[0] - back[0], p[1] - back[1])  # noqa: E731
    else:
        move = wrong
    marks = set()
    for cell in shaded:
        for f in cell_facets(cell):
            p = fold_point(facet_point(f), folds[:i])
            if fold.side(p) == fold.moving:
                p = move(p)
            p = fold_point(p, folds[i + 1 :])
            marks.add(p)
    try:
        shaded_facets = frozenset(point_facet(p) for p in marks)
    except ValueError:  # landed off the facet lattice
        return None
    if not shaded_facets <= regions[-1]:
        return None
    return regions[-1], shaded_facets


# ---------------------------------------------------------------- drawing

GREY = (170, 170, 170)
LIGHT = (215, 215, 215)
BLACK = (0, 0, 0)


def _box_size(box: tuple[int, int, int, int]) -> tuple[int, int]:
    return box[2] - box[0], box[3] - box[1]


OPTION_SIZE: tuple[int, int] = _box_size(option_box(0))
"""Pixel size of an option panel in the composed item (drawn 1:1, so no rescaling blur)."""


def question_size(n_panels: int) -> tuple[int, int]:
    """Pixel size of each of n question panels in the composed item."""
    return _box_size(question_boxes(n_panels)[0])


def blank(size: tuple[int, int]) -> Image.Image:
    """A white RGB panel."""
    return Image.new("RGB", size, "white")


def unit_for(cols: float, rows: float, size: tuple[int, int], margin: int = 10) -> int:
    """The largest whole pixel unit that fits cols x rows units in `size` with a margin."""
    return max(4, int(min((size[0] - 2 * margin) / max(cols, 1), (size[1] - 2 * margin) / max(rows, 1))))


def centred_origin(cols: float, rows: float, unit: int, size: tuple[int, int]) -> tuple[int, int]:
    """Top-left pixel that centres cols x rows units in a panel of `size`."""
    return (round((size[0] - cols * unit) / 2), round((size[1] - rows * unit) / 2))


def draw_polyomino(
    draw: ImageDraw.ImageDraw, cells: Iterable[Cell], origin: tuple[int, int], unit: int, fill=GREY
) -> None:
    """Grey cells with thin inner grid lines and a black outline."""
    cells = frozenset(cells)
    ox, oy = origin
    for r, c in sorted(cells):
        draw.rectangle(
            [ox + c * unit, oy + r * unit, ox + (c + 1) * unit, oy + (r + 1) * unit],
            fill=fill,
            outline=(110, 110, 110),
            width=1,
        )
    for r, c in sorted(cells):
        x, y = ox + c * unit, oy + r * unit
        edges = (
            ((r - 1, c), [(x, y), (x + unit, y)]),
            ((r + 1, c), [(x, y + unit), (x + unit, y + unit)]),
            ((r, c - 1), [(x, y), (x, y + unit)]),
            ((r, c + 1), [(x + unit, y), (x + unit, y + unit)]),
        )
        for n, line in edges:
            if n not in cells:
                draw.line(line, fill=BLACK, width=3)


def draw_segments(
    draw: ImageDraw.ImageDraw, segments: Iterable[Segment], origin: tuple[int, int], unit: int, width: int = 3
) -> None:
    """Black unit segments between lattice points."""
    ox, oy = origin
    for p, q in sorted(segments):
        draw.line(
            [(ox + p[0] * unit, oy + p[1] * unit), (ox + q[0] * unit, oy + q[1] * unit)],
            fill=BLACK,
            width=width,
        )


def _facet_polygon(facet: Facet, origin: tuple[int, int], unit: int) -> list[tuple[float, float]]:
    r, c, k = facet
    ox, oy = origin
    x, y, u = ox + c * unit, oy + r * unit, unit
    centre = (x + u / 2, y + u / 2)
    corners = [(x, y), (x + u, y), (x + u, y + u), (x, y + u)]
    return [corners[k], corners[(k + 1) % 4], centre]


def _facet_edges(facet: Facet) -> list[tuple[Point, Point]]:
    """The 3 edges of a facet triangle in half-cell units (corner and centre points)."""
    r, c, k = facet
    corners = [(2 * c, 2 * r), (2 * c + 2, 2 * r), (2 * c + 2, 2 * r + 2), (2 * c, 2 * r + 2)]
    centre = (2 * c + 1, 2 * r + 1)
    a, b = corners[k], corners[(k + 1) % 4]
    return [tuple(sorted(e)) for e in ((a, b), (b, centre), (centre, a))]


def draw_facets(
    draw: ImageDraw.ImageDraw,
    region: Iterable[Facet],
    shaded: Iterable[Facet],
    origin: tuple[int, int],
    unit: int,
    *,
    grid: bool = True,
) -> None:
    """Paper covering `region` (white), `shaded` facets grey, a light cell grid and a black outline."""
    region, shaded = frozenset(region), frozenset(shaded)
    for f in sorted(region):
        draw.polygon(_facet_polygon(f, origin, unit), fill=GREY if f in shaded else (255, 255, 255))
    counts: dict[tuple[Point, Point], int] = {}
    for f in region:
        for e in _facet_edges(f):
            counts[e] = counts.get(e, 0) + 1
    ox, oy = origin
    half = unit / 2
    to_px = lambda p: (ox + p[0] * half, oy + p[1] * half)  # noqa: E731
    if grid:  # cell edges inside the paper
        for (p, q), m in sorted(counts.items()):
            if m == 2 and (p[0] % 2 == 0 and p[1] % 2 == 0 and q[0] % 2 == 0 and q[1] % 2 == 0):
                draw.line([to_px(p), to_px(q)], fill=(120, 120, 120), width=1)
    for (p, q), m in sorted(counts.items()):
        if m == 1:
            draw.line([to_px(p), to_px(q)], fill=BLACK, width=3)


def draw_holes(draw: ImageDraw.ImageDraw, cells: Iterable[Cell], origin: tuple[int, int], unit: int) -> None:
    """A black punched hole at the centre of each cell."""
    ox, oy = origin
    radius = max(3, unit // 4)
    for r, c in sorted(cells):
        x, y = ox + (c + 0.5) * unit, oy + (r + 0.5) * unit
        draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=BLACK)


def draw_fold(
    draw: ImageDraw.ImageDraw, fold: Fold, region: frozenset[Facet], origin: tuple[int, int], unit: int
) -> None:
    """The fold line dashed across the packet and an arrow from the flap to where it lands."""
    x0, y0, x1, y1 = bounding_box(region)
    if fold.axis == "v":
        ends = [(fold.at, y0), (fold.at, y1)]
    elif fold.axis == "h":
        ends = [(x0, fold.at), (x1, fold.at)]
    elif fold.axis == "d":
        ends = [(x0, y0), (x1, y1)]
    else:
        ends = [(x1, y0), (x0, y1)]
    ox, oy = origin
    (ax, ay), (bx, by) = [(ox + x * unit, oy + y * unit) for x, y in ends]
    length = max(abs(bx - ax), abs(by - ay))
    steps = max(2, int(length // 6))
    for i in range(0, steps, 2):
        t0, t1 = i / steps, min(1.0, (i + 1) / steps)
        draw.line(
            [(ax + (bx - ax) * t0, ay + (by - ay) * t0), (ax + (bx - ax) * t1, ay + (by - ay) * t1)],
            fill=BLACK,
            width=2,
        )
    flap = [facet_point(f) for f in region if fold.side(facet_point(f)) == fold.moving]
    fx = sum(p[0] for p in flap) / len(flap)
    fy = sum(p[1] for p in flap) / len(flap)
    tx, ty = fold.reflect((round(fx), round(fy)))
    start = (ox + fx / Q * unit, oy + fy / Q * unit)
    end = (ox + tx / Q * unit, oy + ty / Q * unit)
    draw_arrow(draw, start, end, color=(40, 40, 200))


def draw_arrow(draw: ImageDraw.ImageDraw, start, end, color=BLACK, width: int = 3) -> None:
    """A straight arrow with a filled head at `end`."""
    sx, sy = start
    ex, ey = end
    dx, dy = ex - sx, ey - sy
    norm = max(1e-9, (dx * dx + dy * dy) ** 0.5)
    ux, uy = dx / norm, dy / norm
    head = min(12.0, norm / 2)
    base = (ex - ux * head, ey - uy * head)
    draw.line([start, base], fill=color, width=width)
    draw.polygon(
        [
            (ex, ey),
            (base[0] - uy * head / 2, base[1] + ux * head / 2),
            (base[0] + uy * head / 2, base[1] - ux * head / 2),
        ],
        fill=color,
    )


def storyboard(steps: Sequence[Image.Image], size: tuple[int, int], gap: int = 34) -> Image.Image:
    """Step images left to right, with an arrow between consecutive steps, centred in `size`."""
    panel = blank(size)
    draw = ImageDraw.Draw(panel)
    total = sum(s.width for s in steps) + gap * (len(steps) - 1)
    x = (size[0] - total) // 2
    for i, step in enumerate(steps):
        panel.paste(step, (x, (size[1] - step.height) // 2))
        x += step.width
        if i < len(steps) - 1:
            draw_arrow(draw, (x + 6, size[1] / 2), (x + gap - 6, size[1] / 2), color=(90, 90, 90), width=2)
            x += gap
    return panel
