"""The three block-cluster tasks of Spatial-DISE (arXiv 2510.13394): 3D rotation, projection, assembly.

They follow the authors' generator (shinmohuang/SpatialDise, generator/tasks/3d/3d_rotation.py,
3d_projection.py, 3d_combination.py) with our painter in place of Blender, and every item is proved
on scene parameters (block cells), never on pixels:

- `Rotation3D` ("3d_rotation", Intrinsic-Dynamic): which option is the question's object, rotated?
  Proof: option 0 is the same rigid object (`geometry.same_object`), no distractor is, no two
  options are.
- `Projection3D` ("3d_projection", Extrinsic-Static): which orthographic view does the blue cone
  mark? Proof: option 0's cell set is the shape's projection for that view, and every two options'
  cell sets differ by `set_difference` >= 0.3 (the authors' rule). Deviations, all against pixel
  shortcuts (`baselines.PIXEL_BASELINES`, audited by benchmarks/spatial_dise/heuristics.py): the
  question's shape and the edited distractors are sibling edits of one hidden shape, matched in
  silhouette size; the other-view distractor comes as a pair; the options are drawn unshaded; a
  side view's question camera is more oblique than the authors' isometric ones (`question_dirs`).
- `Combination3D` ("3d_combination", the paper's 3D assembly, Extrinsic-Dynamic): which set of
  loose blocks builds the object seen from two opposite sides? Proof: option 0 has the shape's
  (cubes, prisms) counts and every option's counts are distinct.

The question views follow the authors' `find_best_view`: the isometric camera showing the most
blocks (`render.visible_blocks`). That rule only chooses a picture, so it runs in `panels`, not in
`draft`, which keeps drafting and proving fast.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from iclr26.spatial_dise.geometry import (
    AXES,
    BLOCKS,
    ISOMETRIC,
    OPPOSITE,
    VIEW_DIRECTIONS,
    Block,
    Shape,
    block,
    carrying_rotations,
    cells_of,
    counts,
    in_grid,
    is_connected,
    jittered,
    largest_component,
    mirror,
    object_key,
    projection,
    random_shape,
    rotations,
    set_difference,
    transform,
    view_axes,
)
from iclr26.spatial_dise.items import Draft
from iclr26.spatial_dise.render import Camera, block_mesh, cone_mesh, render, visible_blocks

Direction = tuple[float, ...]
PANEL = (320, 240)
"""Panel size in pixels (`items.compose` rescales)."""
DISTRACTOR_STRENGTH = {"easy": 0.2, "medium": 0.5, "hard": 0.8}
"""The authors' numeric distractor difficulty per difficulty label."""


def _tipping_rotations() -> list[np.ndarray]:
    """The 16 rotations that do not keep the z axis pointing up (they tip the object over)."""
    return [r for r in rotations() if r[2, 2] != 1]


# --- shape edits ----------------------------------------------------------------------------------


def truncated(shape: Shape, strength: float) -> Shape:
    """The authors' truncated distractor: drop the last floor(n (0.2 + 0.3 d)) blocks grown (>= 1, < n)."""
    n = len(shape)
    drop = max(1, min(int(n * (0.2 + strength * 0.3)), n - 1))
    return largest_component(shape[: n - drop])


def _placements(rest: Shape, kind: str) -> list[Block]:
    """Every block of `kind` on free grid cells touching `rest` by a face."""
    used = cells_of(rest)
    free = sorted({(c[0] + d[0], c[1] + d[1], c[2] + d[2]) for c in used for d in AXES} - used)
    out = []
    for c in free:
        if not in_grid(c):
            continue
        if kind == "cube":
            out.append(block(c))
            continue
        for d in AXES:
            far = (c[0] + d[0], c[1] + d[1], c[2] + d[2])
            if in_grid(far) and far not in used and d > (0, 0, 0):  # each prism once
                out.append(block(c, far))
    return out


def edited(shape: Shape, rng: np.random.Generator, edit: str) -> Shape | None:
    """`shape` with one block added, removed or moved to a free neighbouring place (None: no room).

    The result stays one face-connected piece; a moved block keeps its kind, so the (cubes,
    prisms) counts and the block count are unchanged.
    """
    if edit == "add":
        kind = "prism" if rng.random() < 0.3 else "cube"
        spots = _placements(shape, kind)
        return (*shape, spots[int(rng.integers(len(spots)))]) if spots else None
    for i in rng.permutation(len(shape)):
        rest = shape[:i] + shape[i + 1 :]
        if not rest or not is_connected(rest):
            continue
        if edit == "remove":
            return rest
        spots = [b for b in _placements(rest, shape[i].kind) if b != shape[i]]
        if spots:
            return (*rest[:i], spots[int(rng.integers(len(spots)))], *rest[i:])
    return None


def _connected(shape: Shape) -> bool:
    """Whether the blocks are one face-connected piece (a quick flood fill over cells)."""
    cells = {c for b in shape for c in b.cells}
    if not cells:
        return False
    start = next(iter(cells))
    seen, stack = {start}, [start]
    while stack:
        x, y, z = stack.pop()
        for dx, dy, dz in AXES:
            n = (x + dx, y + dy, z + dz)
            if n in cells and n not in seen:
                seen.add(n)
                stack.append(n)
    return len(seen) == len(cells)


def _spot(rng: np.random.Generator, rest: Shape, kind: str, tries: int = 12) -> Block | None:
    """A random block of `kind` on free grid cells touching `rest` by a face (None: none found)."""
    used = {c for b in rest for c in b.cells}
    cells = sorted(used)
    for _ in range(tries):
        x, y, z = cells[int(rng.integers(len(cells)))]
        d = AXES[int(rng.integers(6))]
        c = (x + d[0], y + d[1], z + d[2])
        if c in used or not in_grid(c):
            continue
        if kind == "cube":
            return block(c)
        e = AXES[int(rng.integers(6))]
        far = (c[0] + e[0], c[1] + e[1], c[2] + e[2])
        if far not in used and in_grid(far):
            return block(c, far)
    return None


def quick_edit(shape: Shape, rng: np.random.Generator, edit: str) -> Shape | None:
    """`edited` by random trials instead of listing every place (drafting tries many edits).

    "add" puts a cube (a prism with probability 0.3) on a free face neighbour; "remove" drops a
    block whose removal keeps the rest connected; "move" does both, keeping the block's kind.
    """
    if edit == "add":
        b = _spot(rng, shape, "prism" if rng.random() < 0.3 else "cube")
        return None if b is None else (*shape, b)
    for i in rng.permutation(len(shape))[:4]:
        rest = shape[:i] + shape[i + 1 :]
        if not rest or not _connected(rest):
            continue
        if edit == "remove":
            return rest
        b = _spot(rng, rest, shape[i].kind)
        if b is not None and b != shape[i]:
            return (*rest[:i], b, *rest[i:])
    return None


def _direction(rng: np.random.Generator, index: int | None = None) -> Direction:
    """A jittered isometric camera direction (a random one of the authors' four unless `index`)."""
    k = int(rng.integers(len(ISOMETRIC))) if index is None else index
    return jittered(ISOMETRIC[k], rng)


def best_view(shape: Shape, directions: list[Direction]) -> Direction:
    """The authors' question-view rule: the direction showing the most blocks (first on ties)."""
    return _best_view(tuple(shape), tuple(tuple(d) for d in directions))


@functools.lru_cache(maxsize=64)
def _best_view(shape: Shape, directions: tuple[Direction, ...]) -> Direction:
    """`best_view`, remembered: the gate and the panels ask it of the same draft."""
    seen = [visible_blocks(shape, d) for d in directions]
    return directions[int(np.argmax(seen))]


def _shape_panel(shape: Shape, direction: Direction, size: tuple[int, int] = PANEL) -> Image.Image:
    return render(block_mesh(shape), Camera(tuple(direction), size[0], size[1]))  # type: ignore[arg-type]


# --- 3D rotation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pose:
    """A shape as drawn: its blocks (already rotated) seen from one camera direction."""

    shape: Shape
    direction: Direction


@dataclass
class Rotation3D:
    """3D rotation matching (the authors' 3d_rotation.py).

    Question: the shape from the jittered isometric view showing the most blocks. Correct option:
    the same shape turned by a random cube rotation that tips it over (no rotation carrying it
    onto the answer keeps z up, so the answer is never just the question seen from another
    isometric camera; our choice, `tip=False` gives the authors' camera swap), from a random
    jittered isometric view. Distractors get random tipping poses too, so pose is no cue.

    Distractor families (`families`, sampling weights): the authors' two are "truncated" (the last
    floor(n (0.2 + 0.3 d)) blocks of the growth dropped) and "fresh" (a new random shape of the
    difficulty), half and half. Truncated shapes have fewer blocks and an ink count finds the
    answer among them, so the default mix leans on two families that keep the block count:
    "mirror" (the mirror image, chiral shapes only, at most one per item) and "moved" (one block
    moved to a free neighbouring place). A distractor equal to the original object or to an
    earlier option is redrawn (the authors' signature check, 10 tries).
    """

    families: dict[str, float] = field(
        default_factory=lambda: {"mirror": 0.35, "moved": 0.35, "truncated": 0.15, "fresh": 0.15}
    )
    tip: bool = True
    panel_size: tuple[int, int] = PANEL

    name = "3d_rotation"
    quadrant = "Intrinsic-Dynamic"
    dimension = "3d"
    n_question_panels = 1
    question = (
        "Which option shows the same object as the top image, only turned to another "
        "orientation (not mirrored, with no block added, removed or moved)?"
    )

    def __post_init__(self) -> None:
        unknown = set(self.families) - {"mirror", "moved", "truncated", "fresh"}
        if (
            unknown
            or not self.families
            or min(self.families.values()) < 0
            or sum(self.families.values()) <= 0
        ):
            raise ValueError(
                f"families must weigh mirror/moved/truncated/fresh with positive total, got {self.families}"
            )

    def _pose(self, rng: np.random.Generator, shape: Shape) -> Shape:
        if not self.tip:
            return shape
        tips = _tipping_rotations()
        return transform(shape, tips[int(rng.integers(len(tips)))])

    def _distractor(
        self, rng: np.random.Generator, shape: Shape, difficulty: str, family: str
    ) -> Shape | None:
        if family == "mirror":
            return mirror(shape)
        if family == "moved":
            return edited(shape, rng, "move")
        if family == "truncated":
            return truncated(shape, DISTRACTOR_STRENGTH[difficulty])
        return random_shape(rng, difficulty)

    def draft(self, rng: np.random.Generator, difficulty: str) -> Draft:
        shape = random_shape(rng, difficulty)
        question_dirs = [_direction(rng, k) for k in range(len(ISOMETRIC))]
        keys = {object_key(shape)}
        answer = self._pose(rng, shape)
        if self.tip:
            for _ in range(10):  # a symmetric shape may still stand upright after the turn
                if all(r[2, 2] != 1 for r in carrying_rotations(shape, answer)):
                    break
                answer = self._pose(rng, shape)
        view_offset = int(rng.integers(1, len(ISOMETRIC)))  # only used when tip=False
        options = [Pose(answer, _direction(rng))]
        names, weights = list(self.families), np.array(list(self.families.values()), dtype=float)
        kinds = []
        for _ in range(3):
            candidate, family = None, "fresh"
            for _ in range(10):
                family = names[int(rng.choice(len(names), p=weights / weights.sum()))]
                if family == "mirror" and "mirror" in kinds:
                    continue
                candidate = self._distractor(rng, shape, difficulty, family)
                if candidate is not None and object_key(candidate) not in keys:
                    break
            if candidate is None:
                candidate = random_shape(rng, difficulty)
            keys.add(object_key(candidate))
            kinds.append(family)
            options.append(Pose(self._pose(rng, candidate), _direction(rng)))
        meta = {
            "families": kinds,
            "view_offset": view_offset,
            "question_dirs": question_dirs,
            "blocks": [len(o.shape) for o in options],
        }
        return Draft(self.name, difficulty, self.question, shape, options, meta)

    def check(self, draft: Draft) -> list[str]:
        shape: Shape = draft.scene
        options: list[Pose] = draft.options
        problems = []
        carry = carrying_rotations(shape, options[0].shape)
        if not carry:
            problems.append("option 0 is not the question's object")
        elif self.tip and any(r[2, 2] == 1 for r in carry):
            problems.append("option 0 keeps the object upright: it is only a camera swap")
        keys = [object_key(o.shape) for o in options]
        for i in range(1, len(options)):
            if keys[i] == keys[0]:
                problems.append(f"distractor {i} is the question's object")
        for i in range(len(options)):
            for j in range(i + 1, len(options)):
                if keys[i] == keys[j]:
                    problems.append(f"options {i} and {j} are the same object")
        return problems

    def question_direction(self, draft: Draft) -> Direction:
        """The question camera: the isometric view showing the most blocks."""
        return best_view(draft.scene, draft.meta["question_dirs"])

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        q = self.question_direction(draft)
        options: list[Pose] = list(draft.options)
        if not self.tip:  # the authors' camera swap: the answer from another isometric view
            k = draft.meta["question_dirs"].index(q)
            d = draft.meta["question_dirs"][(k + draft.meta["view_offset"]) % len(ISOMETRIC)]
            options[0] = Pose(options[0].shape, d)
        return (
            [_shape_panel(draft.scene, q, self.panel_size)],
            [_shape_panel(o.shape, o.direction, self.panel_size) for o in options],
        )


# --- 3D projection --------------------------------------------------------------------------------

VIEWS = ("top", "front", "right", "back", "left")
"""The authors' orthographic views (never the bottom)."""
OPTION_GREY = (150, 150, 150)
"""The one tone of every orthographic option (unshaded)."""


_VIEW_AXES = {
    v: tuple(tuple(round(float(c)) for c in a) for a in view_axes(VIEW_DIRECTIONS[v])) for v in VIEWS
}


def _projected(shape: Shape, view: str) -> frozenset[tuple[int, int]]:
    """`geometry.projection` in integer arithmetic (drafting tries many candidates)."""
    (r0, r1, r2), (u0, u1, u2) = _VIEW_AXES[view]
    pts = {(r0 * x + r1 * y + r2 * z, u0 * x + u1 * y + u2 * z) for b in shape for x, y, z in b.cells}
    du, dv = min(p[0] for p in pts), min(p[1] for p in pts)
    return frozenset((u - du, v - dv) for u, v in pts)


def _look(cells: frozenset[tuple[int, int]]) -> tuple[int, int, int]:
    """What ink and margin-trimming heuristics see of a silhouette: (cells, width, height)."""
    return len(cells), max(u for u, _ in cells) + 1, max(v for _, v in cells) + 1


def _mismatch(a: tuple[int, int, int], b: tuple[int, int, int]) -> int:
    return sum(abs(x - y) for x, y in zip(a, b, strict=True))


def question_dirs(view: str, rng: np.random.Generator) -> list[Direction]:
    """Jittered question cameras that see the view's side of the shape, obliquely (ours).

    For the top view these are the authors' four isometric cameras (+-6, +-4, 4). For a side view
    those cameras look nearly along the view (cosine 0.49 or 0.73), and the question picture, whose
    vertical is z like the side view's, then matches the answer's silhouette pixel by pixel; so a
    side view v gets the two cameras 3 v +- 7 (v turned a quarter about z) + 6 z (cosine 0.31 with
    v), still on the cone's side. The authors tie the camera to no view at all.
    """
    v = np.array(VIEW_DIRECTIONS[view], dtype=float)
    if view == "top":
        dirs = [np.array(d) for d in ISOMETRIC]
    else:
        across = np.array([-v[1], v[0], 0.0])
        dirs = [3 * v + s * 7 * across + np.array([0.0, 0.0, 6.0]) for s in (1, -1)]
    return [jittered(tuple(float(c) for c in d), rng) for d in dirs if float(np.dot(d, v)) > 0]


@dataclass(frozen=True)
class View:
    """An orthographic option: a shape seen from a named view."""

    shape: Shape
    view: str

    @property
    def cells(self) -> frozenset[tuple[int, int]]:
        """The drawn silhouette as grid cells (`geometry.projection`)."""
        return projection(self.shape, self.view)


@dataclass
class Projection3D:
    """3D projection / view matching (the authors' 3d_projection.py).

    Question: an isometric view of the shape with a blue cone outside it on the side of one view
    direction, pointing at it (cameras: `question_dirs`); the view is one of top/front/right/back/
    left, preferably one whose projection differs from the other four (the authors' uniqueness
    rule, applied to the hidden base shape below). Options: orthographic views drawn at one common
    scale in one flat tone; option 0 is that view. Every two options' projections differ by
    `set_difference` >= `min_difference` (the authors' rule).

    Distractors are the authors' two families, arranged so that no option is special (ours; the
    authors' construction puts the answer at the centre of its edits, where the option nearest the
    others finds it, and edits that add or remove blocks change the ink):

    - "edited": a random base shape is grown and never drawn; four siblings are made from it, each
      by 1-3 random edits (add, remove or move a block; the block count stays in the difficulty's
      range), each the try (of `edit_tries`) whose silhouette's (cells, width, height) is nearest
      the base's. The question's shape is a random one of the four and the other three are the
      distractors, so the answer is one sibling among siblings, alike in ink and extent.
    - "other_view": with probability `p_other_view` per item, the shape seen from another view w
      (never the opposite one), drawn as a pair with a sibling also seen from w: the options are
      {shape, sibling} x {view, w}, so the other view is not the odd one out.

    Too few fitting siblings fall back to fresh random shapes (the authors' fallback).
    """

    p_other_view: float = 0.3
    min_difference: float = 0.3
    edit_tries: int = 30  # edits tried per sibling for the base's look (ours)
    panel_size: tuple[int, int] = PANEL

    name = "3d_projection"
    quadrant = "Extrinsic-Static"
    dimension = "3d"
    n_question_panels = 1
    question = (
        "The blue cone marks a viewpoint and points at the object: which option shows the "
        "object as seen from the cone, looking the way it points?"
    )

    def _fits(self, cells: frozenset, taken: list[frozenset]) -> bool:
        return all(set_difference(cells, t) >= self.min_difference for t in taken)

    def _edit(self, rng: np.random.Generator, s: Shape, sizes: tuple[int, int]) -> Shape | None:
        """`s` with 1-3 random edits (add, remove or move a block), its block count kept in `sizes`."""
        out: Shape | None = s
        for _ in range(int(rng.integers(1, 4))):
            if out is None:
                return None
            edits = [e for e, ok in (("add", len(out) < sizes[1]), ("remove", len(out) > sizes[0])) if ok]
            out = quick_edit(out, rng, (*edits, "move")[int(rng.integers(len(edits) + 1))])
        return out

    def _sibling(
        self, rng: np.random.Generator, base: Shape, view: str, taken: list[frozenset], sizes: tuple[int, int]
    ) -> Shape | None:
        """An edit of `base` whose view fits beside `taken`, as close to the base's look as found."""
        look = _look(_projected(base, view))
        best: tuple[int, Shape] | None = None
        for _ in range(self.edit_tries):
            s = self._edit(rng, base, sizes)
            if not s:
                continue
            cells = _projected(s, view)
            if not self._fits(cells, taken):
                continue
            miss = _mismatch(_look(cells), look)
            if best is None or miss < best[0]:
                best = (miss, s)
            if miss == 0:
                break
        return None if best is None else best[1]

    def draft(self, rng: np.random.Generator, difficulty: str) -> Draft:
        sizes = BLOCKS[difficulty]
        base = random_shape(rng, difficulty)
        sets = {v: _projected(base, v) for v in VIEWS}
        unique = [v for v in VIEWS if all(sets[v] != sets[w] for w in VIEWS if w != v)]
        pool = unique or list(VIEWS)
        view = pool[int(rng.integers(len(pool)))]
        # Four siblings: edits of one hidden base shape, each as close to the base's look as found;
        # the question's shape is a random one of them, so no option is the centre of the others.
        sibs: list[Shape] = []
        taken: list[frozenset] = []
        for _ in range(4):
            s = self._sibling(rng, base, view, taken, sizes)
            if s is None:
                break
            sibs.append(s)
            taken.append(_projected(s, view))
        if not sibs:
            sibs, taken = [base], [sets[view]]
        a = int(rng.integers(len(sibs)))
        shape, rest = sibs[a], [sibs[i] for i in rng.permutation(len(sibs)) if i != a]
        options = [View(shape, view)]
        kinds: list[str] = []
        if rest and rng.random() < self.p_other_view:
            # The authors' other-view distractor, drawn as a pair: the shape and a sibling both from
            # another view w, so the options are {shape, sibling} x {view, w} and none is the odd one.
            sib = rest[0]
            here = [_projected(shape, view), _projected(sib, view)]
            ws = [w for w in VIEWS if w not in (view, OPPOSITE[view])]
            for w in (ws[i] for i in rng.permutation(len(ws))):
                there = [_projected(shape, w), _projected(sib, w)]
                if self._fits(there[0], here) and self._fits(there[1], [*here, there[0]]):
                    options += [View(shape, w), View(sib, view), View(sib, w)]
                    kinds = ["other_view", "edited", "edited_other_view"]
                    break
        if not kinds:
            for s in rest:
                options.append(View(s, view))
                kinds.append("edited")
        while len(options) < 4:  # too few siblings fit: fresh shapes (the authors' fallback)
            taken = [_projected(o.shape, o.view) for o in options]
            chosen = View(random_shape(rng, difficulty), view)
            for _ in range(20):
                if self._fits(_projected(chosen.shape, view), taken):
                    break
                chosen = View(random_shape(rng, difficulty), view)
            options.append(chosen)
            kinds.append("fresh")
        meta = {"view": view, "families": kinds, "question_dirs": question_dirs(view, rng)}
        return Draft(self.name, difficulty, self.question, shape, options, meta)

    def check(self, draft: Draft) -> list[str]:
        shape: Shape = draft.scene
        options: list[View] = draft.options
        view = draft.meta["view"]
        problems = []
        if view not in VIEWS:
            problems.append(f"view {view!r} is not one of {VIEWS}")
        if options[0].cells != projection(shape, view):
            problems.append("option 0 is not the asked view of the question's shape")
        sets = [o.cells for o in options]
        for i in range(len(sets)):
            for j in range(i + 1, len(sets)):
                if set_difference(sets[i], sets[j]) < self.min_difference:
                    problems.append(
                        f"options {i} and {j} draw near-equal silhouettes "
                        f"({set_difference(sets[i], sets[j]):.2f} < {self.min_difference})"
                    )
        return problems

    def cone(self, shape: Shape, view: str) -> Any:
        """The blue cone outside the shape's box on the view's side, its apex towards the shape."""
        arr = np.array(sorted(cells_of(shape)), dtype=float)
        low, high = arr.min(axis=0) - 0.5, arr.max(axis=0) + 0.5
        centre, d = (low + high) / 2, np.array(VIEW_DIRECTIONS[view], dtype=float)
        half = float(np.abs(d) @ (high - low)) / 2
        apex = centre + d * (half + 0.4)
        return cone_mesh(apex, apex + d * 1.4, 0.45)

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        w, h = self.panel_size
        view = draft.meta["view"]
        q = best_view(draft.scene, draft.meta["question_dirs"])
        question = render(block_mesh(draft.scene) + self.cone(draft.scene, view), Camera(tuple(q), w, h))  # type: ignore[arg-type]
        spans = [(max(u for u, _ in o.cells) + 1, max(v for _, v in o.cells) + 1) for o in draft.options]
        scale = 0.8 * min(min(w / su, h / sv) for su, sv in spans)
        opts = []
        for o in draft.options:  # one flat tone: the light would tell a top view from a side view
            mesh = block_mesh(o.shape, OPTION_GREY)
            mesh.shaded[:] = False
            opts.append(render(mesh, Camera(VIEW_DIRECTIONS[o.view], w, h, scale=scale)))  # type: ignore[arg-type]
        return [question], opts


# --- 3D combination (assembly) --------------------------------------------------------------------


@dataclass(frozen=True)
class Parts:
    """An assembly option: the loose blocks' kinds in display order, seen from one camera."""

    kinds: tuple[str, ...]
    direction: Direction
    swapped: tuple[int, ...] = ()  # the shape's block indices replaced by the other kind

    @property
    def counts(self) -> tuple[int, int]:
        """(cubes, prisms)."""
        return self.kinds.count("cube"), self.kinds.count("prism")


SWAPS = {"easy": (2,), "medium": (2, 3), "hard": (3, 4)}
"""Blocks a distractor replaces by the other kind (the authors: 2, 2-3, 3; we allow 4 when hard)."""
OTHER = {"cube": "prism", "prism": "cube"}


@dataclass
class Combination3D:
    """3D assembly (the authors' 3d_combination.py).

    Question: the assembled shape from the isometric view showing the most blocks and from the
    opposite direction (the authors' `_Q_opposite`). Options: the blocks laid apart on a grid, each
    in one neutral pose (prisms lying along x), so an option is exactly its multiset of kinds.
    Option 0 is the shape's blocks; a distractor replaces `SWAPS[difficulty]` blocks by the other
    kind (cube <-> prism). Every option has its own (cubes, prisms) count. With so few kinds the
    swap count alone often cannot reach three distinct counts; then other swap counts are allowed
    (recorded in `swapped`). Prisms carry more ink than cubes, so the answer's rank by cube count
    is drawn uniformly first and the shape regrown (up to `max_regrow` times) until it fits: an
    ink count cannot find the answer (without this, the answer has the most cubes half the time).
    The authors lay the parts out in growth order, the same slots in every option, so a per-slot
    majority vote finds the answer; we shuffle each option's order.
    """

    panel_size: tuple[int, int] = PANEL
    spacing: float = 2.6  # grid pitch of the laid-out parts, in block units
    max_regrow: int = 30  # shapes tried for the drawn answer rank

    name = "3d_combination"
    quadrant = "Extrinsic-Dynamic"
    dimension = "3d"
    n_question_panels = 2
    question = (
        "The top images show one object from two opposite sides: which option shows exactly "
        "the loose blocks it is built from?"
    )

    def _targets(self, shape: Shape, difficulty: str) -> dict[int, int]:
        """Cube counts a distractor can have -> the least number of swaps giving it.

        Swapping k blocks, j of them cubes, gives c + k - 2j cubes; k is taken from the
        difficulty's `SWAPS`, or from 1..n when those reach fewer than three counts.
        """
        c, p = counts(shape)

        def reach(ks: Iterable[int]) -> dict[int, int]:
            out: dict[int, int] = {}
            for k in ks:
                for j in range(max(0, k - p), min(k, c) + 1):  # j cubes become prisms
                    out.setdefault(c + k - 2 * j, k)
            out.pop(c, None)
            return out

        targets = reach(SWAPS[difficulty])
        return targets if len(targets) >= 3 else {**reach(range(1, len(shape) + 1)), **targets}

    def draft(self, rng: np.random.Generator, difficulty: str) -> Draft:
        # The answer's rank by cube count (hence by ink) is drawn first, uniformly; shapes are
        # regrown until three distinct distractor counts put it there (else any feasible rank).
        rank = int(rng.integers(4))  # distractors with more cubes than the answer
        for _ in range(self.max_regrow):
            shape = random_shape(rng, difficulty)
            c = counts(shape)[0]
            targets = self._targets(shape, difficulty)
            above, below = sorted(t for t in targets if t > c), sorted(t for t in targets if t < c)
            feasible = [b for b in range(4) if b <= len(above) and 3 - b <= len(below)]
            if rank in feasible:
                break
        if rank not in feasible and feasible:
            rank = feasible[int(rng.integers(len(feasible)))]
        chosen: list[int] = []
        if rank in feasible:
            chosen = [int(t) for t in rng.permutation(above)[:rank]]
            chosen += [int(t) for t in rng.permutation(below)[: 3 - rank]]
        kinds = tuple(b.kind for b in shape)
        n = len(kinds)
        options = [Parts(tuple(kinds[i] for i in rng.permutation(n)), _direction(rng))]
        for t in chosen:
            k = targets[t]
            j = (c + k - t) // 2  # cubes turned into prisms; k - j prisms turned into cubes
            cubes = [i for i in range(n) if kinds[i] == "cube"]
            prisms = [i for i in range(n) if kinds[i] == "prism"]
            swap = sorted(
                [int(i) for i in rng.permutation(cubes)[:j]]
                + [int(i) for i in rng.permutation(prisms)[: k - j]]
            )
            new = [OTHER[kd] if i in swap else kd for i, kd in enumerate(kinds)]
            options.append(Parts(tuple(new[i] for i in rng.permutation(n)), _direction(rng), tuple(swap)))
        while len(options) < 4:  # no three distinct counts exist: the verifier refuses this draft
            options.append(Parts(options[0].kinds, _direction(rng)))
        meta = {"question_dirs": [_direction(rng, k) for k in range(len(ISOMETRIC))]}
        return Draft(self.name, difficulty, self.question, shape, options, meta)

    def check(self, draft: Draft) -> list[str]:
        shape: Shape = draft.scene
        options: list[Parts] = draft.options
        problems = []
        if options[0].counts != counts(shape):
            problems.append(f"option 0 has {options[0].counts} (cubes, prisms), the shape {counts(shape)}")
        for i, o in enumerate(options):
            if len(o.kinds) != len(shape) or set(o.kinds) - {"cube", "prism"}:
                problems.append(f"option {i} does not show {len(shape)} cubes/prisms")
        all_counts = [o.counts for o in options]
        for i in range(len(options)):
            for j in range(i + 1, len(options)):
                if all_counts[i] == all_counts[j]:
                    problems.append(f"options {i} and {j} have the same counts {all_counts[i]}")
        return problems

    def layout(self, kinds: tuple[str, ...]) -> Any:
        """The parts on a near-square grid in the x-z plane, prisms along x (the authors' layout)."""
        cols = int(np.ceil(np.sqrt(len(kinds))))
        meshes = []
        for k, kind in enumerate(kinds):
            row, col = divmod(k, cols)
            b = block((0, 0, 0)) if kind == "cube" else block((0, 0, 0), (1, 0, 0))
            meshes.append(block_mesh([b], offset=(col * self.spacing, 0.0, -row * self.spacing)))
        out = meshes[0]
        for m in meshes[1:]:
            out = out + m
        return out

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        w, h = self.panel_size
        q = best_view(draft.scene, draft.meta["question_dirs"])
        opposite = tuple(-v for v in q)
        question = [
            _shape_panel(draft.scene, q, self.panel_size),
            _shape_panel(draft.scene, opposite, self.panel_size),
        ]
        cols = int(np.ceil(np.sqrt(len(draft.scene))))
        rows = int(np.ceil(len(draft.scene) / cols))
        centre = ((cols - 1) * self.spacing / 2 + 0.5, 0.0, -(rows - 1) * self.spacing / 2)
        span = max(cols, rows) * self.spacing
        scale = 0.85 * min(w, h) / span
        opts = [
            render(self.layout(o.kinds), Camera(tuple(o.direction), w, h, scale=scale, center=centre))  # type: ignore[arg-type]
            for o in draft.options
        ]
        return question, opts


__all__ = [
    "Combination3D",
    "Parts",
    "Pose",
    "Projection3D",
    "Rotation3D",
    "View",
    "carrying_rotations",
    "edited",
    "object_key",
    "truncated",
]
