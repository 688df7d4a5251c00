"""The structural similarity map (Wang et al. 2004) with Gaussian-weighted statistics, shared by the
systems that score images (vff's luma SSIM, vincie's judge).

Images are float tensors (N, H, W) with data range 1. `pad=False` keeps the "valid" region only
(every window inside the image: scikit-image's convention with `gaussian_weights=True`, which crops
the border that would see padding); `pad=True` reflects the border so the map keeps (N, H, W).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

SSIM_K1 = 0.01
SSIM_K2 = 0.03


def gaussian_window(sigma: float, radius: int) -> Tensor:
    """Normalised 1-D Gaussian taps exp(−x²/(2σ²)), x = −radius..radius, in float64."""
    x = torch.arange(-radius, radius + 1, dtype=torch.float64)
    g = torch.exp(-0.5 * (x / sigma) ** 2)
    return g / g.sum()


def ssim_map(x: Tensor, y: Tensor, *, sigma: float = 1.5, radius: int = 5, pad: bool = False) -> Tensor:
    """Per-pixel SSIM of x and y, (N, H, W) each: (N, H − 2·radius, W − 2·radius), or (N, H, W)
    with `pad`."""
    size = 2 * radius + 1
    g = gaussian_window(sigma, radius).to(x)
    gy, gx = g.view(1, 1, size, 1), g.view(1, 1, 1, size)

    def blur(z: Tensor) -> Tensor:
        z = z.unsqueeze(1)
        if pad:
            z = F.pad(z, (radius, radius, radius, radius), mode="reflect")
        return F.conv2d(F.conv2d(z, gy), gx).squeeze(1)  # separable Gaussian

    mu_x, mu_y = blur(x), blur(y)
    # population (co)variances: σx² = E[x²] − μx², σxy = E[xy] − μx μy (Gaussian-weighted expectations)
    var_x = blur(x * x) - mu_x * mu_x
    var_y = blur(y * y) - mu_y * mu_y
    cov_xy = blur(x * y) - mu_x * mu_y
    c1, c2 = SSIM_K1**2, SSIM_K2**2  # C_i = (K_i R)² with R = 1
    # SSIM = (2 μx μy + C1)(2 σxy + C2) / ((μx² + μy² + C1)(σx² + σy² + C2))
    return ((2 * mu_x * mu_y + c1) * (2 * cov_xy + c2)) / ((mu_x**2 + mu_y**2 + c1) * (var_x + var_y + c2))
