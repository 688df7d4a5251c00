"""Spatial-DISE 3D block tasks: hand-built verifier cases, 1,000 proved drafts per task, determinism."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from iclr26.spatial_dise import geometry as g
from iclr26.spatial_dise.blocks3d import (
    OPTION_GREY,
    VIEWS,
    Combination3D,
    Parts,
    Pose,
    Projection3D,
    Rotation3D,
    View,
    carrying_rotations,
    edited,
    object_key,
    question_dirs,
    quick_edit,
    truncated,
)
from iclr26.spatial_dise.blocks3d import _projected as fast_projection
from iclr26.spatial_dise.items import DIFFICULTIES, make_item, render_item

L_TROMINO = (g.block((0, 0, 0)), g.block((1, 0, 0)), g.block((0, 1, 0)))
CHIRAL = (
    g.block((0, 0, 0)),
    g.block((1, 0, 0)),
    g.block((1, 1, 0)),
    g.block((1, 1, 1)),
)  # a chiral tetracube
TIP_X = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]])  # 90 degrees about x: z no longer up
TURN_Z = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])  # 90 degrees about z: z stays up
DIRECTION = g.ISOMETRIC[0]


def test_object_key_matches_geometry_same_object() -> None:
    rng = np.random.default_rng(0)
    for _ in range(80):
        s = g.random_shape(rng, "hard")
        others = [
            g.transform(s, g.rotations()[int(rng.integers(24))]),
            g.mirror(s),
            edited(s, rng, "move") or s,
        ]
        for t in others:
            assert (object_key(s) == object_key(t)) == g.same_object(s, t)


def test_l_tromino_rotation_is_same_object_and_chiral_mirror_is_not() -> None:
    assert object_key(L_TROMINO) == object_key(g.transform(L_TROMINO, TIP_X))
    assert object_key(CHIRAL) != object_key(g.mirror(CHIRAL))
    assert object_key(L_TROMINO) == object_key(g.mirror(L_TROMINO))  # flat shapes are achiral


def _rotation_draft(answer: g.Shape, *distractors: g.Shape) -> object:
    task = Rotation3D()
    dirs = [g.ISOMETRIC[k] for k in range(4)]
    options = [Pose(s, DIRECTION) for s in (answer, *distractors)]
    return task, dataclasses.replace(
        task.draft(np.random.default_rng(0), "easy"),
        scene=CHIRAL,
        options=options,
        meta={"question_dirs": dirs, "view_offset": 1},
    )


def test_rotation_verifier_hand_built() -> None:
    fresh = (g.block((0, 0, 0)), g.block((0, 0, 1)), g.block((0, 0, 2)), g.block((0, 0, 3)))
    task, draft = _rotation_draft(g.transform(CHIRAL, TIP_X), g.mirror(CHIRAL), truncated(CHIRAL, 0.2), fresh)
    assert task.check(draft) == []
    _, planted = _rotation_draft(g.transform(CHIRAL, TIP_X), g.transform(CHIRAL, TURN_Z), CHIRAL[:3], fresh)
    assert any("distractor 1 is the question's object" in p for p in task.check(planted))
    _, upright = _rotation_draft(g.transform(CHIRAL, TURN_Z), g.mirror(CHIRAL), CHIRAL[:3], fresh)
    assert any("camera swap" in p for p in task.check(upright))
    _, twins = _rotation_draft(g.transform(CHIRAL, TIP_X), fresh, CHIRAL[:3], g.transform(fresh, TIP_X))
    assert any("options 1 and 3 are the same object" in p for p in task.check(twins))


def test_carrying_rotations_finds_the_turn() -> None:
    found = carrying_rotations(CHIRAL, g.transform(CHIRAL, TIP_X))
    assert any((r == TIP_X).all() for r in found) and not carrying_rotations(CHIRAL, g.mirror(CHIRAL))


def test_truncated_drops_the_authors_count() -> None:
    shape = g.grow(np.random.default_rng(3), 10)
    assert truncated(shape, 0.8) == shape[: len(shape) - int(len(shape) * 0.44)]


def test_projection_cells_of_a_hand_built_shape() -> None:
    # an L in the x-z plane: cells (0,0,0), (1,0,0), (0,0,1); z up, front = -y
    shape = (g.block((0, 0, 0), (1, 0, 0)), g.block((0, 0, 1)))
    assert View(shape, "front").cells == {(0, 0), (1, 0), (0, 1)}
    assert View(shape, "back").cells == {(1, 0), (0, 0), (1, 1)}  # mirrored: x runs leftwards
    assert View(shape, "top").cells == {(0, 0), (1, 0)}
    assert View(shape, "right").cells == {(0, 0), (0, 1)}


def test_projection_verifier_hand_built() -> None:
    shape = (g.block((0, 0, 0), (1, 0, 0)), g.block((0, 0, 1)))
    task = Projection3D()
    base = task.draft(np.random.default_rng(0), "easy")
    tall = (g.block((0, 0, 0)), g.block((0, 0, 1)), g.block((0, 0, 2)))
    wide = (g.block((0, 0, 0), (1, 0, 0)), g.block((2, 0, 0), (3, 0, 0)))
    zigzag = (g.block((0, 0, 0), (0, 0, 1)), g.block((1, 0, 1), (1, 0, 2)))
    options = [View(shape, "front"), View(tall, "front"), View(wide, "front"), View(zigzag, "front")]
    draft = dataclasses.replace(base, scene=shape, options=options, meta={"view": "front"})
    assert task.check(draft) == []
    near = dataclasses.replace(draft, options=[*options[:3], View(shape, "back")])  # 2 of 4 cells differ: 0.5
    assert task.check(near) == []
    same = dataclasses.replace(draft, options=[*options[:3], View((*shape, g.block((0, 1, 0))), "front")])
    assert any("options 0 and 3" in p for p in task.check(same))  # a hidden block draws the same silhouette
    wrong = dataclasses.replace(draft, meta={"view": "top"})
    assert any("option 0 is not the asked view" in p for p in task.check(wrong))


def test_combination_verifier_hand_built() -> None:
    shape = (g.block((0, 0, 0)), g.block((1, 0, 0)), g.block((0, 1, 0), (0, 2, 0)), g.block((0, 0, 1)))
    task = Combination3D()
    base = task.draft(np.random.default_rng(0), "easy")
    kinds = [
        ("cube", "prism", "cube", "cube"),
        ("prism",) * 4,
        ("cube",) * 4,
        ("prism", "prism", "cube", "prism"),
    ]
    options = [Parts(k, DIRECTION) for k in kinds]
    draft = dataclasses.replace(base, scene=shape, options=options)
    assert task.check(draft) == []
    dup = dataclasses.replace(
        draft, options=[*options[:3], Parts(("prism", "cube", "cube", "cube"), DIRECTION)]
    )
    assert any("options 0 and 3 have the same counts" in p for p in task.check(dup))
    short = dataclasses.replace(draft, options=[Parts(("cube", "prism", "cube"), DIRECTION), *options[1:]])
    assert task.check(short)


@pytest.mark.parametrize("task", [Rotation3D(), Projection3D(), Combination3D()], ids=lambda t: t.name)
def test_thousand_drafts_are_proved(task: object) -> None:
    rng = np.random.default_rng(12)
    for i in range(1000):
        item = make_item(task, rng, DIFFICULTIES[i % 3], gate=False)  # type: ignore[arg-type]
        assert task.check(item.draft) == []  # type: ignore[attr-defined]
        if isinstance(task, Rotation3D):
            keys = [object_key(o.shape) for o in item.draft.options]
            assert keys[0] == object_key(item.draft.scene) and len(set(keys)) == 4
        elif isinstance(task, Combination3D):
            assert item.draft.options[0].counts == g.counts(item.draft.scene)
        else:
            assert item.draft.options[0].cells == g.projection(item.draft.scene, item.draft.meta["view"])
            assert item.draft.meta["view"] != "bottom"


@pytest.mark.parametrize("task", [Rotation3D(), Projection3D(), Combination3D()], ids=lambda t: t.name)
def test_renders_are_deterministic(task: object) -> None:
    images = []
    for _ in range(2):
        item = make_item(task, np.random.default_rng(5), "medium")  # type: ignore[arg-type]
        images.append(np.asarray(render_item(task, item)))  # type: ignore[arg-type]
    assert images[0].shape == (480, 640, 3) and (images[0] == images[1]).all()
    assert task.n_question_panels == (2 if isinstance(task, Combination3D) else 1)  # type: ignore[attr-defined]


def test_bad_families_are_refused() -> None:
    with pytest.raises(ValueError, match="families"):
        Rotation3D(families={"flipped": 1.0})


def test_fast_projection_and_quick_edits() -> None:
    rng = np.random.default_rng(7)
    for i in range(300):
        shape = g.random_shape(rng, DIFFICULTIES[i % 3])
        assert all(fast_projection(shape, v) == g.projection(shape, v) for v in VIEWS)
        for edit, change in (("add", 1), ("remove", -1), ("move", 0)):
            out = quick_edit(shape, rng, edit)
            if out is None:
                continue
            assert len(out) == len(shape) + change and g.is_connected(out)
            assert all(g.in_grid(c) for c in g.cells_of(out))
            if edit == "move":
                assert g.counts(out) == g.counts(shape) and out != shape


def test_projection_question_cameras_are_oblique() -> None:
    rng = np.random.default_rng(0)
    for view in VIEWS:
        v = np.array(g.VIEW_DIRECTIONS[view], dtype=float)
        dirs = question_dirs(view, rng)
        assert len(dirs) == (4 if view == "top" else 2)
        for d in dirs:
            cos = float(np.dot(d, v) / np.linalg.norm(d))
            assert (0.35 < cos < 0.65) if view == "top" else (0.2 < cos < 0.45)


def test_projection_answer_is_one_sibling_among_the_options() -> None:
    # The answer must not stand out among the options by its silhouette: by cell count (ink) or
    # as the option nearest the other three (the medoid); each about a quarter of the time.
    task = Projection3D()
    rng = np.random.default_rng(3)
    most = medoid = 0.0
    pairs = 0
    n = 300
    for i in range(n):
        draft = task.draft(rng, DIFFICULTIES[i % 3])
        cells = [o.cells for o in draft.options]
        sizes = [len(c) for c in cells]
        most += (sizes[0] == max(sizes)) / sizes.count(max(sizes))  # ties shared out
        spread = [sum(g.set_difference(a, b) for b in cells) for a in cells]
        medoid += (spread[0] == min(spread)) / spread.count(min(spread))
        if "other_view" in draft.meta["families"]:  # {shape, sibling} x {view, other view}
            pairs += 1
            o = draft.options
            assert o[1].shape == draft.scene and o[1].view not in (o[0].view, g.OPPOSITE[o[0].view])
            assert o[2].shape == o[3].shape and (o[2].view, o[3].view) == (o[0].view, o[1].view)
    assert 0.18 < most / n < 0.32 and 0.18 < medoid / n < 0.32 and pairs > 0.1 * n


def test_projection_options_share_one_flat_tone() -> None:
    task = Projection3D()
    draft = make_item(task, np.random.default_rng(2), "hard").draft
    _, options = task.panels(draft)
    for panel in options:
        colours, n = np.unique(np.asarray(panel).reshape(-1, 3), axis=0, return_counts=True)
        ink = [(tuple(c), k) for c, k in zip(colours, n, strict=True) if tuple(c) != (255, 255, 255)]
        assert max(ink, key=lambda t: t[1])[0] == OPTION_GREY
