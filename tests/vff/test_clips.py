"""Real video as training data (crops, strides, pixel targets), the validation split, selection of the
best validation weights, the models' step-0 interpolant, and clip sources (names, files, folders)."""

import builtins

import numpy as np
import pytest
import torch
from PIL import Image

from iclr26.core.config import ConfigError
from iclr26.vff import SYSTEM
from iclr26.vff.clips import RealClips, split_frames
from iclr26.vff.data import degrade, load_clip, read_frames
from iclr26.vff.evaluate import (
    bicubic_method,
    clip_case,
    interpolant_method,
    mean_psnr,
    model_method,
    parse_setting,
    validation_cases,
)
from iclr26.vff.models import EncoderConfig, VideoFourierField
from iclr26.vff.train import TrainConfig, train_model

SMALL = EncoderConfig(channels=8, blocks=1)


@pytest.fixture(scope="module")
def coded_clip(tmp_path_factory):
    """24 frames of 64×64 whose pixels encode where they are: R = 8·frame, G = row, B = column."""
    folder = tmp_path_factory.mktemp("coded")
    rows, cols = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    for f in range(24):
        pixels = np.stack([np.full((64, 64), 8 * f), rows, cols], -1).astype(np.uint8)
        Image.fromarray(pixels).save(folder / f"frame{f}.png")
    return str(folder)


def test_split_frames_holds_out_the_last_fraction():
    assert split_frames(132, 0.25) == (range(0, 99), range(99, 132))
    assert split_frames(10, 0.0) == (range(0, 10), range(10, 10))


def test_real_clip_examples_target_the_clips_own_pixels_and_frames(coded_clip):
    clips = RealClips([coded_clip], validation_fraction=0.25, max_time_factor=4)
    source = clips.frames[0]
    rng = np.random.default_rng(0)
    flips, reversals, taus = set(), set(), set()
    for _ in range(40):
        scale = float(rng.uniform(1.2, 4.0))
        ex = clips.example(rng, lr_frames=3, lr_size=8, scale=scale, queries=200)
        side = round(8 * scale)
        assert ex.lr.shape == (3, 3, 8, 8) and ex.scale == side / 8
        code = (ex.targets * 255).round().long()
        frame, row, col = code[:, 0] // 8, code[:, 1], code[:, 2]
        assert int(frame.max()) < 18  # training frames only (the last 6 of 24 are held out)
        t, y, x = ex.queries.T
        f = (t * ex.tau).round().long()  # crop frame index
        i = (y * side / 8 - 0.5).round().long()  # crop row, column
        j = (x * side / 8 - 0.5).round().long()
        assert torch.allclose(t * ex.tau, f.float(), atol=1e-5) and int(f.min()) >= 0
        assert int(f.max()) <= 2 * ex.tau and int(i.min()) >= 0 and int(i.max()) < side
        top = (row - i).unique()
        assert len(top) == 1
        flipped = len((col + j).unique()) == 1
        left = (col + j - (side - 1)).unique() if flipped else (col - j).unique()
        assert len(left) == 1
        reversed_ = len((frame + f).unique()) == 1
        start = (frame + f - 2 * ex.tau).unique() if reversed_ else (frame - f).unique()
        assert len(start) == 1
        # the input frames are crop frames 0, τ, 2τ degraded by the same antialiased bicubic
        crop = source[int(start) : int(start) + 2 * ex.tau + 1, int(top) : int(top) + side]
        crop = crop[:, :, int(left) : int(left) + side]
        crop = crop[:, :, ::-1] if flipped else crop
        crop = crop[::-1] if reversed_ else crop
        hr = torch.from_numpy(np.ascontiguousarray(crop)).permute(0, 3, 1, 2).float() / 255
        torch.testing.assert_close(ex.lr, degrade(hr[:: ex.tau], scale), rtol=0, atol=0)
        flips.add(flipped), reversals.add(reversed_), taus.add(ex.tau)
    assert flips == {True, False} and reversals == {True, False} and taus == {1, 2, 3, 4}


def test_real_clips_that_cannot_hold_a_training_clip_are_clear_errors(coded_clip):
    clips = RealClips([coded_clip], validation_fraction=0.25, max_time_factor=8)
    with pytest.raises(ConfigError, match="18 training frames, fewer than the 25"):
        clips.check_fits(lr_frames=4, hr_side=32)
    with pytest.raises(ConfigError, match="smaller than the 128² HR crop"):
        clips.check_fits(lr_frames=2, hr_side=128)
    with pytest.raises(ConfigError, match="train_clips"):
        RealClips([])


def test_the_interpolant_is_the_models_step_0_and_not_antialiased_bicubic():
    torch.manual_seed(0)
    model = VideoFourierField(SMALL, frequencies=8)
    lr, times = torch.rand(3, 3, 10, 12), [0.0, 0.5, 1.75, 2.0]
    step0 = model_method(model)(lr, times, (25, 30))
    torch.testing.assert_close(interpolant_method(lr, times, (25, 30)), step0, rtol=0, atol=0)
    # torch's antialiased bicubic upsamples with Keys' a = −0.5, grid_sample with a = −0.75
    assert (bicubic_method(lr, times, (25, 30)) - step0).abs().max() > 0.01


def _train(coded_clip, validate, steps=6, **over):
    torch.manual_seed(0)
    model = VideoFourierField(SMALL, frequencies=8)
    cfg = TrainConfig(
        steps=steps, batch=2, lr_frames=3, lr_size=8, queries=64, lr=3e-2, warmup=1,
        real_fraction=0.5, max_time_factor=2, validate_every=2, checkpoint_every=2, **over,
    )  # fmt: skip
    clips = RealClips([coded_clip], 0.25, cfg.max_time_factor)
    return model, cfg, clips


def test_validation_keeps_the_best_weights_step_0_included(coded_clip, tmp_path):
    falling = iter([5.0, 4.0, 3.0, 2.0])  # scores at steps 0, 2, 4, 6: step 0 is the best
    model, cfg, clips = _train(coded_clip, None)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    log = train_model(model, ("astronaut",), cfg, clips=clips, validate=lambda m: next(falling))
    assert log.validation == [(0, 5.0), (2, 4.0), (4, 3.0), (6, 2.0)] and log.kept_step == 0
    assert all(torch.equal(start[k], v) for k, v in model.state_dict().items())
    lr = torch.rand(3, 3, 8, 8)
    torch.testing.assert_close(
        model_method(model)(lr, [0.5], (16, 16)), interpolant_method(lr, [0.5], (16, 16))
    )

    rising = iter([1.0, 2.0, 4.0, 3.0])  # step 4 is the best
    model, cfg, clips = _train(coded_clip, None)
    log = train_model(model, ("astronaut",), cfg, clips=clips, validate=lambda m: next(rising))
    assert log.kept_step == 4
    with pytest.raises(ConfigError, match="validation score"):
        train_model(model, ("astronaut",), cfg, clips=clips)
    with pytest.raises(ConfigError, match="real clips"):
        train_model(model, ("astronaut",), cfg, validate=lambda m: 0.0)


def test_training_with_real_clips_and_validation_resumes_bitwise(coded_clip, tmp_path):
    case = clip_case(coded_clip, 32, 3, 1, first_frame=18)
    score = lambda m: mean_psnr([case], [parse_setting("S2")], 3, model_method(m))  # noqa: E731
    model, cfg, clips = _train(coded_clip, None)
    full = train_model(model, ("astronaut",), cfg, clips=clips, validate=score, seed=1)

    class Interrupted(Exception):
        pass

    def stop(step, _seconds):
        if step == 4:
            raise Interrupted

    with pytest.raises(Interrupted):
        m2, _, _ = _train(coded_clip, None)
        train_model(m2, ("astronaut",), cfg, clips=clips, validate=score, seed=1,
                    checkpoint=tmp_path / "c.pt", on_step=stop)  # fmt: skip
    resumed, _, _ = _train(coded_clip, None)
    again = train_model(resumed, ("astronaut",), cfg, clips=clips, validate=score, seed=1,
                        checkpoint=tmp_path / "c.pt")  # fmt: skip
    assert again == full
    assert all(
        torch.equal(a, b)
        for a, b in zip(model.state_dict().values(), resumed.state_dict().values(), strict=True)
    )
    assert dict(full.validation)[full.kept_step] >= dict(full.validation)[0]  # never below step 0


def test_validation_cases_come_from_the_held_out_frames(coded_clip):
    cases = validation_cases([coded_clip], 32, 3, 2, 0.25)
    assert len(cases) == 3
    for case in cases:
        first = case.frames([0.0], 1)[0]
        assert round(float(first[0].mean()) * 255) == 8 * 18  # frame 18, the first held-out one
    with pytest.raises(ValueError, match="need 27"):
        clip_case(coded_clip, 32, 3, 4, first_frame=18)


def test_clip_sources_names_files_and_folders(coded_clip, tmp_path, monkeypatch):
    folder = read_frames(coded_clip, max_frames=5, stride=2)
    assert folder.shape == (5, 64, 64, 3) and list(folder[:, 0, 0, 0]) == [0, 16, 32, 48, 64]
    from iclr26.vff.data import _clip_path

    path = _clip_path("carphone_distorted")
    by_name = read_frames("carphone_distorted", max_frames=3)
    assert by_name.shape == (3, 144, 176, 3)
    np.testing.assert_array_equal(read_frames(str(path), max_frames=3), by_name)
    real_import = builtins.__import__

    def no_av(name, *args, **kwargs):  # a machine with OpenCV but no PyAV decodes the same pixels
        if name == "av":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_av)
    np.testing.assert_array_equal(read_frames("carphone_distorted", max_frames=3), by_name)
    monkeypatch.undo()
    assert load_clip(str(path), max_frames=2).dtype == torch.float32
    with pytest.raises(ConfigError, match="neither a bundled clip"):
        read_frames(str(tmp_path / "missing.mp4"))


def test_config_keeps_training_clips_apart_from_scored_ones(coded_clip):
    with pytest.raises(ConfigError, match="also scored on"):
        SYSTEM.config("smoke", {"train_clips": "bikes"})
    with pytest.raises(ConfigError, match="need a real clip"):
        SYSTEM.config("smoke", {"train_clips": ""})
    with pytest.raises(ConfigError, match="neither a bundled clip"):
        SYSTEM.config("smoke", {"clips": "foreman"})
    from iclr26.vff.data import _clip_path

    for same in ("carphone_distorted", str(_clip_path("bikes"))):  # the same content, or the same file
        with pytest.raises(ConfigError, match="also scored on"):
            SYSTEM.config("smoke", {"clips": "bikes,carphone", "train_clips": same})
    cfg = SYSTEM.config("smoke", {"train_clips": coded_clip, "train.real_fraction": "1"})
    assert cfg.train_clips == (coded_clip,)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: (p / "clip.mp4").write_text("not a video"), "is not a video file PyAV can decode"),
        (lambda p: (p / "clip.mp4").write_bytes(b""), "is not a video file PyAV can decode"),
        (lambda p: (p / "clip").mkdir() or (p / "clip" / "0001.png").write_text("x"), "is not an image"),
        (lambda p: (p / "clip").mkdir() or (p / "clip" / "notes.txt").write_text("x"), "no image files"),
    ],
)
def test_clips_that_are_not_videos_are_one_error_line_through_the_cli(tmp_path, make, said):
    from typer.testing import CliRunner

    import iclr26.cli as cli

    make(tmp_path)
    clip = tmp_path / ("clip.mp4" if (tmp_path / "clip.mp4").exists() else "clip")
    res = CliRunner().invoke(
        cli.app, ["run", "vff", "--preset", "smoke", "--set", f"clips={clip}", "--out", str(tmp_path / "r")]
    )
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and lines[-1].startswith("error: ") and said in lines[-1], res.output
    assert str(clip) in lines[-1] and "Traceback" not in res.output
