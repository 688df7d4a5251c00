"""V³ Video Fourier Field: continuous space-time video super-resolution (arXiv 2509.26325, ICLR 2026).

Public API: `VideoFourierField` (encoder → per-voxel phases/amplitudes → `FourierField`), the
`ImplicitVideoBaseline`, `render(model, lr, times, out_size)`, `psf_factor`; data in `iclr26.vff.data`,
metrics in `iclr26.vff.metrics`; `SYSTEM` for `iclr26 run vff`.
"""

from iclr26.core.system import system_attributes
from iclr26.vff.config import VFFConfig
from iclr26.vff.field import FourierField, psf_factor
from iclr26.vff.models import EncoderConfig, ImplicitVideoBaseline, VideoFourierField, render
from iclr26.vff.rvrt import RVRTConfig, RVRTEncoder
from iclr26.vff.train import TrainConfig

__all__ = [
    "SYSTEM",
    "EncoderConfig",
    "FourierField",
    "ImplicitVideoBaseline",
    "RVRTConfig",
    "RVRTEncoder",
    "TrainConfig",
    "VFFConfig",
    "VideoFourierField",
    "psf_factor",
    "render",
]

__getattr__ = system_attributes(__name__)  # SYSTEM and PRESETS, loaded from .system on first use
