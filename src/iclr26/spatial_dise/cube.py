"""The textured cube of the 3D folding and 3D shape-finding tasks, and the facts the verifier proves about it.

A cube has six faces, named by their outward normals (+x, -x, +y, -y, +z, -z). Each face carries a
`Sticker`: a `Texture` (colour and icon) laid on the face with the icon's "up" pointing along one of
the face's four in-plane axes and, for the mirror distractors, possibly mirrored. The icons are our
own convex-polygon drawings (the authors use Lucide PNGs, which we do not have); their symmetry
groups are measured from the drawings themselves (`symmetries`), so "this rotated L differs from
that L" and "a rotated circle is the same circle" are facts about the pixels the icon covers.

Folding is proved by rolling: the net lies on the plane z = 0 seen from above, and the cube sits
under it with its top face on the first square. Crossing an edge towards the in-plane direction d
rolls the cube by 90 degrees about that edge (d -> +z, +z -> -d), which brings the face that was on
side d up against the next square; that square's sticker, with its up vector, is glued to the
cube's face in the cube's own frame (`fold`). A net is valid iff the roll reaches six different faces.

Views: an isometric camera direction sees the three faces whose normals point towards it
(`visible`); what a face shows is its `appearance` = (colour, icon, the icon's orientation class in
the face's canonical frame, reduced by the icon's symmetries). A view is realised by a cube iff
one of the 24 rotations of the cube shows exactly those appearances on those faces (`shows`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from PIL import Image, ImageDraw

from iclr26.spatial_dise.geometry import rotations

Vec = tuple[int, int, int]
AXES: tuple[Vec, ...] = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))
"""The six face normals (and in-plane up directions), indexed 0-5: +x, -x, +y, -y, +z, -z."""
AXIS_NAMES = ("+x", "-x", "+y", "-y", "+z", "-z")
PX, NX, PY, NY, PZ, NZ = range(6)


def axis(v: Sequence[int]) -> int:
    """The index of a signed unit axis vector."""
    return AXES.index(tuple(int(c) for c in v))  # type: ignore[arg-type]


def _cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _neg(a: int) -> int:
    return a ^ 1  # +x <-> -x etc. (indices come in pairs)


CANONICAL_UP = {PX: PZ, NX: PZ, PY: PZ, NY: PZ, PZ: PY, NZ: NY}
"""Each face's reference up axis: quarter turns of an icon are counted from it (viewed from outside)."""


@cache
def quarter_turns(normal: int, up: int) -> int:
    """How many counter-clockwise quarter turns (seen from outside) take the face's reference up to `up`."""
    n, v = AXES[normal], AXES[CANONICAL_UP[normal]]
    for k in range(4):
        if v == AXES[up]:
            return k
        v = _cross(n, v)  # a +90 degree turn about the outward normal
    raise ValueError(f"up {AXIS_NAMES[up]} does not lie in face {AXIS_NAMES[normal]}")


def turned(normal: int, up: int, k: int) -> int:
    """The up axis after k counter-clockwise quarter turns on the face `normal`."""
    v = AXES[up]
    for _ in range(k % 4):
        v = _cross(AXES[normal], v)
    return axis(v)


@cache
def rotation_table() -> tuple[tuple[int, ...], ...]:
    """The 24 proper rotations as permutations of the six axes (`table[r][i]` = image of axis i)."""
    return tuple(tuple(axis(m @ np.array(a)) for a in AXES) for m in rotations())


# --- icons ----------------------------------------------------------------------------------------

Polygon = tuple[tuple[float, float], ...]


def _rect(x0: float, y0: float, x1: float, y1: float) -> Polygon:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _regular(n: int, r: float, start: float = 0.0) -> Polygon:
    return tuple(
        (r * np.cos(start + 2 * np.pi * i / n), r * np.sin(start + 2 * np.pi * i / n)) for i in range(n)
    )


def _star(outer: float = 0.88, inner: float = 0.36) -> tuple[Polygon, ...]:
    top = np.pi / 2
    out = [
        (outer * np.cos(top + 2 * np.pi * i / 5), outer * np.sin(top + 2 * np.pi * i / 5)) for i in range(5)
    ]
    inn = [
        (
            inner * np.cos(top + np.pi / 5 + 2 * np.pi * i / 5),
            inner * np.sin(top + np.pi / 5 + 2 * np.pi * i / 5),
        )
        for i in range(5)
    ]
    points = tuple((inn[i - 1], out[i], inn[i]) for i in range(5))
    return (tuple(inn), *points)


ICONS: dict[str, tuple[Polygon, ...]] = {
    # each icon is a union of convex polygons in [-1, 1]^2, "up" = +y
    "circle": (_regular(24, 0.75),),
    "square": (_rect(-0.6, -0.6, 0.6, 0.6),),
    "diamond": (((0.0, -0.85), (0.85, 0.0), (0.0, 0.85), (-0.85, 0.0)),),
    "plus": (_rect(-0.22, -0.8, 0.22, 0.8), _rect(-0.8, -0.22, -0.22, 0.22), _rect(0.22, -0.22, 0.8, 0.22)),
    "triangle": (((-0.78, -0.62), (0.78, -0.62), (0.0, 0.8)),),
    "arrow": (((-0.72, 0.05), (0.72, 0.05), (0.0, 0.88)), _rect(-0.22, -0.82, 0.22, 0.05)),
    "star": _star(),
    "half": (
        _rect(-0.72, -0.72, 0.0, 0.72),
        _rect(0.0, -0.72, 0.72, -0.56),
        _rect(0.0, 0.56, 0.72, 0.72),
        _rect(0.56, -0.56, 0.72, 0.56),
    ),
    "L": (_rect(-0.6, -0.82, -0.18, 0.82), _rect(-0.18, -0.82, 0.62, -0.42)),
    "flag": (_rect(-0.62, -0.85, -0.4, 0.85), ((-0.4, 0.85), (-0.4, 0.02), (0.68, 0.44))),
    "F": (_rect(-0.58, -0.82, -0.2, 0.82), _rect(-0.2, 0.46, 0.64, 0.82), _rect(-0.2, -0.12, 0.4, 0.22)),
}
"""Our icons. circle/square/diamond/plus look the same in every orientation; triangle, arrow, star and
half reveal rotation; L, flag and F also reveal mirroring (chiral)."""

D4 = tuple((k, f) for f in (0, 1) for k in range(4))
"""The eight placements of an icon: k counter-clockwise quarter turns after f mirrorings (x -> -x)."""


def placement_matrix(k: int, f: int) -> np.ndarray:
    """The 2x2 integer matrix Rot(k) @ Mirror^f acting on icon coordinates."""
    rot = np.linalg.matrix_power(np.array([[0, -1], [1, 0]]), k % 4)
    return rot @ (np.diag([-1, 1]) if f else np.eye(2, dtype=int))


def placed(polygons: Iterable[Polygon], k: int, f: int) -> list[np.ndarray]:
    """The icon's polygons after the placement (k, f), each counter-clockwise again."""
    m = placement_matrix(k, f)
    out = []
    for poly in polygons:
        p = np.asarray(poly, dtype=float) @ m.T
        area = np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])
        out.append(p if area > 0 else p[::-1])
    return out


def icon_mask(polygons: Iterable[np.ndarray | Polygon], size: int = 192) -> np.ndarray:
    """A boolean raster of the icon (for measuring its symmetries)."""
    image = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(image)
    for poly in polygons:
        draw.polygon([((x + 1) * size / 2, (1 - y) * size / 2) for x, y in poly], fill=255)
    return np.asarray(image) > 0


@cache
def symmetries(icon: str) -> tuple[tuple[int, int], ...]:
    """The placements that leave the icon's drawing unchanged (pixel masks agree to 2% of the area)."""
    base = icon_mask(ICONS[icon])
    out = []
    for k, f in D4:
        other = icon_mask(placed(ICONS[icon], k, f))
        if np.logical_xor(base, other).sum() <= 0.02 * base.sum():
            out.append((k, f))
    return tuple(out)


def _key(m: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in m.flatten())


@cache
def orientation_class(icon: str | None, k: int, f: int) -> tuple[int, ...]:
    """What the placement (k, f) of `icon` looks like: equal iff the drawings coincide."""
    if icon is None:
        return ()
    g = placement_matrix(k, f)
    return min(_key(g @ placement_matrix(*s)) for s in symmetries(icon))


@cache
def turn_class(icon: str | None, k: int, f: int) -> tuple[int, ...]:
    """The drawing up to turning the face in its plane: only mirroring a chiral icon changes it."""
    if icon is None:
        return ()
    return min(orientation_class(icon, (k + r) % 4, f) for r in range(4))


def is_chiral(icon: str | None) -> bool:
    """Whether the icon's mirror image differs from every turn of it."""
    return icon is not None and turn_class(icon, 0, 0) != turn_class(icon, 0, 1)


def reveals_turns(icon: str | None) -> bool:
    """Whether some quarter turn of the icon looks different."""
    return icon is not None and len({orientation_class(icon, k, 0) for k in range(4)}) > 1


# --- textures, stickers, cubes ------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Texture:
    """A face pattern: a colour name and an icon name (None: plain colour)."""

    colour: str
    icon: str | None = None


@dataclass(frozen=True, order=True)
class Sticker:
    """A texture on a face: the icon's up along axis `up` (index into AXES), mirrored if `flipped`."""

    texture: Texture
    up: int
    flipped: bool = False


Appearance = tuple[str, str, tuple[int, ...]]


def appearance(normal: int, sticker: Sticker) -> Appearance:
    """What the face `normal` shows: colour, icon and the icon's orientation class in the face's frame."""
    k = quarter_turns(normal, sticker.up)
    t = sticker.texture
    return (t.colour, t.icon or "", orientation_class(t.icon, k, int(sticker.flipped)))


@dataclass(frozen=True)
class Cube:
    """Six stickers, `stickers[i]` on the face with normal AXES[i] (in the frame the cube is shown in)."""

    stickers: tuple[Sticker, ...]

    def __post_init__(self) -> None:
        if len(self.stickers) != 6:
            raise ValueError(f"a cube has six stickers, got {len(self.stickers)}")
        for i, s in enumerate(self.stickers):
            if s.up in (i, _neg(i)):
                raise ValueError(f"the sticker on {AXIS_NAMES[i]} has up {AXIS_NAMES[s.up]}, not in the face")

    def rotated(self, r: int) -> Cube:
        """The cube turned by rotation r: face i's sticker goes to face r(i), its up to r(up)."""
        perm = rotation_table()[r]
        out: list[Sticker | None] = [None] * 6
        for i, s in enumerate(self.stickers):
            out[perm[i]] = Sticker(s.texture, perm[s.up], s.flipped)
        return Cube(tuple(out))  # type: ignore[arg-type]

    def appearances(self) -> tuple[Appearance, ...]:
        """What each of the six faces shows."""
        return tuple(appearance(i, s) for i, s in enumerate(self.stickers))

    def replace(self, face: int, sticker: Sticker) -> Cube:
        """The cube with one face's sticker replaced."""
        return Cube(tuple(sticker if i == face else s for i, s in enumerate(self.stickers)))


def same_cube(a: Cube, b: Cube) -> bool:
    """Whether b is a, turned (some rotation shows the same appearance on every face)."""
    target = b.appearances()
    return any(a.rotated(r).appearances() == target for r in range(24))


def visible_normals(direction: Sequence[float]) -> tuple[int, ...]:
    """The faces an (isometric) camera looking along -direction sees: normals pointing towards it."""
    return tuple(i for i, a in enumerate(AXES) if float(np.dot(a, direction)) > 1e-9)


View = tuple[tuple[int, Appearance], ...]


def visible(cube: Cube, direction: Sequence[float]) -> View:
    """The faces seen from `direction`, each with what it shows, in axis order."""
    return tuple((i, appearance(i, cube.stickers[i])) for i in visible_normals(direction))


def shows(cube: Cube, view: View, direction: Sequence[float]) -> bool:
    """Whether some rotation of `cube` shows exactly `view` from `direction` (the option-is-correct rule)."""
    return any(visible(cube.rotated(r), direction) == view for r in range(24))


def same_view(a: Mapping[int, Sticker], b: Mapping[int, Sticker]) -> bool:
    """Whether two partial cubes (face -> sticker) are one picture turned: some rotation maps a onto b."""
    target = {i: appearance(i, s) for i, s in b.items()}
    for perm in rotation_table():
        moved = {
            perm[i]: appearance(perm[i], Sticker(s.texture, perm[s.up], s.flipped)) for i, s in a.items()
        }
        if moved == target:
            return True
    return False


def partial(cube: Cube, direction: Sequence[float]) -> dict[int, Sticker]:
    """The visible stickers of a cube seen from `direction`."""
    return {i: cube.stickers[i] for i in visible_normals(direction)}


# --- nets and folding ---------------------------------------------------------------------------------

GridCell = tuple[int, int]  # (column, row) on the paper, rows counted upwards
IN_PLANE = {(1, 0): PX, (-1, 0): NX, (0, 1): PY, (0, -1): NY}
PAPER_UP = (PY, NX, NY, PX)
"""The paper's direction of an icon's up after k counter-clockwise quarter turns (seen from above)."""


@dataclass(frozen=True)
class NetFace:
    """A net square's texture as printed: its icon turned k quarter turns anticlockwise, maybe mirrored."""

    texture: Texture
    turn: int = 0
    flipped: bool = False


def roll(direction: int) -> tuple[int, ...]:
    """The axis permutation of rolling the cube (under the paper) one square towards in-plane axis d.

    The rule: d -> +z (the face on side d comes up against the next square), +z -> -d, -d -> -z,
    -z -> +d; the hinge axis is fixed.
    """
    d = direction
    perm = list(range(6))
    perm[d], perm[PZ], perm[_neg(d)], perm[NZ] = PZ, _neg(d), NZ, d
    return tuple(perm)


class FoldError(ValueError):
    """The cells are not a cube net (not connected, or two squares land on one face)."""


def fold(cells: Sequence[GridCell], faces: Sequence[NetFace]) -> Cube:
    """The cube folded from the net: cells[0] becomes the top (+z), the rest by rolling (see module doc).

    The cube's orientation O (body axis -> world axis) starts as the identity; each step across an
    edge composes the roll: O <- roll(d) o O. At each square, the body face on top is O^-1(+z) and
    the printed up direction (in the world) maps to the body frame by O^-1.
    """
    if len(cells) != 6 or len(set(cells)) != 6 or len(faces) != 6:
        raise FoldError(f"a net has six distinct squares and six faces, got {len(cells)} and {len(faces)}")
    index = {c: i for i, c in enumerate(cells)}
    stickers: dict[int, Sticker] = {}
    seen = {cells[0]}
    stack: list[tuple[GridCell, tuple[int, ...]]] = [(cells[0], tuple(range(6)))]
    while stack:
        cell, orient = stack.pop()
        inverse = [0] * 6
        for body, world in enumerate(orient):
            inverse[world] = body
        face = faces[index[cell]]
        body_face = inverse[PZ]
        if body_face in stickers:
            raise FoldError(f"squares {cells} overlap on face {AXIS_NAMES[body_face]}")
        stickers[body_face] = Sticker(face.texture, inverse[PAPER_UP[face.turn % 4]], face.flipped)
        for step, d in IN_PLANE.items():
            nxt = (cell[0] + step[0], cell[1] + step[1])
            if nxt in index and nxt not in seen:
                seen.add(nxt)
                r = roll(d)
                stack.append((nxt, tuple(r[w] for w in orient)))
    if len(stickers) != 6:
        raise FoldError(f"squares {cells} are not edge-connected")
    return Cube(tuple(stickers[i] for i in range(6)))


def folds(cells: Sequence[GridCell]) -> bool:
    """Whether six grid squares form a cube net."""
    plain = [NetFace(Texture("x"))] * 6
    try:
        fold(cells, plain)
    except FoldError:
        return False
    return True


def _normal_form(cells: Iterable[GridCell]) -> tuple[GridCell, ...]:
    cs = list(cells)
    x0, y0 = min(c[0] for c in cs), min(c[1] for c in cs)
    return tuple(sorted((x - x0, y - y0) for x, y in cs))


def _free_form(cells: Iterable[GridCell]) -> tuple[GridCell, ...]:
    cs = list(cells)
    forms = []
    for k, f in D4:
        m = placement_matrix(k, f)
        forms.append(_normal_form(tuple(int(v) for v in m @ np.array(c)) for c in cs))
    return min(forms)


@cache
def all_nets() -> tuple[tuple[GridCell, ...], ...]:
    """The 11 cube nets (free hexominoes that fold), each in normal form, found by enumeration."""
    shapes = {((0, 0),)}
    for _ in range(5):
        grown = set()
        for s in shapes:
            for x, y in s:
                for dx, dy in IN_PLANE:
                    c = (x + dx, y + dy)
                    if c not in s:
                        grown.add(_normal_form((*s, c)))
        shapes = grown
    free = {_free_form(s) for s in shapes}
    return tuple(sorted(s for s in free if folds(s)))


NETS: dict[str, tuple[GridCell, ...]] = {
    # the authors' two layouts, cells in their face order front, top, back, bottom, right, left
    "cross": ((1, 1), (1, 2), (1, 3), (1, 0), (2, 1), (0, 1)),
    "T": ((1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (0, 0)),
}
"""The authors' "cross" (1-4-1) and "T" layouts as (column, row) squares."""


def transformed_net(cells: Sequence[GridCell], k: int, f: int) -> tuple[GridCell, ...]:
    """The net's squares turned/mirrored on the paper (order kept), moved to start at (0, 0)."""
    m = placement_matrix(k, f)
    moved = [tuple(int(v) for v in m @ np.array(c)) for c in cells]
    x0, y0 = min(c[0] for c in moved), min(c[1] for c in moved)
    return tuple((x - x0, y - y0) for x, y in moved)


def opposite_pairs(cells: Sequence[GridCell]) -> set[frozenset[int]]:
    """Which squares (by index) end up on opposite faces after folding."""
    faces = [NetFace(Texture(str(i))) for i in range(6)]
    cube = fold(cells, faces)
    where = {int(s.texture.colour): i for i, s in enumerate(cube.stickers)}
    return {frozenset((a, b)) for a, b in itertools.combinations(range(6), 2) if where[a] == _neg(where[b])}
