"""The block geometry and the painter: the 24 rotations, rigid-object equivalence, projections as
cell sets, the authors' growth rule, and deterministic pixels."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.spatial_dise import geometry as g
from iclr26.spatial_dise import render as r


def test_the_24_rotations_are_a_group() -> None:
    rots = g.rotations()
    assert len(rots) == 24
    keys = {m.tobytes() for m in rots}
    assert len(keys) == 24
    for a in rots:
        assert round(np.linalg.det(a)) == 1
        for b in rots[:5]:
            assert (a @ b).tobytes() in keys  # closed under composition


def test_canonical_and_object_key_agree_on_equivalence() -> None:
    rng = np.random.default_rng(3)
    for _ in range(60):
        s = g.random_shape(rng, "medium")
        turned = g.transform(s, g.rotations()[int(rng.integers(24))])
        moved = tuple(g.block(*((x + 7, y - 3, z + 1) for x, y, z in b.cells)) for b in turned)
        assert g.canonical(moved) == g.canonical(s) and g.same_object(moved, s)
        other = g.random_shape(rng, "medium")
        assert (g.canonical(other) == g.canonical(s)) == g.same_object(other, s)
        assert (g.canonical(g.mirror(s)) == g.canonical(s)) == g.same_object(g.mirror(s), s)


def test_a_chiral_shape_differs_from_its_mirror_and_a_prism_differs_from_two_cubes() -> None:
    chiral = (g.block((0, 0, 0)), g.block((1, 0, 0)), g.block((1, 1, 0)), g.block((1, 1, 1)))
    assert not g.same_object(chiral, g.mirror(chiral))
    prism = (g.block((0, 0, 0), (1, 0, 0)),)
    cubes = (g.block((0, 0, 0)), g.block((1, 0, 0)))
    assert g.cells_of(prism) == g.cells_of(cubes) and not g.same_object(prism, cubes)


def test_projection_cell_sets_by_hand() -> None:
    # an L in the x-z plane: (0,0,0), (1,0,0), (0,0,1)
    shape = (g.block((0, 0, 0)), g.block((1, 0, 0)), g.block((0, 0, 1)))
    assert g.projection(shape, "front") == {(0, 0), (1, 0), (0, 1)}
    assert g.projection(shape, "back") == {(1, 0), (0, 0), (1, 1)}  # seen from behind: mirrored
    assert g.projection(shape, "top") == {(0, 0), (1, 0)}
    two, three = frozenset({(0, 0), (1, 0)}), frozenset({(0, 0), (1, 0), (0, 1)})
    assert g.set_difference(two, three) == pytest.approx(1 / 3)


def test_growth_follows_the_authors_rule() -> None:
    rng = np.random.default_rng(0)
    kinds = []
    for difficulty, (_lo, hi) in g.BLOCKS.items():
        for _ in range(100):
            s = g.random_shape(rng, difficulty)
            assert g.is_connected(s) and len(s) <= hi
            assert all(g.in_grid(c) for c in g.cells_of(s))
            assert len(g.cells_of(s)) == sum(len(b.cells) for b in s)  # no overlaps
            kinds += [b.kind for b in s]
    share = kinds.count("prism") / len(kinds)
    assert 0.24 < share < 0.4  # p = 0.3, boosted while prisms lag behind


def test_largest_component_keeps_the_big_piece() -> None:
    shape = (g.block((0, 0, 0)), g.block((1, 0, 0)), g.block((2, 0, 0)), g.block((-2, -2, -2)))
    assert g.largest_component(shape) == shape[:3]


def test_painter_is_deterministic_and_hides_occluded_blocks() -> None:
    rng = np.random.default_rng(5)
    s = g.random_shape(rng, "hard")
    cam = r.Camera(g.ISOMETRIC[0], 200, 150)
    a, _ = r.rasterize(r.block_mesh(s), cam)
    b, _ = r.rasterize(r.block_mesh(s), cam)
    assert a.shape == (150, 200, 3) and (a == b).all()
    assert (a == 0).any() and (a == 255).any()  # outlines and background
    # a cube hidden behind another along the view axis shows no face
    line = (g.block((0, 0, 0)), g.block((0, 0, 1)))
    assert r.visible_blocks(line, (0, 0, 1)) == 1
    assert r.visible_blocks(line, g.ISOMETRIC[0]) == 2
