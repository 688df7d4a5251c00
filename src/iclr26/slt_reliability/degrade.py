"""The video-side stress tests of arXiv 2510.18439: degrade the keypoint videos and watch how the
translators' token reliability and hallucination change.

Three degradations of a `Sample`'s keypoints (T, K, 2), everything else of the sample kept:

* "noise": x' = x + ε, ε ~ N(0, (σ · s)²) i.i.d. per coordinate, with s the sample's shoulder width,
  so σ is unit-free (σ = 0.1: a tenth of a shoulder width);
* "downsample": keep every f-th frame (frames 0, f, 2f, ...), T' = ceil(T / f);
* "drop": drop each frame independently with probability r, but never below `min_frames` frames.

Randomness is per sample, from `derive_seed(seed, kind, sample.id)`, so a sample is degraded the same
way whatever else is in the batch and in whatever order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from iclr26.core.errors import UserError
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.slt_reliability.data import BODY_KEYPOINTS, Sample

__all__ = [
    "DEGRADATIONS",
    "degrade",
    "drop_frames",
    "gaussian_noise",
    "shoulder_width",
    "temporal_downsample",
]

DEGRADATIONS: tuple[str, ...] = ("noise", "downsample", "drop")
"""the kinds `degrade` accepts; their strength is sigma, factor and rate respectively"""

_RIGHT_SHOULDER = BODY_KEYPOINTS.index("right_shoulder")
_LEFT_SHOULDER = BODY_KEYPOINTS.index("left_shoulder")


def _keypoints(sample: Sample) -> np.ndarray:
    """The sample's keypoints as an array (T, K, C); a `UserError` naming the sample otherwise."""
    x = sample.keypoints
    if not isinstance(x, np.ndarray) or x.ndim != 3:
        shape = getattr(x, "shape", type(x).__name__)
        raise UserError(f"sample {sample.id}: keypoints must be a (T, K, 2) array, got shape {shape}")
    return x


def shoulder_width(sample: Sample) -> float:
    """The median over frames of the distance between the right and left shoulder keypoints (body
    keypoints 2 and 3 of `data.BODY_KEYPOINTS`): the length unit of `gaussian_noise`."""
    x = _keypoints(sample)
    if x.shape[1] <= _LEFT_SHOULDER or len(x) == 0:
        raise UserError(
            f"sample {sample.id}: keypoints of shape {x.shape} have no shoulders (need T >= 1 and K >= 4,"
            " body keypoints first)"
        )
    d = x[:, _RIGHT_SHOULDER, :2].astype(np.float64) - x[:, _LEFT_SHOULDER, :2]
    width = float(np.median(np.hypot(d[:, 0], d[:, 1])))
    if not np.isfinite(width) or width <= 0:
        raise UserError(
            f"sample {sample.id}: shoulder width is {width} (the noise scale); the shoulder keypoints must"
            " be finite and apart"
        )
    return width


def gaussian_noise(sample: Sample, sigma: float, seed: int = 0) -> Sample:
    """`sample` with i.i.d. N(0, (sigma · s)²) added to every keypoint coordinate, s = `shoulder_width`
    (so sigma is in shoulder widths, unit-free). Noise from `derive_seed(seed, "noise", sample.id)`;
    sigma = 0 returns `sample` itself. Keypoints float32."""
    sigma = check_interval("sigma", sigma, 0.0)
    check_int("seed", seed, 0)
    if sigma == 0:
        return sample
    x = _keypoints(sample)
    rng = np.random.default_rng(derive_seed(seed, "noise", sample.id))
    eps = rng.normal(0.0, sigma * shoulder_width(sample), x.shape)
    return replace(sample, keypoints=(x + eps).astype(np.float32))


def temporal_downsample(sample: Sample, factor: int, min_frames: int = 1) -> Sample:
    """`sample` with every `factor`-th frame kept (frames 0, factor, 2·factor, ...: ceil(T / factor)
    frames); factor 1 returns `sample` itself. A result shorter than `min_frames` is a `UserError`."""
    check_int("factor", factor, 1)
    check_int("min_frames", min_frames, 1)
    if factor == 1:
        return sample
    x = _keypoints(sample)
    kept = x[::factor]
    if len(kept) < min_frames:
        raise UserError(
            f"sample {sample.id}: downsampling its {len(x)} frames by factor {factor} leaves {len(kept)},"
            f" fewer than min_frames={min_frames}; lower the factor or drop the sample"
        )
    return replace(sample, keypoints=np.ascontiguousarray(kept, dtype=np.float32))


def drop_frames(sample: Sample, rate: float, seed: int = 0, min_frames: int = 4) -> Sample:
    """`sample` with each frame dropped independently with probability `rate` in [0, 1).

    Frame t draws u_t ~ U(0, 1) (from `derive_seed(seed, "drop", sample.id)`) and survives when
    u_t >= rate. When fewer than `min_frames` survive, the `min_frames` frames with the largest u_t are
    kept instead (the survivors plus the dropped frames that came closest to surviving), in temporal
    order. A video of fewer than `min_frames` frames is a `UserError`; rate 0 returns `sample` itself.
    """
    rate = check_interval("rate", rate, 0.0, 1.0, closed=(True, False))
    check_int("seed", seed, 0)
    check_int("min_frames", min_frames, 1)
    if rate == 0:
        return sample
    x = _keypoints(sample)
    if len(x) < min_frames:
        raise UserError(
            f"sample {sample.id}: video has {len(x)} frames, fewer than min_frames={min_frames}; nothing can"
            " be dropped from it (lower min_frames or drop the sample)"
        )
    u = np.random.default_rng(derive_seed(seed, "drop", sample.id)).random(len(x))
    keep = u >= rate
    if keep.sum() < min_frames:
        keep = np.zeros(len(x), dtype=bool)
        keep[np.argsort(-u, kind="stable")[:min_frames]] = True
    return replace(sample, keypoints=np.ascontiguousarray(x[keep], dtype=np.float32))


def degrade(
    samples: Sequence[Sample], kind: str, strength: float, seed: int = 0, min_frames: int = 4
) -> list[Sample]:
    """`samples` degraded by `kind` ("noise", "downsample" or "drop") at `strength` (sigma, factor or
    rate of `gaussian_noise`, `temporal_downsample`, `drop_frames`), in order. Each sample's randomness
    comes from `derive_seed(seed, kind, sample.id)`, independent of the others and of their order.
    Strength 0 (noise, drop) or 1 (downsample) returns the samples unchanged."""
    check_in("kind", kind, DEGRADATIONS)
    check_int("seed", seed, 0)
    check_int("min_frames", min_frames, 1)
    if kind == "noise":
        sigma = check_interval("strength (the sigma of 'noise')", strength, 0.0)
        return [gaussian_noise(s, sigma, seed) for s in samples]
    if kind == "drop":
        rate = check_interval("strength (the rate of 'drop')", strength, 0.0, 1.0, closed=(True, False))
        return [drop_frames(s, rate, seed, min_frames) for s in samples]
    if isinstance(strength, float) and strength.is_integer():
        strength = int(strength)  # 2.0 is factor 2; 2.5 is an error
    factor = check_int("strength (the factor of 'downsample')", strength, 1)
    if factor == 1:
        return list(samples)
    return [temporal_downsample(s, factor, min_frames) for s in samples]
