"""Spatial-DISE's textured-cube tasks (arXiv 2510.13394): 3D folding and 3D shape finding.

`Folding3D` (Intrinsic-Dynamic) follows the authors' 3d_folding generator: the question is a flat
net ("cross" or "T", all 11 nets when hard) of six coloured squares with icons; the options are
isometric views of cubes. The correct option is the net folded (turned at random); each distractor
is the folded cube with a visible face changed the authors' ways (an icon mirrored or turned, a
texture replaced, two faces swapped, or two changes at once), redrawn up to 15 times until no
rotation of the folded cube shows it and it differs from every other option.

`ShapeFinding3D` (Intrinsic-Static) follows 3d_shape_finding: three isometric views V0, V1, V2 of
one cube, turned between views; in V2 one face is painted blue. The options are single faces
drawn straight on; the answer is the blue face's texture. The verifier proves the answer is
inferable: over every labelling of a cube with the textures seen in V0/V1/V2 (unseen faces
unknown, six different textures) that agrees with the three views, the face under the blue paint
carries the answer's texture. Orientation clues are ignored there, so the proof is conservative.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from iclr26.spatial_dise.cube import (
    AXES,
    ICONS,
    NETS,
    Cube,
    FoldError,
    GridCell,
    NetFace,
    Sticker,
    Texture,
    all_nets,
    fold,
    is_chiral,
    partial,
    placed,
    reveals_turns,
    rotation_table,
    same_view,
    shows,
    transformed_net,
    turn_class,
    turned,
    visible,
    visible_normals,
)
from iclr26.spatial_dise.geometry import ISOMETRIC
from iclr26.spatial_dise.items import Draft
from iclr26.spatial_dise.render import Camera, Mesh, merge, polygon_mesh, quad_mesh, render

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (215, 50, 45),
    "orange": (245, 145, 35),
    "yellow": (235, 210, 50),
    "green": (60, 170, 75),
    "cyan": (60, 190, 205),
    "magenta": (200, 70, 180),
    "purple": (125, 80, 195),
    "brown": (140, 95, 55),
    "pink": (245, 150, 170),
}
"""Face colours: the first six are the cube's, the rest replace a colour in easy folding distractors.
Blue is kept out: it is the shape-finding task's paint."""
FACE_COLOURS = tuple(PALETTE)[:6]
EXTRA_COLOURS = tuple(PALETTE)[6:]
BLUE = (30, 60, 225)
ICON_COLOUR = (250, 250, 250)
ICON_SCALE = 0.8  # icon half-size / face half-size
LIFT = 0.01  # icons float this far in front of their face (outlined against it)
DISTRACTOR_TRIES = 15  # the authors' max_attempts per distractor
PANEL = (320, 240)
FACE_PANEL = (220, 220)


def _one_face(meshes: Sequence[Mesh]) -> Mesh:
    """Several polygons as one face id (no outline between the convex pieces of an icon)."""
    m = merge(meshes)
    return Mesh(m.triangles, m.colors, np.zeros_like(m.faces), m.shaded)


def icon_mesh(
    icon: str,
    k: int,
    flipped: bool,
    origin: np.ndarray,
    right: np.ndarray,
    up: np.ndarray,
    *,
    shaded: bool = True,
) -> Mesh:
    """The icon placed (k quarter turns, mirrored if flipped) in the plane origin + x right + y up."""
    pieces = []
    for poly in placed(ICONS[icon], k, int(flipped)):
        pts = [origin + ICON_SCALE * (x * right + y * up) for x, y in poly]
        pieces.append(polygon_mesh(pts, ICON_COLOUR, shaded=shaded))
    return _one_face(pieces)


def cube_mesh(cube: Cube, *, painted: int | None = None) -> Mesh:
    """The unit-half-size cube with its stickers; face `painted` is solid blue instead."""
    parts = []
    for i, s in enumerate(cube.stickers):
        n, u = np.array(AXES[i], float), np.array(AXES[s.up], float)
        r = np.cross(u, n)  # right x up = outward normal, so the face is seen unmirrored from outside
        corners = [n - r - u, n + r - u, n + r + u, n - r + u]
        if i == painted:
            parts.append(quad_mesh(corners, BLUE))
            continue
        parts.append(quad_mesh(corners, PALETTE[s.texture.colour]))
        if s.texture.icon is not None:
            parts.append(icon_mesh(s.texture.icon, 0, s.flipped, n * (1 + LIFT), r, u))
    return merge(parts)


def render_cube(
    cube: Cube, direction: Sequence[float], *, painted: int | None = None, size: tuple[int, int] = PANEL
) -> Image.Image:
    """An isometric view of the cube."""
    return render(cube_mesh(cube, painted=painted), Camera(tuple(float(v) for v in direction), *size))


def flat_face_mesh(texture: Texture, turn: int, flipped: bool, centre: tuple[float, float]) -> Mesh:
    """One square of paper (z = 0, seen from above) with its icon turned and maybe mirrored."""
    cx, cy = centre
    square = quad_mesh(
        [(cx - 1, cy - 1, 0), (cx + 1, cy - 1, 0), (cx + 1, cy + 1, 0), (cx - 1, cy + 1, 0)],
        PALETTE[texture.colour],
        shaded=False,
    )
    if texture.icon is None:
        return square
    return square + icon_mesh(
        texture.icon,
        turn,
        flipped,
        np.array([cx, cy, LIFT]),
        np.array([1.0, 0, 0]),
        np.array([0, 1.0, 0]),
        shaded=False,
    )


def render_flat(faces: Sequence[tuple[NetFace, GridCell]], size: tuple[int, int]) -> Image.Image:
    """Squares of paper seen from straight above (the net, or one face drawn straight on)."""
    mesh = merge(flat_face_mesh(f.texture, f.turn, f.flipped, (2.0 * c[0], 2.0 * c[1])) for f, c in faces)
    return render(mesh, Camera((0.0, 0.0, 1.0), *size))


# --- 3D folding ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NetScene:
    """The question: a net's squares on the paper and what is printed on each."""

    layout: str
    cells: tuple[GridCell, ...]
    faces: tuple[NetFace, ...]
    direction: tuple[float, float, float]  # the camera direction every option is seen from


@dataclass(frozen=True)
class CubeView:
    """An option: a cube in the pose it is drawn in, and how it was made from the folded net."""

    cube: Cube
    change: str  # "correct", or the distractor's changes, e.g. "rotate+flip"


FOLD_CHANGES = {
    # the authors' distractor kinds per difficulty, with our weights
    "easy": (("swap", 0.5), ("replace", 0.5)),
    "medium": (("replace", 0.3), ("swap", 0.2), ("rotate", 0.2), ("flip", 0.1), ("replace+rotate", 0.2)),
    "hard": (("rotate", 0.35), ("flip", 0.25), ("rotate+flip", 0.2), ("swap+rotate", 0.2)),
}


def _pick(rng: np.random.Generator, weighted: Sequence[tuple[str, float]]) -> str:
    names, weights = zip(*weighted, strict=True)
    p = np.array(weights, float)
    return names[int(rng.choice(len(names), p=p / p.sum()))]


class Folding3D:
    """3D folding: which cube is the net folded up?"""

    name = "3d_folding"
    quadrant = "Intrinsic-Dynamic"
    dimension = "3d"
    n_question_panels = 1
    question = (
        "The net above is folded into a cube with the patterns on the outside. "
        "Which of the cubes A-D could be the folded net?"
    )

    def draft(self, rng: np.random.Generator, difficulty: str) -> Draft:
        """A random net, the folded cube in a random pose, and three changed cubes (see module doc)."""
        if difficulty == "hard":
            nets = all_nets()
            layout_i = int(rng.integers(len(nets)))
            layout, base = f"net{layout_i}", nets[layout_i]
        else:
            layout = ("cross", "T")[int(rng.integers(2))]
            base = NETS[layout]
        cells = transformed_net(base, int(rng.integers(4)), int(rng.integers(2)))
        colours = [FACE_COLOURS[i] for i in rng.permutation(6)]
        if difficulty == "easy":
            icons: list[str | None] = [None] * 6
        else:
            pool = sorted(i for i in ICONS if reveals_turns(i)) if difficulty == "hard" else sorted(ICONS)
            icons = [pool[i] for i in rng.choice(len(pool), 6, replace=False)]
        faces = tuple(
            NetFace(Texture(c, i), int(rng.integers(4))) for c, i in zip(colours, icons, strict=True)
        )
        direction = ISOMETRIC[int(rng.integers(4))]
        folded = fold(cells, faces)
        correct = CubeView(folded.rotated(int(rng.integers(24))), "correct")
        options = [correct]
        for _ in range(3):
            options.append(self._distractor(rng, difficulty, folded, direction, options))
        scene = NetScene(layout, cells, faces, direction)
        return Draft(self.name, difficulty, self.question, scene, options, {"layout": layout})

    def _distractor(
        self,
        rng: np.random.Generator,
        difficulty: str,
        folded: Cube,
        direction: tuple[float, float, float],
        taken: Sequence[CubeView],
    ) -> CubeView:
        """A changed cube no rotation of `folded` shows, unlike every taken option (15 tries)."""
        candidate = taken[0]
        for _ in range(DISTRACTOR_TRIES):
            change = _pick(rng, FOLD_CHANGES[difficulty])
            cube = folded.rotated(int(rng.integers(24)))
            for step in change.split("+"):
                cube = _change(rng, cube, step, direction, difficulty)
            candidate = CubeView(cube, change)
            view = visible(cube, direction)
            if shows(folded, view, direction):
                continue
            if any(same_view(partial(cube, direction), partial(t.cube, direction)) for t in taken):
                continue
            return candidate
        return candidate  # the verifier refuses the draft

    def check(self, draft: Draft) -> list[str]:
        """Option 0 is a view of the folded net; no distractor is; no two options are one view turned."""
        scene: NetScene = draft.scene
        try:
            folded = fold(scene.cells, scene.faces)
        except FoldError as e:
            return [f"the net does not fold: {e}"]
        d = scene.direction
        problems = []
        if not shows(folded, visible(draft.options[0].cube, d), d):
            problems.append("option 0 is not a view of the folded net")
        for i, opt in enumerate(draft.options[1:], 1):
            if shows(folded, visible(opt.cube, d), d):
                problems.append(f"distractor {i} ({opt.change}) is a view of the folded net")
        for i, j in itertools.combinations(range(len(draft.options)), 2):
            if same_view(partial(draft.options[i].cube, d), partial(draft.options[j].cube, d)):
                problems.append(f"options {i} and {j} show the same cube")
        return problems

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        """The net from above; each option cube from the scene's isometric direction."""
        scene: NetScene = draft.scene
        net = render_flat(list(zip(scene.faces, scene.cells, strict=True)), (400, 300))
        return [net], [render_cube(o.cube, scene.direction) for o in draft.options]


def _change(
    rng: np.random.Generator, cube: Cube, step: str, direction: Sequence[float], difficulty: str
) -> Cube:
    """One of the authors' distractor changes applied to a visible face of `cube`."""
    seen = list(visible_normals(direction))
    hidden = [i for i in range(6) if i not in seen]
    st = cube.stickers
    if step == "swap":  # two visible faces trade textures (each keeps its own up and mirroring)
        a, b = (seen[i] for i in rng.choice(3, 2, replace=False))
        cube = cube.replace(a, Sticker(st[b].texture, st[a].up, st[a].flipped))
        return cube.replace(b, Sticker(st[a].texture, st[b].up, st[b].flipped))
    if step == "replace":
        f = seen[int(rng.integers(3))]
        t = st[f].texture
        if (
            difficulty == "easy" or t.icon is None or rng.random() < 0.5
        ):  # another colour: a hidden face's or new
            choices = sorted(
                {st[h].texture.colour for h in hidden} | set(EXTRA_COLOURS if difficulty == "easy" else ())
            )
            new = Texture(choices[int(rng.integers(len(choices)))], t.icon)
        else:  # another icon, not on the cube
            used = {s.texture.icon for s in st}
            choices = sorted(i for i in ICONS if i not in used)
            new = Texture(t.colour, choices[int(rng.integers(len(choices)))])
        return cube.replace(f, Sticker(new, st[f].up, st[f].flipped))
    if step == "rotate":
        turnable = [f for f in seen if reveals_turns(st[f].texture.icon)] or seen
        f = turnable[int(rng.integers(len(turnable)))]
        return cube.replace(
            f, Sticker(st[f].texture, turned(f, st[f].up, int(rng.integers(1, 4))), st[f].flipped)
        )
    if step == "flip":
        chiral = [f for f in seen if is_chiral(st[f].texture.icon)]
        if not chiral:
            return _change(rng, cube, "rotate", direction, difficulty)
        f = chiral[int(rng.integers(len(chiral)))]
        return cube.replace(f, Sticker(st[f].texture, st[f].up, not st[f].flipped))
    raise ValueError(f"unknown change {step!r}")


# --- 3D shape finding ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CubeViews:
    """The question: a cube, its rotation in V0, V1, V2, the camera direction, and the painted body face."""

    cube: Cube
    rotations: tuple[int, int, int]
    direction: tuple[float, float, float]
    painted: int  # body face (index into AXES) painted blue in V2


@dataclass(frozen=True)
class FaceOption:
    """An option: one texture drawn straight on, its icon turned k quarter turns, maybe mirrored."""

    texture: Texture
    turn: int
    flipped: bool
    source: str  # "painted", "face <axis>", "mirror"

    def key(self) -> tuple[str, str, tuple[int, ...]]:
        """What the drawing shows up to turning it in its plane."""
        return (
            self.texture.colour,
            self.texture.icon or "",
            turn_class(self.texture.icon, self.turn, int(self.flipped)),
        )


UNKNOWN = Texture("?", "?")


def _world(rotation: int, body: int) -> int:
    return rotation_table()[rotation][body]


def view_labels(scene: CubeViews, v: int) -> dict[int, Texture]:
    """The textures view v shows, by world face (V2 without its painted face)."""
    r = scene.rotations[v]
    out = {_world(r, b): scene.cube.stickers[b].texture for b in range(6)}
    faces = visible_normals(scene.direction)
    return {n: out[n] for n in faces if not (v == 2 and n == _world(r, scene.painted))}


def _matches(labels: Sequence[Texture], view: dict[int, Texture]) -> list[tuple[int, ...]]:
    """The rotations (as axis permutations) that turn labelling `labels` into what `view` shows."""
    out = []
    for perm in rotation_table():
        if all(view[n] == labels[perm.index(n)] for n in view):  # the turned labelling shows the view
            out.append(perm)
    return out


def inferred(scene: CubeViews) -> set[Texture]:
    """Every texture the painted face can carry on some cube that agrees with V0, V1 and V2.

    A hypothesis labels the six faces with the textures seen in the views (each once) and unknowns;
    it is pinned to V0's pose (V0's three faces as seen), and must show V1 and V2's two unpainted
    faces under some rotation. The painted face's label under that rotation is collected.
    """
    views = [view_labels(scene, v) for v in range(3)]
    seen = sorted({t for v in views for t in v.values()})
    v0 = views[0]
    rest = [n for n in range(6) if n not in v0]
    others = [t for t in seen if t not in v0.values()]
    if len(others) > len(rest):
        return {UNKNOWN}
    painted_world = _world(scene.rotations[2], scene.painted)
    out: set[Texture] = set()
    for slots in itertools.permutations(rest, len(others)):
        labels = [UNKNOWN] * 6
        for n, t in v0.items():
            labels[n] = t
        for n, t in zip(slots, others, strict=True):
            labels[n] = t
        if not _matches(labels, views[1]):
            continue
        for perm in _matches(labels, views[2]):
            out.add(labels[perm.index(painted_world)])
    return out


def direct(scene: CubeViews) -> bool:
    """Whether V0 or V1 shows the painted face together with V2's two other faces (no reasoning needed)."""
    faces = visible_normals(scene.direction)
    inv = [{rotation_table()[r][b]: b for b in range(6)} for r in scene.rotations]
    corner = {inv[2][n] for n in faces}
    return any({inv[v][n] for n in faces} == corner for v in (0, 1))


class ShapeFinding3D:
    """3D shape finding: which texture is under the blue paint?"""

    name = "3d_shape_finding"
    quadrant = "Intrinsic-Static"
    dimension = "3d"
    n_question_panels = 3
    question = (
        "The three pictures show one cube, turned between pictures; its six faces carry six "
        "different patterns. In the third picture one face is painted blue. Which pattern is "
        "under the blue paint (A-D show single faces straight on, in any rotation)?"
    )

    def draft(self, rng: np.random.Generator, difficulty: str) -> Draft:
        """A random cube and views; easy: V0 or V1 shows the painted corner; else it must be inferred."""
        if difficulty == "hard":  # three colours twice: a face is known only by colour and icon
            colours = [FACE_COLOURS[i] for i in rng.choice(6, 3, replace=False)] * 2
            chiral = sorted(i for i in ICONS if is_chiral(i))
            plain = sorted(i for i in ICONS if not is_chiral(i))
            icons = chiral + [plain[i] for i in rng.choice(len(plain), 6 - len(chiral), replace=False)]
            icons = [icons[i] for i in rng.permutation(6)]
        else:
            colours = [FACE_COLOURS[i] for i in rng.permutation(6)]
            icons = [sorted(ICONS)[i] for i in rng.choice(len(ICONS), 6, replace=False)]
        stickers = []
        for b in range(6):
            ups = [u for u in range(6) if u // 2 != b // 2]
            stickers.append(Sticker(Texture(colours[b], icons[b]), ups[int(rng.integers(4))]))
        cube = Cube(tuple(stickers))
        direction = ISOMETRIC[int(rng.integers(4))]
        faces = visible_normals(direction)
        scene = None
        for _ in range(200):
            rots = tuple(int(r) for r in rng.choice(24, 3, replace=False))
            inv2 = {rotation_table()[rots[2]][b]: b for b in range(6)}
            painted = inv2[faces[int(rng.integers(3))]]
            candidate = CubeViews(cube, rots, direction, painted)  # type: ignore[arg-type]
            if inferred(candidate) != {cube.stickers[painted].texture}:
                continue
            if direct(candidate) == (difficulty == "easy"):
                scene = candidate
                break
        if scene is None:
            scene = candidate
        options = [FaceOption(cube.stickers[scene.painted].texture, int(rng.integers(4)), False, "painted")]
        options += self._distractors(rng, difficulty, scene)
        return Draft(self.name, difficulty, self.question, scene, options, {"painted": scene.painted})

    def _distractors(self, rng: np.random.Generator, difficulty: str, scene: CubeViews) -> list[FaceOption]:
        """Other faces' textures weighted by how often seen (the authors' rule); hard: the mirror."""
        cube, x = scene.cube, scene.painted
        count = dict.fromkeys(range(6), 0)
        for v in range(3):
            inv = {rotation_table()[scene.rotations[v]][b]: b for b in range(6)}
            for n in view_labels(scene, v):
                count[inv[n]] += 1
        out: list[FaceOption] = []
        if difficulty == "hard" and is_chiral(cube.stickers[x].texture.icon):
            out.append(FaceOption(cube.stickers[x].texture, int(rng.integers(4)), True, "mirror"))
        others = [b for b in range(6) if b != x]
        # easy: uniform; else the authors' weight 0.5 + views the face is seen in
        weights = np.array([1.0 if difficulty == "easy" else 0.5 + count[b] for b in others])
        picks = rng.choice(others, 3 - len(out), replace=False, p=weights / weights.sum())
        for b in picks:
            out.append(FaceOption(cube.stickers[b].texture, int(rng.integers(4)), False, f"face {int(b)}"))
        return out

    def check(self, draft: Draft) -> list[str]:
        """The painted face's texture is inferable and is option 0; the four options all differ."""
        scene: CubeViews = draft.scene
        problems = []
        painted_world = _world(scene.rotations[2], scene.painted)
        if painted_world not in visible_normals(scene.direction):
            problems.append("the painted face is not visible in V2")
        truth = scene.cube.stickers[scene.painted]
        can_be = inferred(scene)
        if can_be != {truth.texture}:
            problems.append(f"the painted face's texture is not inferable from the views: {sorted(can_be)}")
        answer = (
            truth.texture.colour,
            truth.texture.icon or "",
            turn_class(truth.texture.icon, 0, int(truth.flipped)),
        )
        keys = [o.key() for o in draft.options]
        if keys[0] != answer:
            problems.append("option 0 is not the painted face's texture")
        for i, k in enumerate(keys[1:], 1):
            if k == answer:
                problems.append(f"distractor {i} draws the painted face's texture")
        if len(set(keys)) != len(keys):
            problems.append("two options draw the same texture")
        return problems

    def panels(self, draft: Draft) -> tuple[list[Image.Image], list[Image.Image]]:
        """V0, V1 and V2 (painted) as isometric views; each option face straight on."""
        scene: CubeViews = draft.scene
        views = []
        for v, r in enumerate(scene.rotations):
            painted = _world(r, scene.painted) if v == 2 else None
            views.append(render_cube(scene.cube.rotated(r), scene.direction, painted=painted))
        options = [
            render_flat([(NetFace(o.texture, o.turn, o.flipped), (0, 0))], FACE_PANEL) for o in draft.options
        ]
        return views, options
