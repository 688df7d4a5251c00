"""The answerability gate: can the question be decided from the pictures, not only from the scene?

The verifier (`check`) proves an item on scene parameters: a distractor of 3D rotation is a
different rigid object, a 3D projection option a different silhouette, a 3D assembly option other
block counts. It does not ask whether the difference can be *seen*: a moved block may sit behind
the object in the question view, or in the distractor's view, and the item is then proved yet
visually undecidable. This gate asks it, on the painter's z-buffer (`render.scan`), per distractor:

- 3D rotation: the *distinguishing cells* of a distractor are the cells where it differs from the
  question's object (cells of the blocks in the symmetric difference: a moved block, a mirror's
  swapped cells, a prism where two cubes were) under every *best alignment* (the rotations and
  translations that put the most cells on each other). A distractor is decidable iff, under every
  best alignment, some distinguishing cell shows (a block there) or would show (a block put there)
  with at least `MIN_VISIBLE` of a unit face in the question view and in the distractor's view.
- 3D projection: the distinguishing cells are the 2D cells where an option's silhouette differs
  from the answer's, under every best translation (options are drawn centred, so a viewer compares
  them up to translation). A cell the answer covers is seen when a block of the object projecting
  there shows in the question view; a cell only the distractor covers is seen to be empty when every
  grid cell of that column, within the object's depth along the view, would show if filled. (The
  options themselves are flat silhouettes: every cell of them shows.)
- 3D assembly: every option's loose parts must show (each part at least `MIN_VISIBLE`), and the
  question's two opposite views must tell each distractor's (cubes, prisms) counts from the
  object's: all blocks seen (each cell of each block shows in one of the views), or, where some are
  hidden, the blocks seen already rule the distractor out (it has fewer cubes, or fewer prisms,
  than the blocks seen).

`problems(task, draft)` returns what fails (none: answerable); `items.make_item` redrafts an item
that fails, like one the verifier refuses. The gate draws no random numbers, so switching it off
(`make_item(..., gate=False)`) gives the items generated before it existed.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iclr26.spatial_dise.geometry import (
    VIEW_DIRECTIONS,
    Block,
    Shape,
    block,
    cells_of,
    counts,
    rotations,
    view_axes,
)
from iclr26.spatial_dise.render import Camera, Mesh, block_mesh, frame, scan

Cell = tuple[int, int, int]
MIN_VISIBLE = 0.25
"""Least visible area of a cell (or a part), in unit faces at the panel's scale, for it to count as seen."""
GATED = ("3d_rotation", "3d_projection", "3d_combination")
"""The tasks the gate checks (the others draw every distinguishing feature flat, in full view)."""
_DOWNSCALE = 2  # the gate renders at half the panel's resolution (the scale is kept per unit)


@dataclass
class ViewVisibility:
    """How much of each grid cell shows in one panel: `cells` drawn as unit cubes (plus `extra`, e.g.
    the cone) from `direction`, framed as the panel frames `framed` (the blocks as drawn)."""

    cells: Sequence[Cell]
    direction: Sequence[float]
    panel: tuple[int, int]
    framed: Mesh
    extra: Mesh | None = None
    _cache: dict[Cell, float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        w, h = self.panel
        f = frame(self.framed, Camera(tuple(self.direction), w, h))  # type: ignore[arg-type]
        centre = f.center_u * f.right + f.center_v * f.up
        self.camera = Camera(
            tuple(float(v) for v in self.direction),  # type: ignore[arg-type]
            w // _DOWNSCALE,
            h // _DOWNSCALE,
            scale=f.scale / _DOWNSCALE,
            center=tuple(float(v) for v in centre),  # type: ignore[arg-type]
        )
        self.unit_area = (f.scale / _DOWNSCALE) ** 2  # pixels of one unit face seen head-on
        self.index = {c: i for i, c in enumerate(self.cells)}
        mesh = _exposed(self.cells)
        if self.extra is not None:
            mesh = mesh + self.extra  # its face ids come after the cells' (6 per cell)
        self.ids, self.depth, _ = scan(mesh, self.camera)
        per_cell = Counter((self.ids[self.ids >= 0] // 6).tolist())
        for c, i in self.index.items():
            self._cache[c] = per_cell.get(i, 0) / self.unit_area

    def visible(self, cell: Cell) -> float:
        """Area of `cell` that shows (in unit faces): the cube there if occupied, else a cube put there."""
        if cell not in self._cache:
            ids, depth, _ = scan(block_mesh([block(cell)]), self.camera)
            self._cache[cell] = float(((ids >= 0) & (depth > self.depth + 1e-7)).sum()) / self.unit_area
        return self._cache[cell]

    def seen(self, cell: Cell) -> bool:
        """Whether `cell` shows with at least `MIN_VISIBLE`."""
        return self.visible(cell) >= MIN_VISIBLE


def _exposed(cells: Sequence[Cell]) -> Mesh:
    """`cells` as unit cubes (cell i's faces: ids 6i..6i+5), without the faces two cells share (they
    never show)."""
    mesh = block_mesh([block(c) for c in cells])
    occupied = set(cells)
    keep = np.ones(len(mesh.faces), dtype=bool)
    for t, f in enumerate(mesh.faces.tolist()):
        i, k = divmod(f, 6)  # box_mesh's faces: (axis, low side), (axis, high side) per axis
        step = [0, 0, 0]
        step[k // 2] = 1 if k % 2 else -1
        c = cells[i]
        keep[t] = (c[0] + step[0], c[1] + step[1], c[2] + step[2]) not in occupied
    return Mesh(mesh.triangles[keep], mesh.colors[keep], mesh.faces[keep], mesh.shaded[keep])


def _shape_view(shape: Shape, direction: Sequence[float], panel: tuple[int, int]) -> ViewVisibility:
    return ViewVisibility(sorted(cells_of(shape)), direction, panel, block_mesh(shape))


# --- 3D rotation ------------------------------------------------------------------------------------


def _map_block(b: Block, r: np.ndarray, t: np.ndarray) -> Block:
    return block(*(tuple(int(v) for v in r @ np.array(c) + t) for c in b.cells))


def best_alignments(shape: Shape, other: Shape) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rotations and translations (r, t) mapping `other` onto `shape` (c -> r c + t) that put the
    most cells on each other."""
    target = np.array(sorted(cells_of(shape)))
    source = np.array(sorted(cells_of(other)))
    best, out = -1, []
    for r in rotations():
        moved = source @ r.T
        offsets = Counter(map(tuple, (target[:, None, :] - moved[None, :, :]).reshape(-1, 3).tolist()))
        top = max(offsets.values())
        if top > best:
            best, out = top, []
        if top == best:
            out += [(r, np.array(t)) for t, k in offsets.items() if k == top]
    return out


def distinguishing_cells(shape: Shape, other: Shape, r: np.ndarray, t: np.ndarray) -> list[Cell]:
    """Cells (in `shape`'s frame) of the blocks in which `shape` and `other` mapped by (r, t) differ."""
    mapped = {_map_block(b, r, t) for b in other}
    differ = set(shape) ^ mapped
    return sorted(cells_of(differ))


def rotation_problems(task: Any, draft: Any) -> list[str]:
    """The 3D rotation distractors whose difference from the object cannot be seen (see the module)."""
    shape: Shape = draft.scene
    question = _shape_view(shape, task.question_direction(draft), task.panel_size)
    problems = []
    for i, option in enumerate(draft.options[1:], 1):
        view = _shape_view(option.shape, option.direction, task.panel_size)
        for r, t in best_alignments(shape, option.shape):
            back = r.T  # (r c + t) -> c: the inverse rotation
            diff = distinguishing_cells(shape, option.shape, r, t)
            if not any(
                question.seen(c) and view.seen(tuple(int(v) for v in back @ (np.array(c) - t)))  # type: ignore[arg-type]
                for c in diff
            ):
                problems.append(f"distractor {i}: no cell where it differs shows in both views")
                break
    return problems


# --- 3D projection ----------------------------------------------------------------------------------


def _best_translations(a: frozenset, b: frozenset) -> list[tuple[int, int]]:
    """The translations t of silhouette b that put the most of its cells on a's."""
    offsets = Counter((u - x, v - y) for (u, v), (x, y) in itertools.product(a, b))
    top = max(offsets.values())
    return [t for t, k in offsets.items() if k == top]


def projection_problems(task: Any, draft: Any) -> list[str]:
    """The 3D projection options the question view cannot tell from the answer (see the module)."""
    from iclr26.spatial_dise.blocks3d import best_view

    shape: Shape = draft.scene
    view = draft.meta["view"]
    direction = best_view(shape, draft.meta["question_dirs"])
    cone = task.cone(shape, view)
    question = ViewVisibility(
        sorted(cells_of(shape)), direction, task.panel_size, block_mesh(shape) + cone, extra=cone
    )
    right, up = (np.rint(a).astype(int) for a in view_axes(VIEW_DIRECTIONS[view]))
    depth_axis = np.array(VIEW_DIRECTIONS[view], dtype=int)
    cells = sorted(cells_of(shape))
    u0 = min(int(right @ c) for c in cells)
    v0 = min(int(up @ c) for c in cells)
    depths = [int(depth_axis @ c) for c in cells]
    column: dict[tuple[int, int], list[Cell]] = {}
    for c in cells:
        column.setdefault((int(right @ c) - u0, int(up @ c) - v0), []).append(c)

    def shows(cell2d: tuple[int, int], covered: bool) -> bool:
        if covered:  # some block of the object in this column shows
            return any(question.seen(c) for c in column.get(cell2d, []))
        u, v = cell2d[0] + u0, cell2d[1] + v0  # empty: every cell of the column shows if filled
        for d in range(min(depths), max(depths) + 1):
            c = right * u + up * v + depth_axis * d
            if not question.seen(tuple(int(x) for x in c)):  # type: ignore[arg-type]
                return False
        return True

    answer = draft.options[0].cells
    problems = []
    for i, option in enumerate(draft.options[1:], 1):
        for du, dv in _best_translations(answer, option.cells):
            moved = frozenset((u + du, v + dv) for u, v in option.cells)
            diff = [(c, c in answer) for c in sorted(answer ^ moved)]
            if not any(shows(c, covered) for c, covered in diff):
                problems.append(f"option {i}: no cell where its silhouette differs shows in the question")
                break
    return problems


# --- 3D assembly ------------------------------------------------------------------------------------


def _parts_shown(task: Any, option: Any) -> list[float]:
    """Visible area (unit faces) of each loose part of an assembly option, as its panel draws it."""
    w, h = task.panel_size
    mesh = task.layout(option.kinds)
    n = len(option.kinds)
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    centre = ((cols - 1) * task.spacing / 2 + 0.5, 0.0, -(rows - 1) * task.spacing / 2)
    scale = 0.85 * min(w, h) / (max(cols, rows) * task.spacing)
    cam = Camera(
        tuple(option.direction), w // _DOWNSCALE, h // _DOWNSCALE, scale=scale / _DOWNSCALE, center=centre
    )  # type: ignore[arg-type]
    ids, _, _ = scan(mesh, cam)
    per = Counter((ids[ids >= 0] // 6).tolist())
    unit = (scale / _DOWNSCALE) ** 2
    return [per.get(k, 0) / unit for k in range(n)]


def combination_problems(task: Any, draft: Any) -> list[str]:
    """The 3D assembly options whose counts the pictures cannot tell from the object's (see the module)."""
    from iclr26.spatial_dise.blocks3d import best_view

    shape: Shape = draft.scene
    q = best_view(shape, draft.meta["question_dirs"])
    views = [_shape_view(shape, d, task.panel_size) for d in (q, tuple(-v for v in q))]
    seen = [b for b in shape if all(any(v.seen(c) for v in views) for c in b.cells)]
    problems = []
    for i, option in enumerate(draft.options):
        hidden = [k for k, a in enumerate(_parts_shown(task, option)) if a < MIN_VISIBLE]
        if hidden:
            problems.append(f"option {i}: loose part(s) {hidden} do not show")
    if len(seen) < len(shape):
        cubes, prisms = counts(seen)
        for i, option in enumerate(draft.options[1:], 1):
            c, p = option.counts
            if c >= cubes and p >= prisms:
                problems.append(
                    f"distractor {i}: {len(shape) - len(seen)} block(s) hidden in both views, and its "
                    f"counts {(c, p)} fit the blocks seen {(cubes, prisms)}"
                )
    return problems


_CHECKS = {
    "3d_rotation": rotation_problems,
    "3d_projection": projection_problems,
    "3d_combination": combination_problems,
}


def problems(task: Any, draft: Any) -> list[str]:
    """Why `draft` of `task` cannot be decided from its pictures (empty: answerable, or not gated)."""
    check = _CHECKS.get(task.name)
    return check(task, draft) if check is not None else []


def answerable(task: Any, draft: Any) -> bool:
    """Whether the gate passes `draft`."""
    return not problems(task, draft)


__all__ = [
    "GATED",
    "MIN_VISIBLE",
    "ViewVisibility",
    "answerable",
    "best_alignments",
    "combination_problems",
    "distinguishing_cells",
    "problems",
    "projection_problems",
    "rotation_problems",
]
