"""The 2D geometry (symmetries, folding, tiling) and the five 2D tasks' verifiers and items."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from iclr26.spatial_dise import plane
from iclr26.spatial_dise.items import DIFFICULTIES, Draft, crop_panels, make_item, render_item
from iclr26.spatial_dise.plane import MIRROR, MIRRORS, ROTATIONS, SYMMETRIES, Fold
from iclr26.spatial_dise.tasks2d import (
    TASKS_2D,
    Assembly2D,
    AssemblyScene,
    Folding2D,
    FoldingScene,
    FoldPunch,
    FoldPunchScene,
    FoldView,
    Rotation2D,
    RotationScene,
    ShapeFinding,
    ShapeFindingScene,
)

L4 = frozenset({(0, 0), (1, 0), (2, 0), (2, 1)})  # L tetromino: chiral, no symmetry
T4 = frozenset({(0, 0), (0, 1), (0, 2), (1, 1)})  # T tetromino: mirror-symmetric
SQUARE = frozenset({(0, 0), (0, 1), (1, 0), (1, 1)})
DOMINO = frozenset({(0, 0), (0, 1)})


# ---------------------------------------------------------------- symmetries and canonical forms


def test_the_eight_symmetries_form_a_group_with_four_rotations():
    matrices = {(s.a, s.b, s.c, s.d) for s in SYMMETRIES}
    assert len(matrices) == 8
    for s in SYMMETRIES:
        for t in SYMMETRIES:
            u = s.then(t, "u")
            assert (u.a, u.b, u.c, u.d) in matrices
    assert [s.is_rotation for s in SYMMETRIES] == [True] * 4 + [False] * 4


def test_rotation_is_clockwise_on_screen_and_mirror_flips_left_right():
    assert plane.transform(ROTATIONS[1], L4) == frozenset({(0, 0), (0, 1), (0, 2), (1, 0)})
    assert plane.transform(MIRROR, L4) == frozenset({(0, 1), (1, 1), (2, 1), (2, 0)})
    segment = frozenset({((0, 0), (1, 0))})
    assert plane.transform(ROTATIONS[1], segment) == frozenset({((0, 0), (0, 1))})


def test_canonical_forms_separate_rotation_from_mirror():
    turned = plane.transform(ROTATIONS[3], plane.translate_cells(L4, 5, 7))
    assert plane.same_up_to_rotation(L4, turned)
    flipped = plane.transform(MIRRORS[2], L4)
    assert not plane.same_up_to_rotation(L4, flipped)
    assert plane.same_up_to_mirror(L4, flipped)
    assert plane.is_chiral(L4) and plane.is_asymmetric(L4)
    assert not plane.is_chiral(T4) and not plane.is_asymmetric(T4)
    assert plane.rotation_taking(L4, turned) is ROTATIONS[3]
    assert plane.rotation_taking(L4, flipped) is None


# ---------------------------------------------------------------- folding and punching by hand


def test_fold_moves_the_flap_onto_the_rest():
    fold = Fold("v", 1, -1)  # the left column over onto the second
    region = plane.packets(4, [fold])[-1]
    assert region == plane.rectangle_facets(1, 0, 4, 4)
    assert plane.fold_point(plane.cell_point((0, 0)), [fold]) == plane.cell_point((0, 1))


def test_fold_and_unfold_a_hand_case():
    folds = (Fold("v", 2, -1), Fold("h", 2, -1))  # left half over right, then top half down
    holes = {(1, 0), (1, 3), (2, 0), (2, 3)}
    assert plane.unfold_holes(4, folds, {(2, 3)}) == holes
    assert plane.holes_by_tracking(4, folds, {(2, 3)}) == holes
    diagonal = (Fold("d", 0, +1),)  # the upper-right triangle of a 2x2 sheet onto the lower-left
    assert plane.full_cells(plane.packets(2, diagonal)[-1]) == [(1, 0)]
    assert plane.unfold_holes(2, diagonal, {(1, 0)}) == {(1, 0), (0, 1)}
    assert plane.holes_by_tracking(2, diagonal, {(1, 0)}) == {(1, 0), (0, 1)}


def test_mistaken_unfolds_rotate_or_slide_the_flap():
    fold = (Fold("v", 2, -1),)
    assert plane.unfold_holes(4, fold, {(0, 3)}) == {(0, 3), (0, 0)}
    assert plane.unfold_holes(4, fold, {(0, 3)}, error=(0, "rotate")) == {(0, 3), (3, 0)}
    assert plane.unfold_holes(4, fold, {(0, 3)}, error=(0, "slide")) == {(0, 3), (0, 1)}


def test_folded_view_shows_every_layer_through_the_paper():
    region, shaded = plane.folded_view(4, [Fold("v", 2, -1)], {(0, 0), (1, 3)})
    assert region == plane.rectangle_facets(2, 0, 4, 4)
    assert shaded == plane.cell_facets((0, 3)) | plane.cell_facets((1, 3))


def test_random_folds_halve_or_shrink_the_packet():
    rng = np.random.default_rng(3)
    for _ in range(50):
        folds = plane.random_folds(rng, 6, 3)
        regions = plane.packets(6, folds)
        assert all(len(b) < len(a) for a, b in itertools.pairwise(regions))
        assert all(f.axis in "vh" for f in folds[:-1])


def test_exact_cover_finds_tilings_and_proves_none_exist():
    tromino = frozenset({(0, 0), (1, 0), (1, 1)})
    rect = frozenset((r, c) for r in range(2) for c in range(3))
    tiling = plane.exact_cover(rect, [tromino, tromino])
    assert tiling is not None and plane.placements_cover(rect, [tromino, tromino], tiling)
    assert plane.exact_cover(T4, [DOMINO, DOMINO]) is None
    assert plane.exact_cover(SQUARE | {(2, 0)}, [DOMINO, DOMINO]) is None  # cell count differs


def test_line_figure_occurrences_are_translations_only():
    corner = frozenset({((0, 0), (1, 0)), ((0, 0), (0, 1))})
    drawing = plane.translate_segments(corner, 2, 1) | {((0, 0), (1, 1))}
    assert plane.occurrences(drawing, corner) == [(2, 1)]
    assert plane.occurrences(drawing, plane.transform(MIRROR, corner)) == []


# ---------------------------------------------------------------- verifiers on hand-built drafts


def _draft(task, scene, options, meta=None) -> Draft:
    return Draft(task.name, "easy", "q", scene, list(options), meta or {})


def test_shape_finding_verifier():
    task = ShapeFinding()
    corner = frozenset({((0, 0), (1, 0)), ((0, 0), (0, 1))})
    mirrored = plane.transform(MIRROR, corner)
    extra = {((0, 3), (1, 3))}
    options = [
        plane.translate_segments(corner, 1, 1) | extra,
        plane.translate_segments(mirrored, 0, 0) | extra,
        plane.translate_segments(mirrored, 1, 2) | extra,
        plane.translate_segments(plane.transform(ROTATIONS[2], corner), 1, 1) | extra,
    ]
    scene = ShapeFindingScene(corner, 3)
    assert task.check(_draft(task, scene, options)) == []
    planted = [*options[:3], plane.translate_segments(corner, 2, 0) | extra]
    assert any("contains the target" in p for p in task.check(_draft(task, scene, planted)))
    assert any("equivalent" in p for p in task.check(_draft(task, scene, [*options[:3], options[1]])))


def test_rotation_verifier():
    task = Rotation2D()
    near = frozenset({(0, 0), (1, 0), (2, 0), (1, 1)})  # not L4 under any symmetry
    options = [
        plane.transform(ROTATIONS[1], L4),
        plane.transform(MIRROR, L4),
        plane.transform(ROTATIONS[2], plane.transform(MIRROR, L4)),
        near,
    ]
    assert task.check(_draft(task, RotationScene(L4), options)) == []
    planted = [*options[:3], plane.transform(ROTATIONS[2], L4)]
    assert task.check(_draft(task, RotationScene(L4), planted)) == [
        "distractor 3 is a rotation of the figure"
    ]
    wrong = [plane.transform(MIRRORS[1], L4), *options[1:]]
    assert "option 0 is not a rotation of the figure" in task.check(_draft(task, RotationScene(L4), wrong))


def test_folding_verifier():
    task = Folding2D()
    scene = FoldingScene(4, (Fold("v", 2, -1),), frozenset({(0, 0), (1, 3)}))
    view = FoldView(*plane.folded_view(scene.n, scene.folds, scene.shaded))
    others = [
        FoldView(view.region, plane.cell_facets((r, 3)) | plane.cell_facets((r + 1, 3))) for r in (1, 2)
    ]
    other = FoldView(view.region, plane.cell_facets((0, 2)) | plane.cell_facets((1, 3)))
    assert task.check(_draft(task, scene, [view, *others, other])) == []
    assert task.check(_draft(task, scene, [view, *others, view]))[0] == "distractor 3 is the folded view"


def test_fold_punch_verifier():
    task = FoldPunch()
    scene = FoldPunchScene(4, (Fold("v", 2, -1),), frozenset({(0, 3)}))
    options = [
        frozenset({(0, 0), (0, 3)}),
        frozenset({(3, 0), (0, 3)}),
        frozenset({(0, 1), (0, 3)}),
        frozenset({(1, 0), (1, 3)}),
    ]
    assert task.check(_draft(task, scene, options)) == []
    planted = [*options[:3], frozenset({(0, 3), (0, 0)})]
    problems = task.check(_draft(task, scene, planted))
    assert "distractor 3 is the unfolded sheet" in problems and "options 0 and 3 are equivalent" in problems
    off_paper = FoldPunchScene(4, scene.folds, frozenset({(0, 0)}))
    assert any("not on a whole cell" in p for p in task.check(_draft(task, off_paper, options)))


def test_assembly_verifier():
    task = Assembly2D()
    scene = AssemblyScene((DOMINO, DOMINO))
    placement = (plane.Placement(0, 0, 0, 0), plane.Placement(1, 0, 1, 0))
    options = [SQUARE, T4, frozenset({(0, 0), (1, 0), (1, 1), (2, 1), (2, 2)}), frozenset({(0, 0)})]
    assert task.check(_draft(task, scene, options, {"placement": placement})) == []
    tileable = [*options[:3], frozenset({(0, 0), (0, 1), (0, 2), (0, 3)})]
    assert any("is tiled" in p for p in task.check(_draft(task, scene, tileable, {"placement": placement})))
    bad = (plane.Placement(0, 0, 0, 0), plane.Placement(1, 0, 0, 1))  # overlapping dominoes
    assert task.check(_draft(task, scene, options, {"placement": bad}))[0].startswith("the placement")


# ---------------------------------------------------------------- generated items


def _ink(task, option) -> int:
    """The amount an option scene would draw: cells, segments, shaded facets or holes."""
    return len(option.shaded) if isinstance(option, FoldView) else len(option)


@pytest.mark.parametrize("task_class", TASKS_2D, ids=lambda c: c.name)
def test_thousand_items_are_proved_with_equal_ink_options(task_class):
    task = task_class()
    rng = np.random.default_rng(2026)
    for i in range(1000):
        item = make_item(task, rng, DIFFICULTIES[i % 3])
        assert task.check(item.draft) == []
        assert sorted(item.order) == [0, 1, 2, 3]
        inks = {_ink(task, o) for o in item.draft.options}
        assert len(inks) == 1, f"{task.name} item {i} options differ in ink: {inks}"


def test_difficulty_changes_the_scene():
    rng = np.random.default_rng(0)
    sizes = {d: len(Rotation2D().draft(rng, d).scene.figure) for d in DIFFICULTIES}
    assert sizes == {"easy": 5, "medium": 7, "hard": 9}
    folds = {d: len(FoldPunch().draft(rng, d).scene.folds) for d in DIFFICULTIES}
    assert folds == {"easy": 1, "medium": 2, "hard": 3}
    pieces = {d: len(Assembly2D().draft(rng, d).scene.pieces) for d in DIFFICULTIES}
    assert pieces == {"easy": 2, "medium": 3, "hard": 4}


@pytest.mark.parametrize("task_class", TASKS_2D, ids=lambda c: c.name)
def test_render_is_640x480_rgb_and_deterministic(task_class):
    task = task_class()
    images = []
    for _ in range(2):
        rng = np.random.default_rng(11)
        item = make_item(task, rng, "hard")
        images.append(render_item(task, item))
    assert images[0].size == (640, 480) and images[0].mode == "RGB"
    assert np.array_equal(np.asarray(images[0]), np.asarray(images[1]))
    questions, options = crop_panels(images[0], task.n_question_panels)
    assert len(questions) == task.n_question_panels and len(options) == 4
    assert all(np.asarray(o.convert("L")).min() < 100 for o in options)  # every option has ink
