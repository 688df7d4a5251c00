"""The five 2D tasks of Spatial-DISE (arXiv 2510.13394), generated procedurally.

The paper takes its 2D items from psychometric tests; we generate items in the same spirit on
small integer grids (`plane`), and every answer is proved from scene parameters:

- `ShapeFinding` (Intrinsic-Static): which composite line drawing contains the target figure
  (same size and orientation)? Proved by a translation that embeds it, and by exhausting every
  translation for each distractor.
- `Rotation2D` (Intrinsic-Dynamic): which option is the chiral polyomino turned in the plane?
  Proved by comparing normalised cell sets with its 4 rotations.
- `Folding2D` (Intrinsic-Dynamic): a sheet of tracing paper with shaded cells folded 1-2 times;
  which option is the packet seen from above (the shading of every layer shows through)? Proved by
  tracking every shaded facet through the folds.
- `FoldPunch` (Intrinsic-Dynamic): fold 1-3 times, punch 1-2 holes, which option is the unfolded
  sheet? Proved twice: holes reflected back through every fold, and every sheet cell tracked
  forward under the punches.
- `Assembly2D` (Extrinsic-Dynamic): which figure do the pieces tile (turned, not flipped)? Proved
  by an explicit placement for the answer and an exhaustive search for each distractor.

Difficulty sets figure size, number of folds or pieces, and sheet size (`LEVELS` in each class).

Weak distractors, and how they are avoided. Every option of an item has the same ink: the same
number of cells (and, for polyominoes, the same outline: perimeter and corners), segments (of
each direction, over as many lattice points, as many crossing diagonals), shaded facets or
holes, drawn at one shared scale
(panels are drawn at their exact layout size, so nothing is rescaled differently). Distractors
come in a pair structure {A, A'} + {E, E'}: A' is the answer's scene with one small change (a
cell or punch moved), E a plausible error (a mirror image, a flap rotated or slid instead of
flipped, a decoy), and E' the same error on the changed scene; so the answer is neither the
medoid of the options nor the odd one out. The pixel heuristics of `baselines` found further
leaks, fixed at their cause: near-miss polyominoes keep the original's bounding box (a moved
cell that stretched the box made the near misses look thinner); in rotation and assembly the
pairs share their transforms and all four options share the answer's box, and in rotation the
turn and mirror are chosen so that the options' cell overlap with the question figure spreads
least (a mirror undoes one axis and a half turn both, so mirror images looked more like the
question than the answer did); in folding A' moves shading only among cells the folds move, so
the cells that stay put look the same in every option as in the question; in shape finding the
decoys keep the target's box, direction mix and (for turned or mirrored copies) its centre of
ink. For fold-and-punch, errors are made at an inner fold, so every option keeps the mirror
symmetry of the first fold. Measured pixel heuristics are reported in the spatial_dise README.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from PIL import Image, ImageDraw

from iclr26.spatial_dise import plane
from iclr26.spatial_dise.items import Draft
from iclr26.spatial_dise.plane import (
    MIRRORS,
    OPTION_SIZE,
    ROTATIONS,
    Cell,
    Facet,
    Fold,
    LineFigure,
    Polyomino,
)


class _Redraw(Exception):
    """The random scene admits no good distractors: draw another scene."""


class _PlaneTask:
    """What the five 2D tasks share: one question panel, and a draft that redraws the scene until
    `_build` (the task's own construction at its difficulty's `LEVELS`) admits good distractors."""

    dimension = "2d"
    n_question_panels: ClassVar[int] = 1
    LEVELS: ClassVar[dict[str, dict[str, int]]]
    TRIES: ClassVar[int] = 200

    def _build(self, rng: np.random.Generator, difficulty: str, level: dict[str, int]) -> Draft:
        raise NotImplementedError

    def draft(self, rng: np.random.Generator, difficulty: str) -> Draft:
        """The first scene `_build` completes (it raises _Redraw to ask for another)."""
        level = self.LEVELS[difficulty]
        for _ in range(self.TRIES):
            try:
                return self._build(rng, difficulty, level)
            except _Redraw:
                continue
        raise RuntimeError(f"no scene with valid distractors in {self.TRIES} tries; the LEVELS are too tight")


def _distinct(options: Sequence[Any], key: Callable[[Any], Any] = lambda o: o) -> list[str]:
    """Problems for every pair of equivalent options."""
    keys = [key(o) for o in options]
    return [
        f"options {i} and {j} are equivalent"
        for i in range(len(keys))
        for j in range(i + 1, len(keys))
        if keys[i] == keys[j]
    ]


def _pick(rng: np.random.Generator, items: Sequence[Any]) -> Any:
    """One item, chosen uniformly."""
    if not items:
        raise _Redraw
    return items[int(rng.integers(len(items)))]


# ---------------------------------------------------------------- 2D shape finding


def _direction(segment: plane.Segment) -> int:
    """0 horizontal, 1 vertical, 2 falling diagonal, 3 rising diagonal (y down)."""
    (x0, y0), (x1, y1) = segment
    dx, dy = x1 - x0, y1 - y0
    return 0 if dy == 0 else 1 if dx == 0 else 2 if dx == dy else 3


def _centre(figure: LineFigure) -> tuple[int, int]:
    """Twice the sum of a figure's segment midpoints (where its ink is heavy, times its size)."""
    return sum(p[0] + q[0] for p, q in figure), sum(p[1] + q[1] for p, q in figure)


def _crossed(segment: plane.Segment) -> plane.Segment | None:
    """The other diagonal of a diagonal segment's cell (the one it crosses), None for others."""
    (x0, y0), (x1, y1) = segment
    if x0 == x1 or y0 == y1:
        return None
    return ((x0, y1), (x1, y0)) if (x0, y1) < (x1, y0) else ((x1, y0), (x0, y1))


def _crossings(figure: LineFigure) -> int:
    """How many pairs of diagonals cross at a cell's centre (their ink overlaps there)."""
    return sum(_crossed(s) in figure for s in figure) // 2


def _directions(figure: LineFigure) -> tuple[int, ...]:
    """How many segments of each `_direction` a line figure has."""
    counts = [0, 0, 0, 0]
    for segment in figure:
        counts[_direction(segment)] += 1
    return tuple(counts)


@dataclass(frozen=True)
class ShapeFindingScene:
    """The target line figure (normalised) and the grid x grid cell box the drawings live in."""

    target: LineFigure
    grid: int


class ShapeFinding(_PlaneTask):
    """Find the drawing that contains the target figure, unrotated and at the same size."""

    name = "2d_shape_finding"
    quadrant = "Intrinsic-Static"
    LEVELS: ClassVar[dict[str, dict[str, int]]] = {  # target box and segments, drawing grid and segments
        "easy": {"box": 2, "target": 4, "grid": 3, "total": 11},
        "medium": {"box": 2, "target": 5, "grid": 4, "total": 15},
        "hard": {"box": 3, "target": 6, "grid": 4, "total": 20},
    }
    QUESTION = (
        "The figure on top is hidden in exactly one of the four drawings below, at the same size and "
        "orientation (not rotated or mirrored). Which drawing contains it?"
    )

    def _build(self, rng: np.random.Generator, difficulty: str, level: dict[str, int]) -> Draft:
        """A target, a drawing that hides it, and three that hide only decoys (near misses)."""
        box, grid = level["box"], level["grid"]
        target = plane.normalize(plane.random_line_figure(rng, level["target"], box, box))
        w, h = plane.extent(target)
        if w == 0 or h == 0:
            raise _Redraw
        # decoys fill the target's box with as many segments of each direction (a turned or
        # mirrored copy swaps horizontal with vertical or the two diagonals: pixels see that)
        mix = _directions(target)
        decoys = sorted(
            d
            for d in {plane.transform(s, target) for s in plane.SYMMETRIES[1:]}
            if _centre(d) == _centre(target)  # a turned copy heavy where the target is light shows
        )
        for _ in range(6):  # near misses: one segment swapped for another one touching the rest
            decoys.append(self._swapped(rng, target, box))
        decoys = [
            d
            for d in decoys
            if d is not None and d != target and _directions(d) == mix and plane.extent(d) == (w, h)
        ]
        answer = self._drawing(rng, target, grid, level["total"])
        if answer is None:
            raise _Redraw
        options: list[LineFigure] = [answer]
        for _ in range(40):
            if len(options) == 4:
                break
            drawing = self._drawing(rng, _pick(rng, decoys), grid, level["total"], answer)
            if drawing is not None and not plane.occurrences(drawing, target) and drawing not in options:
                options.append(drawing)
        if len(options) < 4:
            raise _Redraw
        return Draft(self.name, difficulty, self.QUESTION, ShapeFindingScene(target, grid), options)

    @staticmethod
    def _swapped(rng: np.random.Generator, figure: LineFigure, box: int) -> LineFigure | None:
        """The figure with one segment replaced by another that keeps it connected."""
        order = sorted(figure)
        removed = _pick(rng, order)
        rest = set(order) - {removed}
        ends = {p for s in rest for p in s}
        pool = [
            s
            for s in plane.lattice_segments(box, box)
            if s not in figure and (s[0] in ends or s[1] in ends) and _direction(s) == _direction(removed)
        ]
        if not pool:
            return None
        return plane.normalize(frozenset(rest | {_pick(rng, pool)}))

    @staticmethod
    @staticmethod
    def _drawing(
        rng: np.random.Generator, core: LineFigure, grid: int, total: int, like: LineFigure | None = None
    ) -> LineFigure | None:
        """`core` at a random place in the grid, with random touching segments up to `total`; if
        `like` is given, with as many segments of each direction and as many lattice points as it
        has (so as much ink), or None when the segments cannot be placed so."""
        w, h = plane.extent(core)
        if w > grid or h > grid:
            raise _Redraw
        placed = set(
            plane.translate_segments(core, int(rng.integers(grid - w + 1)), int(rng.integers(grid - h + 1)))
        )
        ends = {p for s in placed for p in s}
        if like is not None:  # what the fill still owes: segments per direction, points, crossings
            mix = [m - k for m, k in zip(_directions(like), _directions(frozenset(placed)), strict=True)]
            points = len({p for s in like for p in s}) - len(ends)
            crossings = _crossings(like) - _crossings(frozenset(placed))
            if points < 0 or crossings < 0 or min(mix) < 0:
                return None
        pool = plane.lattice_segments(grid, grid)
        while len(placed) < total:
            touching = [s for s in pool if s not in placed and (s[0] in ends or s[1] in ends)]
            if like is not None:
                room = total - len(placed) - 1  # segments left after this one
                touching = [
                    s
                    for s in touching
                    if mix[_direction(s)] > 0
                    and points - (s[0] not in ends or s[1] not in ends) in range(room + 1)
                    and crossings - (_crossed(s) in placed) in range(room + 1)
                ]
            if not touching:
                return None
            segment = _pick(rng, touching)
            if like is not None:
                mix[_direction(segment)] -= 1
                points -= segment[0] not in ends or segment[1] not in ends
                crossings -= _crossed(segment) in placed
            placed.add(segment)
            ends.update(segment)
        if like is not None and (points or crossings):
            return None
        return frozenset(placed)

    def check(self, draft: Draft) -> list[str]:
        """Option 0 contains the target at some translation; no distractor does at any."""
        target: LineFigure = draft.scene.target
        problems = []
        if not plane.occurrences(draft.options[0], target):
            problems.append("option 0 does not contain the target")
        for k, option in enumerate(draft.options[1:], 1):
            if hits := plane.occurrences(option, target):
                problems.append(f"distractor {k} contains the target at shift {hits[0]}")
        return problems + _distinct(draft.options)

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        """The target alone, and the four drawings, all at one lattice spacing."""
        grid = draft.scene.grid
        unit = plane.unit_for(grid, grid, OPTION_SIZE, margin=14)
        size = plane.question_size(1)
        question = plane.blank(size)
        w, h = plane.extent(draft.scene.target)
        plane.draw_segments(
            ImageDraw.Draw(question), draft.scene.target, plane.centred_origin(w, h, unit, size), unit
        )
        options = []
        for drawing in draft.options:
            panel = plane.blank(OPTION_SIZE)
            plane.draw_segments(
                ImageDraw.Draw(panel), drawing, plane.centred_origin(grid, grid, unit, OPTION_SIZE), unit
            )
            options.append(panel)
        return [question], options


# ---------------------------------------------------------------- 2D rotation


@dataclass(frozen=True)
class RotationScene:
    """The polyomino shown in the question (normalised, with no symmetry)."""

    figure: Polyomino


class Rotation2D(_PlaneTask):
    """Pick the option that is the figure turned in the plane (the others need a flip)."""

    name = "2d_rotation"
    quadrant = "Intrinsic-Dynamic"
    LEVELS: ClassVar[dict[str, dict[str, int]]] = {
        "easy": {"cells": 5, "side": 4},
        "medium": {"cells": 7, "side": 4},
        "hard": {"cells": 9, "side": 5},
    }
    QUESTION = "Which option shows the figure on top turned in the plane (rotated, not flipped over)?"

    def _build(self, rng: np.random.Generator, difficulty: str, level: dict[str, int]) -> Draft:
        """F turned by 90/180/270; a mirror image of F; a near miss P turned; a mirror image of P."""
        figure = plane.random_polyomino(rng, level["cells"], level["side"])
        if not plane.is_asymmetric(figure):
            raise _Redraw
        near = plane.near_miss(rng, figure)
        if near is None or not plane.is_asymmetric(near) or plane.same_up_to_mirror(near, figure):
            raise _Redraw
        options = _balanced(rng, figure, figure, near, ROTATIONS[1:], MIRRORS)
        return Draft(self.name, difficulty, self.QUESTION, RotationScene(figure), options)

    def check(self, draft: Draft) -> list[str]:
        """Option 0 is a rotation of the figure; no distractor equals any of its 4 rotations."""
        turns = {plane.transform(r, draft.scene.figure) for r in ROTATIONS}
        problems = (
            [] if plane.normalize(draft.options[0]) in turns else ["option 0 is not a rotation of the figure"]
        )
        problems += [
            f"distractor {k} is a rotation of the figure"
            for k, option in enumerate(draft.options[1:], 1)
            if plane.normalize(option) in turns
        ]
        return problems + _distinct(draft.options, plane.normalize)

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        """The figure, and the four options, at one cell size."""
        side = self.LEVELS[draft.difficulty]["side"]
        unit = plane.unit_for(side, side, OPTION_SIZE, margin=14)
        return [_polyomino_panel(draft.scene.figure, unit, plane.question_size(1))], [
            _polyomino_panel(o, unit, OPTION_SIZE) for o in draft.options
        ]


def _balanced(
    rng: np.random.Generator,
    question: Polyomino | None,
    figure: Polyomino,
    near: Polyomino,
    turns: Sequence,
    errors: Sequence,
) -> list[Polyomino]:
    """[t(figure), e(figure), t(near), e(near)] for a turn t and an error e (a mirror), all four
    in one bounding box and looking as much alike the question.

    Mirror images resemble a figure more than its turns do (a mirror undoes one axis, a half turn
    both), so options at random orientations would give the answer away as the one least like the
    question. Among the (t, e) whose options share a box, take those whose `plane.overlap` with
    the question spreads least, and pick one at random. The pairs share their transforms, so the
    near misses sit next to their originals and neither pair is the odd one out.
    """
    best: list[list[Polyomino]] = []
    spread = None
    for t, e in itertools.product(turns, errors):
        options = [plane.transform(t, figure), plane.transform(e, figure)]
        options += [plane.transform(t, near), plane.transform(e, near)]
        if len({plane.dims(o) for o in options}) > 1:
            continue
        scores = [0] if question is None else [plane.overlap(question, o) for o in options]
        gap = max(scores) - min(scores)
        if spread is None or gap < spread:
            best, spread = [], gap
        if gap == spread:
            best.append(options)
    return list(_pick(rng, best))


def _polyomino_panel(cells: Polyomino, unit: int, size: tuple[int, int]) -> Image.Image:
    """A polyomino centred in a white panel."""
    panel = plane.blank(size)
    rows = 1 + max(r for r, _ in cells)
    cols = 1 + max(c for _, c in cells)
    plane.draw_polyomino(ImageDraw.Draw(panel), cells, plane.centred_origin(cols, rows, unit, size), unit)
    return panel


# ---------------------------------------------------------------- shared by the two folding tasks


def _sheet_unit(n: int, steps: int) -> int:
    """One cell size for the storyboard (`steps` sheet frames) and the option panels."""
    width, height = plane.question_size(1)
    per_step = (width - 34 * (steps - 1)) / steps
    return min(
        plane.unit_for(n, n, (int(per_step), height), margin=8), plane.unit_for(n, n, OPTION_SIZE, margin=8)
    )


def _sheet_frame(
    n: int, unit: int, size: tuple[int, int] | None = None
) -> tuple[Image.Image, tuple[int, int]]:
    """A panel with the sheet's outline in light grey, and the pixel origin of the sheet."""
    size = size or (n * unit + 16, n * unit + 16)
    panel = plane.blank(size)
    origin = plane.centred_origin(n, n, unit, size)
    ImageDraw.Draw(panel).rectangle(
        [origin[0], origin[1], origin[0] + n * unit, origin[1] + n * unit], outline=plane.LIGHT, width=1
    )
    return panel, origin


def _fold_steps(
    n: int, folds: Sequence[Fold], unit: int, shaded: frozenset[Cell] = frozenset()
) -> list[Image.Image]:
    """One frame per fold: the packet before it (the sheet's shading only on the flat sheet)."""
    frames = []
    for i, (region, fold) in enumerate(zip(plane.packets(n, folds), folds, strict=False)):
        frame, origin = _sheet_frame(n, unit)
        draw = ImageDraw.Draw(frame)
        marks = frozenset(f for cell in shaded for f in plane.cell_facets(cell)) if i == 0 else frozenset()
        plane.draw_facets(draw, region, marks, origin, unit)
        plane.draw_fold(draw, fold, region, origin, unit)
        frames.append(frame)
    return frames


def _mistakes(folds: Sequence[Fold], first: int = 0) -> list[tuple[int, str]]:
    """Every (fold index, mistake) that `unfold_holes` / `mistaken_view` can make, from `first` on."""
    return [
        (i, mode)
        for i in range(first, len(folds))
        for mode in ("rotate", "slide")
        if mode == "rotate" or folds[i].axis in "vh"
    ]


# ---------------------------------------------------------------- 2D folding


@dataclass(frozen=True)
class FoldingScene:
    """An n x n sheet with `shaded` cells, folded by `folds` in order."""

    n: int
    folds: tuple[Fold, ...]
    shaded: frozenset[Cell]


@dataclass(frozen=True)
class FoldView:
    """A folded packet seen from above: the facets covered by paper and the shaded ones."""

    region: frozenset[Facet]
    shaded: frozenset[Facet]


class Folding2D(_PlaneTask):
    """Pick the folded sheet of tracing paper as seen from above (all layers' shading shows)."""

    name = "2d_folding"
    quadrant = "Intrinsic-Dynamic"
    LEVELS: ClassVar[dict[str, dict[str, int]]] = {
        "easy": {"n": 4, "folds": 1, "shaded": 4},
        "medium": {"n": 4, "folds": 2, "shaded": 5},
        "hard": {"n": 6, "folds": 2, "shaded": 8},
    }
    QUESTION = (
        "A square of tracing paper has the shaded squares shown; the shading shows through the paper. "
        "It is folded along the dashed lines in the order shown, each arrow showing which part is "
        "folded over. Which option shows the folded paper seen from above?"
    )

    def _build(self, rng: np.random.Generator, difficulty: str, level: dict[str, int]) -> Draft:
        """The true view A, A' (one sheet cell moved), E (a fold rotated or slid), E' (both)."""
        n = level["n"]
        folds = plane.random_folds(rng, n, level["folds"])
        cells = [(r, c) for r in range(n) for c in range(n)]
        shaded = frozenset(cells[int(i)] for i in rng.choice(len(cells), size=level["shaded"], replace=False))
        answer = FoldView(*plane.folded_view(n, folds, shaded))
        if not 0 < len(answer.shaded) < len(answer.region):
            raise _Redraw
        # A' moves a shaded cell that the folds move to another cell that they move: the cells
        # that stay put look the same in every option as on the sheet in the question
        moving = [
            cell
            for cell in cells
            if all(plane.fold_point(p, folds) != p for p in map(plane.facet_point, plane.cell_facets(cell)))
        ]
        for _ in range(10):
            moved = set(shaded) - {_pick(rng, sorted(shaded.intersection(moving)))}
            moved.add(_pick(rng, sorted(set(moving) - shaded)))
            moved = frozenset(moved)
            error = _pick(rng, _mistakes(folds))
            views = [FoldView(*plane.folded_view(n, folds, moved))]
            for scene in (shaded, moved):  # stop at the first view with other ink than the answer
                if len(views[-1].shaded) != len(answer.shaded):
                    break
                wrong = plane.mistaken_view(n, folds, scene, error)
                views.append(FoldView(*wrong) if wrong else FoldView(frozenset(), frozenset()))
            options = [answer, *views]
            if (
                len(options) == 4
                and all(len(v.shaded) == len(answer.shaded) for v in views)
                and not _distinct(options)
            ):
                meta = {"mistake": error, "moved_sheet": tuple(sorted(moved))}
                return Draft(
                    self.name, difficulty, self.QUESTION, FoldingScene(n, folds, shaded), options, meta
                )
        raise _Redraw

    def check(self, draft: Draft) -> list[str]:
        """Track every shaded facet through the folds; option 0 is that view, no distractor is."""
        scene: FoldingScene = draft.scene
        view = FoldView(*plane.folded_view(scene.n, scene.folds, scene.shaded))
        problems = [] if draft.options[0] == view else ["option 0 is not the folded view"]
        problems += [
            f"distractor {k} is the folded view" for k, o in enumerate(draft.options[1:], 1) if o == view
        ]
        return problems + _distinct(draft.options)

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        """A storyboard of the folds, and each option's packet in place on the sheet's outline."""
        scene: FoldingScene = draft.scene
        unit = _sheet_unit(scene.n, len(scene.folds))
        story = plane.storyboard(
            _fold_steps(scene.n, scene.folds, unit, scene.shaded), plane.question_size(1)
        )
        options = []
        for view in draft.options:
            panel, origin = _sheet_frame(scene.n, unit, OPTION_SIZE)
            plane.draw_facets(ImageDraw.Draw(panel), view.region, view.shaded, origin, unit)
            options.append(panel)
        return [story], options


# ---------------------------------------------------------------- fold and punch


@dataclass(frozen=True)
class FoldPunchScene:
    """An n x n sheet folded by `folds`, then punched through every layer at `punches`."""

    n: int
    folds: tuple[Fold, ...]
    punches: frozenset[Cell]


class FoldPunch(_PlaneTask):
    """Pick the unfolded sheet: holes reflected back through every fold."""

    name = "fold_punch"
    quadrant = "Intrinsic-Dynamic"
    LEVELS: ClassVar[dict[str, dict[str, int]]] = {
        "easy": {"n": 4, "folds": 1, "punches": 1},
        "medium": {"n": 4, "folds": 2, "punches": 2},
        "hard": {"n": 6, "folds": 3, "punches": 2},
    }
    QUESTION = (
        "A square sheet of paper is folded as shown (dashed line: the fold; arrow: the part folded "
        "over), then holes are punched through all layers at the black dots. Which option shows the "
        "sheet when it is unfolded again?"
    )

    def _build(self, rng: np.random.Generator, difficulty: str, level: dict[str, int]) -> Draft:
        """Holes A; A' (one punch moved); E, E' (a mistake at an inner fold, or other punches)."""
        n = level["n"]
        folds = plane.random_folds(rng, n, level["folds"])
        spots = plane.full_cells(plane.packets(n, folds)[-1])
        count = min(int(rng.integers(1, level["punches"] + 1)), len(spots) - 1)
        if count < 1:
            raise _Redraw
        punches = frozenset(spots[int(i)] for i in rng.choice(len(spots), size=count, replace=False))
        answer = plane.unfold_holes(n, folds, punches)

        def moved(p: frozenset[Cell]) -> frozenset[Cell]:
            free = sorted(set(spots) - p)
            return frozenset((p - {_pick(rng, sorted(p))}) | {_pick(rng, free)})

        for _ in range(30):
            other = moved(punches)
            if len(folds) >= 2:  # a mistake at an inner fold keeps the first fold's mirror symmetry
                error = _pick(rng, _mistakes(folds, first=1))
                holes = [plane.unfold_holes(n, folds, p, error=error) for p in (punches, other)]
            else:
                third = moved(punches)
                holes = [plane.unfold_holes(n, folds, p) for p in (third, moved(third))]
                error = None
            options = [answer, plane.unfold_holes(n, folds, other), *holes]
            if all(len(o) == len(answer) for o in options) and not _distinct(options):
                meta = {"mistake": error, "moved_punches": tuple(sorted(other))}
                return Draft(
                    self.name, difficulty, self.QUESTION, FoldPunchScene(n, folds, punches), options, meta
                )
        raise _Redraw

    def check(self, draft: Draft) -> list[str]:
        """Unfold by reflection and by forward tracking; both agree with option 0 and no distractor."""
        scene: FoldPunchScene = draft.scene
        spots = set(plane.full_cells(plane.packets(scene.n, scene.folds)[-1]))
        problems = [
            f"punch {p} is not on a whole cell of the folded packet" for p in sorted(scene.punches - spots)
        ]
        holes = plane.unfold_holes(scene.n, scene.folds, scene.punches)
        tracked = plane.holes_by_tracking(scene.n, scene.folds, scene.punches)
        if holes != tracked:
            problems.append("reflected and tracked holes disagree")
        if draft.options[0] != tracked:
            problems.append("option 0 is not the unfolded sheet")
        problems += [
            f"distractor {k} is the unfolded sheet"
            for k, o in enumerate(draft.options[1:], 1)
            if o == tracked
        ]
        return problems + _distinct(draft.options)

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        """A storyboard (each fold, then the punched packet), and each option's sheet with holes."""
        scene: FoldPunchScene = draft.scene
        unit = _sheet_unit(scene.n, len(scene.folds) + 1)
        steps = _fold_steps(scene.n, scene.folds, unit)
        frame, origin = _sheet_frame(scene.n, unit)
        draw = ImageDraw.Draw(frame)
        plane.draw_facets(draw, plane.packets(scene.n, scene.folds)[-1], frozenset(), origin, unit)
        plane.draw_holes(draw, scene.punches, origin, unit)
        story = plane.storyboard([*steps, frame], plane.question_size(1))
        options = []
        sheet = plane.sheet_facets(scene.n)
        for holes in draft.options:
            panel, origin = _sheet_frame(scene.n, unit, OPTION_SIZE)
            draw = ImageDraw.Draw(panel)
            plane.draw_facets(draw, sheet, frozenset(), origin, unit, grid=False)
            plane.draw_holes(draw, holes, origin, unit)
            options.append(panel)
        return [story], options


# ---------------------------------------------------------------- 2D assembly


@dataclass(frozen=True)
class AssemblyScene:
    """The pieces as shown (normalised polyominoes, each turned at random)."""

    pieces: tuple[Polyomino, ...]


class Assembly2D(_PlaneTask):
    """Pick the figure the pieces tile exactly (moved and turned, never flipped)."""

    name = "2d_assembly"
    quadrant = "Extrinsic-Dynamic"
    LEVELS: ClassVar[dict[str, dict[str, int]]] = {
        "easy": {"pieces": 2, "cells": 8, "side": 4},
        "medium": {"pieces": 3, "cells": 12, "side": 5},
        "hard": {"pieces": 4, "cells": 16, "side": 5},
    }
    QUESTION = (
        "The pieces on top can be moved and turned in the plane but not flipped over. Which option "
        "shows the shape they form together, with no gaps or overlaps?"
    )

    def _build(self, rng: np.random.Generator, difficulty: str, level: dict[str, int]) -> Draft:
        """Target T turned; mirror of T; T with a cell moved (T'); mirror of T'; all at random turns."""
        target = plane.random_polyomino(rng, level["cells"], level["side"])
        if not plane.is_chiral(target):
            raise _Redraw
        parts = plane.random_partition(rng, target, level["pieces"], min_size=3)
        if parts is None:
            raise _Redraw
        pieces = tuple(plane.transform(_pick(rng, ROTATIONS), p) for p in parts)
        near = plane.near_miss(rng, target)
        if near is None:
            raise _Redraw
        options = _balanced(rng, None, target, near, ROTATIONS, MIRRORS)
        if _distinct(options, lambda o: plane.canonical(o, ROTATIONS)):
            raise _Redraw
        if any(plane.exact_cover(o, pieces) is not None for o in options[1:]):
            raise _Redraw
        placement = plane.exact_cover(options[0], pieces)
        return Draft(
            self.name, difficulty, self.QUESTION, AssemblyScene(pieces), options, {"placement": placement}
        )

    def check(self, draft: Draft) -> list[str]:
        """Option 0 is covered by the stored placement; an exhaustive search tiles no distractor."""
        pieces = draft.scene.pieces
        placement = draft.meta.get("placement")
        problems = []
        if placement is None or not plane.placements_cover(draft.options[0], pieces, placement):
            problems.append("the placement does not tile option 0 with the pieces")
        for k, option in enumerate(draft.options[1:], 1):
            if (tiling := plane.exact_cover(option, pieces)) is not None:
                problems.append(f"distractor {k} is tiled by the pieces: {tiling}")
        return problems + _distinct(draft.options, lambda o: plane.canonical(o, ROTATIONS))

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        """The pieces apart in a row, and the four figures, at one cell size."""
        pieces = draft.scene.pieces
        side = self.LEVELS[draft.difficulty]["side"]
        widths = [1 + max(c for _, c in p) for p in pieces]
        height = max(1 + max(r for r, _ in p) for p in pieces)
        size = plane.question_size(1)
        cols = sum(widths) + (len(pieces) - 1)
        unit = min(
            plane.unit_for(cols, height, size, margin=14), plane.unit_for(side, side, OPTION_SIZE, margin=14)
        )
        question = plane.blank(size)
        draw = ImageDraw.Draw(question)
        x0, y0 = plane.centred_origin(cols, height, unit, size)
        for piece, width in zip(pieces, widths, strict=True):
            rows = 1 + max(r for r, _ in piece)
            plane.draw_polyomino(draw, piece, (x0, y0 + (height - rows) * unit // 2), unit)
            x0 += (width + 1) * unit
        return [question], [_polyomino_panel(o, unit, OPTION_SIZE) for o in draft.options]


TASKS_2D: tuple[type, ...] = (ShapeFinding, Rotation2D, Folding2D, FoldPunch, Assembly2D)
"""The five 2D task classes, in the paper's order."""
