"""The optional Blender renderer: it draws the painter's scene (same framing, same silhouette,
close colours), repeats its pixels, makes whole items, and says what to install when Blender is
missing."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.core.errors import UserError
from iclr26.spatial_dise import blender
from iclr26.spatial_dise import geometry as g
from iclr26.spatial_dise import render as r
from iclr26.spatial_dise.items import make_item, render_item
from iclr26.spatial_dise.tasks import task


@pytest.fixture
def blender_renderer():
    with r.use_renderer("blender"):
        yield


@pytest.mark.debian("blender")
def test_blender_draws_the_painters_scene(blender_renderer) -> None:
    shape = g.random_shape(np.random.default_rng(1), "medium")
    mesh = r.block_mesh(shape) + r.cone_mesh((0, -3.2, 0), (0, -4.5, 0), 0.5)
    cam = r.Camera(g.ISOMETRIC[0], 160, 120)
    painted = np.asarray(r.rasterize(mesh, cam)[0], dtype=float)
    drawn = np.asarray(r.render(mesh, cam), dtype=float)
    again = np.asarray(r.render(mesh, cam), dtype=float)
    assert drawn.shape == painted.shape == (120, 160, 3)
    assert (drawn == again).all()  # Cycles is seeded
    ink_p, ink_b = painted.min(axis=2) < 250, drawn.min(axis=2) < 250
    assert (ink_p & ink_b).sum() / (ink_p | ink_b).sum() > 0.85  # one silhouette, one framing
    assert np.abs(painted - drawn).mean() < 12  # the same flat colours, outlines a little different


@pytest.mark.debian("blender")
def test_blender_renders_a_whole_item(blender_renderer) -> None:
    t = task("3d_rotation")
    image = render_item(t, make_item(t, np.random.default_rng(0), "easy"))
    assert image.size == (640, 480)


def test_a_missing_blender_is_one_line(monkeypatch) -> None:
    monkeypatch.setattr(blender, "has_bpy", lambda: False)
    monkeypatch.setattr(blender, "blender_executable", lambda: None)
    with pytest.raises(UserError, match="apt-get install blender"), r.use_renderer("blender"):
        pass
    with pytest.raises(UserError, match="unknown renderer 'povray'"), r.use_renderer("povray"):
        pass


def test_the_renderer_is_chosen_for_a_block_only(monkeypatch) -> None:
    monkeypatch.setattr(blender, "require_blender", lambda: None)
    monkeypatch.setattr(blender, "render_blender", lambda mesh, cam, outline: "drawn by blender")
    mesh, cam = r.block_mesh([g.block((0, 0, 0))]), r.Camera(g.ISOMETRIC[0], 40, 30)
    with pytest.raises(RuntimeError, match="a task failed"), r.use_renderer("blender"):
        assert r.render(mesh, cam) == "drawn by blender"
        raise RuntimeError("a task failed")
    assert r.render(mesh, cam).size == (40, 30)  # the painter again, though the block raised
