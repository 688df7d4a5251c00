"""The video stress tests (degrade.py): only keypoints change, the statistics are right, seeded runs
repeat whatever the order, strength 0 (1 for downsample) is the identity, bad input is a UserError."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from iclr26.core.errors import UserError
from iclr26.slt_reliability.data import Sample, make_corpus
from iclr26.slt_reliability.degrade import (
    DEGRADATIONS,
    degrade,
    drop_frames,
    gaussian_noise,
    shoulder_width,
    temporal_downsample,
)

STRENGTH = {"noise": 0.1, "downsample": 2, "drop": 0.3}
IDENTITY = {"noise": 0.0, "downsample": 1, "drop": 0.0}


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return make_corpus("phoenix_like", seed=0, n_train=6, n_dev=0, n_test=0).train


def plain(n_frames: int, width: float = 0.5, sample_id: str = "plain") -> Sample:
    """A still video: every keypoint at 0 but the shoulders, `width` apart."""
    kp = np.zeros((n_frames, 50, 2), np.float32)
    kp[:, 2, 0], kp[:, 3, 0] = -width / 2, width / 2
    return Sample(sample_id, kp, ("RAIN",), ("rain",), frozenset({"rain"}), 3, "fake")


@pytest.mark.parametrize("kind", DEGRADATIONS)
def test_only_keypoints_change(samples: list[Sample], kind: str) -> None:
    out = degrade(samples, kind, STRENGTH[kind], seed=1)
    assert len(out) == len(samples)
    for a, b in zip(samples, out, strict=True):
        assert replace(b, keypoints=a.keypoints) == a  # id, glosses, text, entities, signer, dataset
        assert b.keypoints.dtype == np.float32 and b.keypoints.shape[1:] == a.keypoints.shape[1:]
        if kind == "noise":
            assert b.keypoints.shape == a.keypoints.shape and (b.keypoints != a.keypoints).all()
        else:
            assert len(b.keypoints) < len(a.keypoints)


def test_noise_std_is_sigma_times_shoulder_width() -> None:
    s = plain(400, width=0.5)
    assert shoulder_width(s) == pytest.approx(0.5)
    eps = gaussian_noise(s, 0.2).keypoints - s.keypoints  # 40 000 coordinates
    assert eps.mean() == pytest.approx(0.0, abs=0.005)
    assert eps.std() == pytest.approx(0.2 * 0.5, rel=0.02)
    eps2 = gaussian_noise(plain(400, width=1.0), 0.2).keypoints - plain(400, width=1.0).keypoints
    assert eps2.std() == pytest.approx(0.2, rel=0.02)  # scales with the signer's size


@pytest.mark.parametrize("factor", [1, 2, 3, 4, 7])
def test_downsample_keeps_every_factor_th_frame(samples: list[Sample], factor: int) -> None:
    for s in samples:
        out = temporal_downsample(s, factor)
        T = len(s.keypoints)
        assert len(out.keypoints) == math.ceil(T / factor)
        np.testing.assert_array_equal(out.keypoints, s.keypoints[::factor])


def test_drop_rate_and_min_frames() -> None:
    s = plain(2000)
    s = replace(s, keypoints=np.arange(2000, dtype=np.float32)[:, None, None] + s.keypoints)  # frame ids
    for rate in (0.1, 0.5, 0.9):
        out = drop_frames(s, rate, seed=2).keypoints
        assert len(out) / 2000 == pytest.approx(1 - rate, abs=0.04)
        t = out[:, 0, 1]
        assert (np.diff(t) > 0).all() and np.isin(t, np.arange(2000)).all()  # a subsequence, in order
    short = plain(10)
    for seed in range(20):
        assert len(drop_frames(short, 0.99, seed=seed, min_frames=4).keypoints) == 4
    assert len(drop_frames(short, 0.99, min_frames=10).keypoints) == 10
    # the restored frames are a superset of the survivors: raising min_frames only adds frames
    few = drop_frames(s, 0.999, seed=5, min_frames=5).keypoints[:, 0, 1]
    more = drop_frames(s, 0.999, seed=5, min_frames=50).keypoints[:, 0, 1]
    assert len(few) == 5 and len(more) == 50 and np.isin(few, more).all()


@pytest.mark.parametrize("kind", DEGRADATIONS)
def test_seeded_repeat_and_order_independence(samples: list[Sample], kind: str) -> None:
    a = degrade(samples, kind, STRENGTH[kind], seed=7)
    b = degrade(samples, kind, STRENGTH[kind], seed=7)
    rev = degrade(samples[::-1], kind, STRENGTH[kind], seed=7)[::-1]
    alone = [degrade([s], kind, STRENGTH[kind], seed=7)[0] for s in samples]
    for x, y, z, w in zip(a, b, rev, alone, strict=True):
        np.testing.assert_array_equal(x.keypoints, y.keypoints)
        np.testing.assert_array_equal(x.keypoints, z.keypoints)
        np.testing.assert_array_equal(x.keypoints, w.keypoints)
    if kind != "downsample":  # another seed, another degradation
        other = degrade(samples, kind, STRENGTH[kind], seed=8)
        assert any(x.keypoints.shape != y.keypoints.shape or (x.keypoints != y.keypoints).any()
                   for x, y in zip(a, other, strict=True))  # fmt: skip
        # the same video under another id is degraded differently (the stream is the sample's)
        twins = degrade([plain(200, sample_id="x"), plain(200, sample_id="y")], kind, STRENGTH[kind], seed=7)
        assert (
            twins[0].keypoints.shape != twins[1].keypoints.shape
            or (twins[0].keypoints != twins[1].keypoints).any()
        )


@pytest.mark.parametrize("kind", DEGRADATIONS)
def test_identity_strength(samples: list[Sample], kind: str) -> None:
    out = degrade(samples, kind, IDENTITY[kind])
    assert all(a is b for a, b in zip(samples, out, strict=True))
    assert degrade(samples, "downsample", 1.0) == samples


def test_errors() -> None:
    s = plain(10, sample_id="clip-7")
    with pytest.raises(UserError, match=r"kind must be one of .*did you mean 'noise'"):
        degrade([s], "nosie", 0.1)
    with pytest.raises(UserError, match=r"strength \(the sigma of 'noise'\) .* got -0.1"):
        degrade([s], "noise", -0.1)
    with pytest.raises(UserError, match=r"sigma must be .* got -1"):
        gaussian_noise(s, -1)
    with pytest.raises(
        UserError, match=r"strength \(the factor of 'downsample'\) must be an int >= 1, got 2.5"
    ):
        degrade([s], "downsample", 2.5)
    with pytest.raises(UserError, match=r"strength \(the factor of 'downsample'\) .* got 0"):
        degrade([s], "downsample", 0)
    with pytest.raises(UserError, match="factor must be an int >= 1, got 0"):
        temporal_downsample(s, 0)
    with pytest.raises(UserError, match=r"factor must be an int >= 1, got 2\.0"):
        temporal_downsample(s, 2.0)  # type: ignore[arg-type]
    with pytest.raises(UserError, match=r"sample clip-7: downsampling its 10 frames by factor 4 leaves 3"):
        degrade([s], "downsample", 4, min_frames=4)
    for rate in (1.0, -0.1, 1.5):
        with pytest.raises(UserError, match=r"strength \(the rate of 'drop'\) must be .*\[0.0, 1.0\)"):
            degrade([s], "drop", rate)
        with pytest.raises(UserError, match="rate must be"):
            drop_frames(s, rate)
    with pytest.raises(UserError, match="sample clip-7: video has 10 frames, fewer than min_frames=12"):
        degrade([s], "drop", 0.5, min_frames=12)
    with pytest.raises(UserError, match="min_frames must be an int >= 1"):
        degrade([s], "drop", 0.5, min_frames=0)
    with pytest.raises(UserError, match="seed must be"):
        degrade([s], "noise", 0.1, seed=-1)
    with pytest.raises(UserError, match=r"sample flat: shoulder width is 0\.0"):
        gaussian_noise(plain(10, width=0.0, sample_id="flat"), 0.1)
    with pytest.raises(UserError, match=r"sample bad: keypoints must be a \(T, K, 2\) array"):
        gaussian_noise(replace(s, id="bad", keypoints=np.zeros((10, 50))), 0.1)
