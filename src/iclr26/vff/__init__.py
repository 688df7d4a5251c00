"""V³ Video Fourier Field: continuous space-time video super-resolution (arXiv 2509.26325, ICLR 2026).

Public API: `VideoFourierField` (encoder → per-voxel phases/amplitudes → `FourierField`), the
`ImplicitVideoBaseline`, `render(model, lr, times, out_size)`, `psf_factor`; data in `iclr26.vff.data`,
metrics in `iclr26.vff.metrics`; `SYSTEM` for `iclr26 run vff`.
"""

from dataclasses import replace

from iclr26.catalog import implemented_system
from iclr26.vff.field import FourierField, psf_factor
from iclr26.vff.models import EncoderConfig, ImplicitVideoBaseline, VideoFourierField, render
from iclr26.vff.rvrt import RVRTConfig, RVRTEncoder
from iclr26.vff.system import VFFConfig, run

_BENCH = VFFConfig()
PRESETS = {
    "smoke": replace(
        _BENCH,
        test_photos=("rocket",),
        clips=("bikes",),
        cases_per_photo=1,
        settings=("S2.5", "S4T2"),
        hr_size=32,
        steps=3,
        batch=1,
        lr_size=12,
        queries=128,
        channels=8,
        blocks=1,
        frequencies=8,
        inr_hidden=16,
    ),
    # the tour: V³ vs bicubic and the implicit baseline on one photo and one clip, three settings
    "demo": replace(
        _BENCH,
        test_photos=("rocket",),
        clips=("bikes",),
        cases_per_photo=1,
        settings=("S2", "S4", "S4T2"),
        steps=180,
    ),
    "bench": _BENCH,  # the README figures
    # the paper's encoder family (RVRT-style: 192 channels, 6 heads, 2×8×8 windows, 4 recurrent
    # passes, flow-guided deformable attention; ~12M parameters with the field head), 14 input
    # frames, N = 512 frequencies over the authors' 16π disk, long training; GPU. Activations grow
    # with frames × pixels; batch 2 is meant to fit one large GPU (not yet measured on one).
    "paper": replace(
        _BENCH,
        clips=("bikes", "bigbuckbunny"),  # carphone (176×144) is smaller than hr_size 256
        cases_per_photo=8,
        hr_size=256,
        lr_frames=14,
        steps=100_000,
        batch=2,
        lr_size=64,
        queries=8192,
        lr=2e-4,
        encoder="rvrt",
        channels=192,
        heads=6,
        window=8,
        passes=4,
        blocks=2,
        frequencies=512,
        radius=50.27,
        inr_hidden=256,
        device="cuda",
    ),
}

SYSTEM = implemented_system("vff", presets=PRESETS, run=run)

__all__ = [
    "SYSTEM",
    "EncoderConfig",
    "FourierField",
    "ImplicitVideoBaseline",
    "RVRTConfig",
    "RVRTEncoder",
    "VFFConfig",
    "VideoFourierField",
    "psf_factor",
    "render",
]
