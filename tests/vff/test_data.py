"""Tests for iclr26.vff.data: exact continuous videos, degradation, bundled clips, image folders."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from scipy import ndimage

from iclr26.vff.data import (
    CLIP_NAMES,
    PHOTO_NAMES,
    ContinuousVideo,
    Motion,
    Sample,
    degrade,
    list_video_folders,
    load_clip,
    load_photo,
    load_video_folder,
    photo_library,
    random_motion,
    synthetic_sample,
)


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    """A small real photo crop (non-square) so spline work stays fast."""
    return load_photo("chelsea")[60:140, 100:196]  # 80 × 96


def test_photo_library_is_rgb_float():
    library = photo_library()
    assert {"astronaut", "chelsea", "coffee", "rocket", "china", "flower"} <= set(library)
    assert tuple(library) == PHOTO_NAMES
    for name, image in library.items():
        assert image.dtype == np.float32 and image.ndim == 3 and image.shape[2] == 3, name
        assert min(image.shape[:2]) >= 256, name
        assert image.min() >= 0.0 and image.max() <= 1.0 and image.std() > 0.05, name
    with pytest.raises(ValueError, match="name must be one of"):
        load_photo("lena")


def test_zero_motion_full_view_reproduces_pixels(photo):
    h0, w0 = photo.shape[:2]
    video = ContinuousVideo(photo, Motion(), view=1.0, aspect=w0 / h0)
    frame = video.frame(0.0, h0, w0).permute(1, 2, 0).numpy()
    # cubic-spline interpolation at the knots returns the samples themselves
    np.testing.assert_allclose(frame, photo, atol=2e-6)


def test_one_pixel_pan_shifts_frame(photo):
    h0, w0 = photo.shape[:2]
    # view = 0.5 of the shorter side (40 px), 40 × 40 output: one output pixel per photo pixel
    video = ContinuousVideo(photo, Motion(pan_x=1.0 / w0, pan_y=-1.0 / h0), view=0.5)
    f0, f1 = video.frame(0.0, 40, 40), video.frame(1.0, 40, 40)
    # view moved +1 column and −1 row: f1[i, j] = f0[i − 1, j + 1]
    torch.testing.assert_close(f1[:, 1:, :-1], f0[:, :-1, 1:], atol=1e-6, rtol=0)
    assert not torch.allclose(f1, f0, atol=1e-3)


def test_sample_matches_scipy_reference(photo):
    rng = np.random.default_rng(0)
    h0, w0 = photo.shape[:2]
    reference = photo.astype(np.float64).transpose(2, 0, 1)  # unfiltered photo, channels first
    x, y, t = rng.uniform(0, 1, (3, 200))

    # zero motion, full view: x, y map straight to photo indices (x·W0 − ½, y·H0 − ½)
    video = ContinuousVideo(photo, Motion(), view=1.0, aspect=w0 / h0)
    rows, cols = y * h0 - 0.5, x * w0 - 0.5
    expected = np.stack(
        [ndimage.map_coordinates(reference[c], [rows, cols], order=3, mode="mirror") for c in range(3)], -1
    )
    np.testing.assert_allclose(video.sample(x, y, 0.0), expected, atol=1e-9)

    # general motion: view (0.6 × 80 = 48 high, 1.5 × 48 = 72 wide), rotate, zoom, pan — our own affine
    motion = Motion(pan_x=0.07, pan_y=-0.04, zoom=1.2, rotation=0.15)
    video = ContinuousVideo(photo, motion, view=0.6, aspect=1.5)
    s, a = 1.2**t, 0.15 * t
    dx, dy = (x - 0.5) * 72.0, (y - 0.5) * 48.0
    px = w0 / 2 + 0.07 * w0 * t + s * (np.cos(a) * dx - np.sin(a) * dy)
    py = h0 / 2 - 0.04 * h0 * t + s * (np.sin(a) * dx + np.cos(a) * dy)
    expected = np.stack(
        [
            ndimage.map_coordinates(reference[c], [py - 0.5, px - 0.5], order=3, mode="mirror")
            for c in range(3)
        ],
        -1,
    )
    np.testing.assert_allclose(video.sample(x, y, t), expected, atol=1e-9)
    # broadcasting: a grid of x against a column of y at one t
    grid = video.sample(x[None, :5], y[:4, None], 0.3)
    assert grid.shape == (4, 5, 3)


def test_identity_motions(photo):
    still = ContinuousVideo(photo, Motion(), view=0.7)
    for t in (0.0, 0.37, 1.0):
        torch.testing.assert_close(still.frame(t, 24, 24), still.frame(0.0, 24, 24), atol=0, rtol=0)
    full_turn = ContinuousVideo(photo, Motion(rotation=2 * math.pi), view=0.7)
    torch.testing.assert_close(full_turn.frame(1.0, 24, 24), still.frame(0.0, 24, 24), atol=1e-6, rtol=0)


def test_frames_are_deterministic(photo):
    a = synthetic_sample(np.random.default_rng(3), 3, (8, 10), 2.0, photo=photo)
    b = synthetic_sample(np.random.default_rng(3), 3, (8, 10), 2.0, photo=photo)
    c = synthetic_sample(np.random.default_rng(4), 3, (8, 10), 2.0, photo=photo)
    assert torch.equal(a.lr, b.lr) and a.video.motion == b.video.motion
    assert not torch.equal(a.lr, c.lr)
    assert random_motion(np.random.default_rng(5)) == random_motion(np.random.default_rng(5))


def test_random_motion_ranges():
    rng = np.random.default_rng(1)
    motions = [random_motion(rng) for _ in range(200)]
    assert all(abs(m.pan_x) <= 0.15 and abs(m.pan_y) <= 0.15 for m in motions)
    assert all(0.8 <= m.zoom <= 1.25 and abs(m.rotation) <= 0.2 for m in motions)
    with pytest.raises(ValueError, match="rng"):
        random_motion(0)
    with pytest.raises(ValueError, match="zoom"):
        Motion(zoom=0.0)


def test_constructor_validation(photo):
    with pytest.raises(ValueError, match="photo"):
        ContinuousVideo(photo[..., :2], Motion())
    with pytest.raises(ValueError, match="view"):
        ContinuousVideo(photo, Motion(), view=0.0)
    with pytest.raises(ValueError, match="aspect"):
        ContinuousVideo(photo, Motion(), aspect=-1.0)
    with pytest.raises(ValueError, match="order"):
        ContinuousVideo(photo, Motion(), order=7)
    video = ContinuousVideo(photo, Motion())
    with pytest.raises(ValueError, match="height"):
        video.frame(0.0, 0, 4)


def test_clip_shape_and_range(photo):
    video = ContinuousVideo(photo, Motion(pan_x=0.1, zoom=0.9, rotation=0.1), view=0.5, aspect=1.25)
    clip = video.clip([0.0, 0.5, 1.0], 12, 15)
    assert clip.shape == (3, 3, 12, 15) and clip.dtype == torch.float32
    assert clip.min() >= 0.0 and clip.max() <= 1.0
    torch.testing.assert_close(clip[1], video.frame(0.5, 12, 15))


def test_degrade():
    clip = torch.rand(2, 3, 32, 48, generator=torch.Generator().manual_seed(0))
    low = degrade(clip, 4.0)
    assert low.shape == (2, 3, 8, 12) and low.dtype == torch.float32
    assert low.min() >= 0.0 and low.max() <= 1.0
    assert degrade(clip, 3.0).shape == (2, 3, 11, 16)  # round(32/3), round(48/3)
    torch.testing.assert_close(degrade(clip, 1.0), clip, atol=1e-5, rtol=0)
    flat = torch.full((1, 3, 20, 20), 0.25)
    torch.testing.assert_close(degrade(flat, 2.5), torch.full((1, 3, 8, 8), 0.25))
    with pytest.raises(ValueError, match="scale"):
        degrade(clip, 0.5)
    with pytest.raises(ValueError, match="scale"):
        degrade(clip, float("nan"))
    with pytest.raises(ValueError, match="clip"):
        degrade(clip[0], 2.0)


@pytest.mark.parametrize("scale", [1.0, 2.0, 2.5, 3.7, 4.0])
def test_synthetic_sample_shapes(photo, scale):
    sample = synthetic_sample(np.random.default_rng(0), 4, (9, 13), scale, photo=photo)
    assert isinstance(sample, Sample) and isinstance(sample.video, ContinuousVideo)
    assert sample.lr.shape == (4, 3, 9, 13)
    assert sample.hr.shape == (4, 3, round(9 * scale), round(13 * scale))
    torch.testing.assert_close(sample.lr_times, torch.tensor([0.0, 1 / 3, 2 / 3, 1.0]))
    assert sample.scale == scale
    # the HR frames are the video's own frames at the LR times
    torch.testing.assert_close(sample.hr[2], sample.video.frame(2 / 3, *sample.hr.shape[-2:]))
    with pytest.raises(ValueError, match="lr_frames"):
        synthetic_sample(np.random.default_rng(0), 1, (9, 13), scale, photo=photo)
    with pytest.raises(ValueError, match="lr_size"):
        synthetic_sample(np.random.default_rng(0), 4, (9, 0), scale, photo=photo)


def test_synthetic_sample_from_library():
    sample = synthetic_sample(np.random.default_rng(7), 2, (8, 8), 2.0)
    assert sample.lr.shape == (2, 3, 8, 8)


def test_load_clip():
    bikes = load_clip("bikes", max_frames=4)
    assert bikes.shape == (4, 3, 272, 640) and bikes.dtype == torch.float32
    assert bikes.min() >= 0.0 and bikes.max() <= 1.0 and bikes.std() > 0.05
    carphone = load_clip("carphone", max_frames=3, stride=2)
    assert carphone.shape == (3, 3, 144, 176)
    assert set(CLIP_NAMES) == {"bikes", "carphone", "carphone_distorted", "bigbuckbunny"}
    with pytest.raises(ValueError, match="neither a bundled clip"):
        load_clip("foreman")
    with pytest.raises(ValueError, match="stride"):
        load_clip("bikes", stride=0)


def _write_frames(folder: Path, names: list[str], size: tuple[int, int] = (6, 5)) -> list[np.ndarray]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(len(names))
    frames = []
    for name in names:
        pixels = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / name)
        frames.append(pixels)
    return frames


def test_load_video_folder_round_trip(tmp_path):
    names = ["frame10.png", "frame2.png", "frame1.png"]
    frames = dict(zip(names, _write_frames(tmp_path / "clip", names), strict=True))
    (tmp_path / "clip" / "notes.txt").write_text("not a frame")
    clip = load_video_folder(tmp_path / "clip")
    assert clip.shape == (3, 3, 6, 5) and clip.dtype == torch.float32
    for k, name in enumerate(["frame1.png", "frame2.png", "frame10.png"]):  # natural order
        expected = torch.from_numpy(frames[name]).permute(2, 0, 1).float() / 255
        torch.testing.assert_close(clip[k], expected)
    assert load_video_folder(str(tmp_path / "clip"), max_frames=2).shape[0] == 2


def test_load_video_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing"):
        load_video_folder(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.txt").write_text("")
    with pytest.raises(ValueError, match="no image files"):
        load_video_folder(tmp_path / "empty")
    _write_frames(tmp_path / "mixed", ["a1.png", "a2.png"])
    _write_frames(tmp_path / "mixed", ["a3.png"], size=(7, 5))
    with pytest.raises(ValueError, match=r"'a3.png' has size 7×5 but 'a1.png' has 6×5"):
        load_video_folder(tmp_path / "mixed")


def test_list_video_folders(tmp_path):
    _write_frames(tmp_path / "vid4" / "walk", ["00000001.png"])
    _write_frames(tmp_path / "vid4" / "calendar", ["im1.png"])
    _write_frames(tmp_path / "gopro" / "test" / "GOPR10" / "sharp", ["000001.png"])
    _write_frames(tmp_path / "gopro" / "test" / "GOPR9" / "sharp", ["000001.png"])
    (tmp_path / "gopro" / "test" / "empty").mkdir()
    found = [p.relative_to(tmp_path).as_posix() for p in list_video_folders(tmp_path)]
    assert found == [
        "gopro/test/GOPR9/sharp",
        "gopro/test/GOPR10/sharp",
        "vid4/calendar",
        "vid4/walk",
    ]
    assert list_video_folders(tmp_path / "vid4" / "walk") == [tmp_path / "vid4" / "walk"]
    with pytest.raises(FileNotFoundError):
        list_video_folders(tmp_path / "nope")
