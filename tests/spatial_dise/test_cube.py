"""The textured cube: folding by rolling, views, equivalence, and the two cube tasks' verifiers."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.spatial_dise.cube import (
    AXES,
    NETS,
    NX,
    NY,
    NZ,
    PX,
    PY,
    PZ,
    Cube,
    FoldError,
    NetFace,
    Sticker,
    Texture,
    all_nets,
    fold,
    folds,
    is_chiral,
    opposite_pairs,
    reveals_turns,
    rotation_table,
    same_cube,
    shows,
    symmetries,
    visible,
    visible_normals,
)
from iclr26.spatial_dise.cube3d import CubeView, Folding3D, ShapeFinding3D, inferred
from iclr26.spatial_dise.items import DIFFICULTIES, make_item, render_item

PAPER_UP = {0: (0, 1, 0), 1: (-1, 0, 0), 2: (0, -1, 0), 3: (1, 0, 0)}


def _hinge(point: np.ndarray, direction: np.ndarray, angle: float) -> tuple[np.ndarray, np.ndarray]:
    """Rotation matrix and offset of turning space by `angle` about the line point + t direction."""
    a = direction / np.linalg.norm(direction)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    r = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
    return r, point - r @ point


def paper_fold(cells: list[tuple[int, int]], turns: list[int]) -> dict[int, tuple[int, int]]:
    """An independent fold: hinge every flap down by 90 degrees about its shared edge, in 3D.

    Returns, per square, the (face normal, icon up) axes the square ends on, root square on top.
    """
    index = {c: i for i, c in enumerate(cells)}
    transforms = {0: (np.eye(3), np.zeros(3))}
    stack = [cells[0]]
    while stack:
        c = stack.pop()
        rp, tp = transforms[index[c]]
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            n = (c[0] + dx, c[1] + dy)
            if n not in index or index[n] in transforms:
                continue
            mid = np.array([2 * c[0] + dx, 2 * c[1] + dy, 0.0])
            edge = np.array([-dy, dx, 0.0])
            child = np.array([2.0 * n[0], 2.0 * n[1], 0.0])
            for angle in (np.pi / 2, -np.pi / 2):  # the flap goes down, away from the printed side
                rh, th = _hinge(mid, edge, angle)
                if (rh @ child + th)[2] < 0:
                    break
            transforms[index[n]] = (rp @ rh, rp @ th + tp)
            stack.append(n)
    centre = np.array([2.0 * cells[0][0], 2.0 * cells[0][1], -1.0])
    out = {}
    for i, (cx, cy) in enumerate(cells):
        r, t = transforms[i]
        normal = r @ np.array([2.0 * cx, 2.0 * cy, 0.0]) + t - centre
        up = r @ np.array(PAPER_UP[turns[i]], dtype=float)
        out[i] = (
            AXES.index(tuple(int(v) for v in np.round(normal))),
            AXES.index(tuple(int(v) for v in np.round(up))),
        )
    return out


def test_eleven_nets_and_the_authors_layouts() -> None:
    nets = all_nets()
    assert len(nets) == 11
    assert all(folds(n) for n in nets)
    assert folds(NETS["cross"]) and folds(NETS["T"])
    assert not folds(((0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0)))  # a strip of six
    assert not folds(((0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (3, 0)))  # a 2x2 block
    with pytest.raises(FoldError):
        fold(((0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0)), [NetFace(Texture("red"))] * 6)


def test_cross_net_opposite_squares_land_on_opposite_faces() -> None:
    # squares in the authors' order front, top, back, bottom, right, left
    assert opposite_pairs(NETS["cross"]) == {frozenset((0, 2)), frozenset((1, 3)), frozenset((4, 5))}
    assert opposite_pairs(NETS["T"]) == {frozenset((0, 2)), frozenset((1, 3)), frozenset((4, 5))}


def test_known_icon_orientation_after_folding() -> None:
    cells = ((0, 0), (1, 0), (2, 0), (3, 0), (1, 1), (1, -1))
    faces = [NetFace(Texture("red"))] * 6
    up = list(faces)
    up[1] = NetFace(Texture("green", "arrow"), turn=0)  # arrow along the hinge: stays +y on the +x face
    cube = fold(cells, up)
    assert cube.stickers[PX] == Sticker(Texture("green", "arrow"), PY)
    out = list(faces)
    out[1] = NetFace(Texture("green", "arrow"), turn=3)  # arrow pointing away from the root: points down
    assert fold(cells, out).stickers[PX].up == NZ
    assert fold(cells, out).stickers[NX].texture == Texture("red")


@pytest.mark.parametrize("net", range(11))
def test_rolling_agrees_with_hinged_folding(net: int) -> None:
    cells = list(all_nets()[net])
    rng = np.random.default_rng(net)
    turns = [int(t) for t in rng.integers(4, size=6)]
    faces = [NetFace(Texture(str(i), "L"), turns[i]) for i in range(6)]
    cube = fold(cells, faces)
    for i, (normal, up) in paper_fold(cells, turns).items():
        assert cube.stickers[normal].texture.colour == str(i)
        assert cube.stickers[normal].up == up


def test_icon_symmetries_are_measured() -> None:
    assert len(symmetries("circle")) == 8 and len(symmetries("plus")) == 8
    assert not reveals_turns("square") and reveals_turns("arrow") and not is_chiral("arrow")
    assert all(is_chiral(i) for i in ("L", "flag", "F"))


def _cube(rng: np.random.Generator) -> Cube:
    icons = ["L", "flag", "F", "arrow", "star", "half"]
    return Cube(
        tuple(
            Sticker(
                Texture(f"c{b}", icons[b]), [u for u in range(6) if u // 2 != b // 2][int(rng.integers(4))]
            )
            for b in range(6)
        )
    )


def test_rotations_are_the_same_cube_and_mirrors_are_not() -> None:
    rng = np.random.default_rng(1)
    cube = _cube(rng)
    d = (6.0, -4.0, 4.0)
    for r in range(24):
        assert same_cube(cube, cube.rotated(r))
        assert shows(cube, visible(cube.rotated(r), d), d)
    flipped = cube.replace(PX, Sticker(cube.stickers[PX].texture, cube.stickers[PX].up, True))  # L mirrored
    assert not same_cube(cube, flipped)
    sx, sy = cube.stickers[PX], cube.stickers[NY]  # two faces seen from d trade textures
    swapped = cube.replace(PX, Sticker(sy.texture, sx.up)).replace(NY, Sticker(sx.texture, sy.up))
    assert not shows(cube, visible(swapped, d), d)
    circle = Cube(tuple(Sticker(Texture(f"c{b}", "circle"), s.up) for b, s in enumerate(cube.stickers)))
    turned = circle.replace(
        PZ, Sticker(circle.stickers[PZ].texture, PX if circle.stickers[PZ].up != PX else PY)
    )
    assert same_cube(circle, turned)  # a turned circle looks the same


def test_planted_equivalent_distractor_is_rejected() -> None:
    task = Folding3D()
    draft = task.draft(np.random.default_rng(3), "hard")
    assert task.check(draft) == []
    again = CubeView(draft.options[0].cube.rotated(7), "planted")  # the correct cube, turned
    draft.options[2] = again
    problems = task.check(draft)
    assert any("distractor 2" in p for p in problems)


def test_planted_shape_finding_answer_is_rejected() -> None:
    task = ShapeFinding3D()
    draft = task.draft(np.random.default_rng(4), "medium")
    assert task.check(draft) == []
    o = draft.options[0]
    draft.options[1] = type(o)(o.texture, (o.turn + 1) % 4, False, "planted")  # the answer, turned
    assert any("distractor 1" in p for p in task.check(draft))


def test_shape_finding_needs_the_painted_texture_seen() -> None:
    task = ShapeFinding3D()
    draft = task.draft(np.random.default_rng(5), "easy")
    scene = draft.scene
    assert inferred(scene) == {scene.cube.stickers[scene.painted].texture}
    # V0 = V1 = a pose that hides the painted face: it is never seen unpainted
    hidden = next(
        r for r in range(24) if rotation_table()[r][scene.painted] not in visible_normals(scene.direction)
    )
    blind = type(scene)(scene.cube, (hidden, hidden, scene.rotations[2]), scene.direction, scene.painted)
    draft.scene = blind
    assert any("not inferable" in p for p in task.check(draft))


@pytest.mark.parametrize("task", [Folding3D(), ShapeFinding3D()], ids=lambda t: t.name)
def test_thousand_drafts_are_proved(task: Folding3D | ShapeFinding3D) -> None:
    rng = np.random.default_rng(0)
    for i in range(1000):
        item = make_item(task, rng, DIFFICULTIES[i % 3])
        assert task.check(item.draft) == []
        assert sorted(item.order) == [0, 1, 2, 3]


@pytest.mark.parametrize("task", [Folding3D(), ShapeFinding3D()], ids=lambda t: t.name)
def test_renders_are_deterministic_and_sized(task: Folding3D | ShapeFinding3D) -> None:
    images = []
    for _ in range(2):
        item = make_item(task, np.random.default_rng(11), "hard")
        images.append(np.asarray(render_item(task, item)))
    assert images[0].shape == (480, 640, 3)
    assert np.array_equal(images[0], images[1])
    questions, options = task.panels(make_item(task, np.random.default_rng(12), "medium").draft)
    assert len(questions) == task.n_question_panels and len(options) == 4
    for p in [*questions, *options]:
        assert 100 <= p.width <= 640 and 100 <= p.height <= 480
        assert (np.asarray(p.convert("L")) < 250).mean() > 0.05  # something is drawn
