"""The answerability gate: a distractor whose difference from the object is hidden in the pictures is
refused, one whose difference shows is kept; `make_item` redrafts refused items; the gate draws no
random numbers (so `gate=False` gives the items made before it)."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.spatial_dise.answerability import (
    GATED,
    ViewVisibility,
    best_alignments,
    combination_problems,
    distinguishing_cells,
    problems,
    rotation_problems,
)
from iclr26.spatial_dise.blocks3d import Combination3D, Parts, Pose, Rotation3D
from iclr26.spatial_dise.geometry import ISOMETRIC, block, cells_of
from iclr26.spatial_dise.items import Draft, make_item
from iclr26.spatial_dise.render import block_mesh
from iclr26.spatial_dise.tasks import task

SOLID = tuple(block((x, y, z)) for x in range(3) for y in range(3) for z in range(3))
"""A 3x3x3 cube of unit blocks: its centre cell shows from no direction."""
LINE = (block((0, 0, 0)), block((1, 0, 0)), block((2, 0, 0)))
ELL = (block((0, 0, 0)), block((1, 0, 0)), block((0, 1, 0)), block((0, 0, 1)))
SLAB = tuple(block((x, y, 0)) for x in range(3) for y in range(2))


def _rotation_draft(distractors) -> Draft:
    direction = ISOMETRIC[0]
    options = [Pose(SOLID, direction), *(Pose(d, direction) for d in distractors)]
    meta = {"question_dirs": list(ISOMETRIC), "families": ["fresh"] * 3, "view_offset": 1}
    return Draft("3d_rotation", "hard", "?", SOLID, options, meta)


def test_a_hidden_cell_never_shows_and_a_corner_does() -> None:
    view = ViewVisibility(sorted(cells_of(SOLID)), ISOMETRIC[1], (320, 240), block_mesh(SOLID))
    assert view.visible((1, 1, 1)) == 0  # the centre
    assert view.seen((2, 2, 2))  # the corner facing the camera (+x, +y, +z)
    assert not view.seen((0, 0, 0))  # the far corner is behind the rest
    assert view.seen((3, 2, 2))  # an empty cell in front of a face would show if filled


def test_a_distractor_differing_only_inside_the_object_is_undecidable() -> None:
    hollow = tuple(b for b in SOLID if b.cells != ((1, 1, 1),))
    assert rotation_problems(Rotation3D(), _rotation_draft([hollow, LINE, ELL])) == [
        "distractor 1: no cell where it differs shows in both views"
    ]


def test_distractors_whose_difference_shows_pass() -> None:
    assert rotation_problems(Rotation3D(), _rotation_draft([LINE, ELL, SLAB])) == []


def test_distinguishing_cells_of_a_moved_block_are_its_two_places() -> None:
    moved = (*SLAB[:-1], block((3, 0, 0)))
    aligned = best_alignments(SLAB, moved)
    assert aligned
    diffs = [distinguishing_cells(SLAB, moved, r, t) for r, t in aligned]
    assert all(len(d) == 2 for d in diffs)  # one cell only in each shape


def test_assembly_with_a_hidden_block_refuses_counts_that_fit_what_is_seen() -> None:
    t = Combination3D()
    shape = SOLID  # 27 cubes, the centre hidden in both views
    kinds = [("cube",) * 27, ("cube",) * 26 + ("prism",), ("cube",) * 25 + ("prism",) * 2, ("prism",) * 27]
    options = [Parts(k, ISOMETRIC[0]) for k in kinds]
    draft = Draft("3d_combination", "hard", "?", shape, options, {"question_dirs": list(ISOMETRIC)})
    found = combination_problems(t, draft)
    # 26 cubes are seen: a distractor with fewer than 26 cubes is ruled out, one with 26 is not
    assert any(p.startswith("distractor 1:") for p in found)
    assert not any(p.startswith(("distractor 2:", "distractor 3:")) for p in found)


@pytest.mark.parametrize("name", GATED)
def test_made_items_pass_the_gate_and_the_gate_draws_no_random_numbers(name: str) -> None:
    t = task(name)
    for i in range(3):
        item = make_item(t, np.random.default_rng(i), "hard")
        assert problems(t, item.draft) == []
        ungated = make_item(t, np.random.default_rng(i), "hard", gate=False)
        if item.rejected == ungated.rejected:  # the gate refused no draft: the very same item
            assert item.order == ungated.order and item.draft.scene == ungated.draft.scene


def test_ungated_tasks_have_no_gate() -> None:
    t = task("2d_rotation")
    assert problems(t, make_item(t, np.random.default_rng(0), "easy").draft) == []
