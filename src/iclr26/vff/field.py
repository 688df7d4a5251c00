"""The 3D Fourier field: a continuous video from per-voxel phases and amplitudes of N shared
space-time sinusoids (V³ §3).

Coordinates are in low-resolution units: x, y in LR pixels (pixel (i, j) has its centre at
(j + ½, i + ½)), t in input frames (frame k at t = k). A voxel is one LR pixel of one input frame.
The N frequencies ω_n = (ω_t, ω_y, ω_x) are shared by all voxels and learned; each voxel v carries
phases φ_{v,n} and amplitudes W_{v,n,c} (one per colour channel). A query p is answered by its
nearest voxel v, in the local coordinate Δ = p − c_v (c_v the voxel centre):

    RGB_c(p) = Σ_n W_{v,n,c} · sin(ω_n · Δ + φ_{v,n}) · exp(−k · ‖ω_{n,xy}‖² / s²)

with s the output scale (output pixels per LR pixel). The Gaussian factor is the Fourier
transform of a Gaussian point-spread function whose width shrinks as 1/s: every sinusoid is
blurred analytically for the pixel size it is sampled at, so high frequencies fade out smoothly at
small scales instead of aliasing. k is learned (initialised as in the authors' code); time is point
sampled (no temporal PSF).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

K_INIT = math.sqrt(math.log(4)) / (2 * math.pi**2)  # ≈ 0.0597, the released code's initial k


def init_frequencies(n: int, radius: float, t_scale: float, generator: torch.Generator) -> Tensor:
    """(n, 3) frequencies (ω_t, ω_y, ω_x): ω_xy uniform over a disk of `radius` rad per LR pixel,
    ω_t = t_scale · r · cos ι with ι uniform."""
    u, theta, iota = torch.rand(3, n, generator=generator)
    r = radius * u.sqrt()
    theta, iota = 2 * math.pi * theta, 2 * math.pi * iota
    return torch.stack([t_scale * r * torch.cos(iota), r * torch.sin(theta), r * torch.cos(theta)], -1)


def psf_factor(omega_xy: Tensor, scale: Tensor | float, k: Tensor | float) -> Tensor:
    """exp(−k·‖ω_xy‖²/s²) for each frequency: the Gaussian point-spread attenuation at output scale s."""
    scale = torch.as_tensor(scale, dtype=omega_xy.dtype, device=omega_xy.device)
    return torch.exp(-k * omega_xy.square().sum(-1) / scale.square())


def nearest_voxel(p: Tensor, grid: tuple[int, int, int]) -> tuple[Tensor, Tensor]:
    """Flat index (M,) of each query's nearest voxel and its local coordinate Δ = p − c_v (M, 3).

    p is (M, 3) as (t, y, x) in LR units; `grid` is (T, h, w). A query exactly halfway between two
    frames belongs to the earlier one.
    """
    t_len, h, w = grid
    k = torch.round(p[:, 0] - 1e-5).long().clamp(0, t_len - 1)
    i = p[:, 1].floor().long().clamp(0, h - 1)
    j = p[:, 2].floor().long().clamp(0, w - 1)
    centre = torch.stack([k.to(p.dtype), i.to(p.dtype) + 0.5, j.to(p.dtype) + 0.5], -1)
    return (k * h + i) * w + j, p - centre


class FourierField(nn.Module):
    """The shared frequencies ω_n and PSF constant k; evaluates the field from per-voxel coefficients."""

    def __init__(self, frequencies: int = 64, radius: float = 4 * math.pi, t_scale: float = 1.0,
                 learn_frequencies: bool = True, seed: int = 0) -> None:  # fmt: skip
        super().__init__()
        omega = init_frequencies(frequencies, radius, t_scale, torch.Generator().manual_seed(seed))
        self.omega = nn.Parameter(omega, requires_grad=learn_frequencies)
        self.k = nn.Parameter(torch.tensor(K_INIT))

    @property
    def frequencies(self) -> int:
        return self.omega.shape[0]

    def forward(self, phase: Tensor, amplitude: Tensor, delta: Tensor, scale: Tensor | float) -> Tensor:
        """RGB (M, 3) from phases (M, N), amplitudes (M, N, 3) and local coordinates Δ (M, 3)."""
        wave = torch.sin(delta @ self.omega.T + phase)  # sin(ω_n·Δ + φ_n), (M, N)
        g = psf_factor(self.omega[:, 1:], scale, self.k.clamp_min(0))  # (N,)
        return torch.einsum("mn,mnc->mc", wave * g, amplitude)


def frame_queries(t: float, out_size: tuple[int, int], lr_size: tuple[int, int], device=None) -> Tensor:
    """(H·W, 3) queries (t, y, x) in LR units at the pixel centres of an H×W output frame."""
    (h_out, w_out), (h, w) = out_size, lr_size
    ys = (torch.arange(h_out, device=device, dtype=torch.float32) + 0.5) * (h / h_out)
    xs = (torch.arange(w_out, device=device, dtype=torch.float32) + 0.5) * (w / w_out)
    yy, xx = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([torch.full_like(yy, t), yy, xx], -1).view(-1, 3)


def output_scale(out_size: tuple[int, int], lr_size: tuple[int, int]) -> float:
    """s: output pixels per LR pixel (the geometric mean over the two axes)."""
    return math.sqrt(out_size[0] / lr_size[0] * out_size[1] / lr_size[1])


def neighbours(p: Tensor, grid: tuple[int, int, int]) -> tuple[Tensor, Tensor, Tensor]:
    """The 8 voxels around each query (for the LIIF-style baseline): flat indices (M, 8), centres
    (M, 8, 3) and trilinear weights (M, 8) that sum to 1; constant beyond the outer centres."""
    sizes = torch.tensor(grid, device=p.device)
    offset = torch.tensor([0.0, 0.5, 0.5], device=p.device, dtype=p.dtype)
    u = p - offset
    lo = u.floor().long().clamp(min=torch.zeros_like(sizes), max=(sizes - 2).clamp(min=0))
    frac = (u - lo.to(p.dtype)).clamp(0.0, 1.0)
    frac = torch.where(sizes > 1, frac, torch.zeros_like(frac))
    corners = torch.tensor([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], device=p.device)
    idx = (lo[:, None, :] + corners[None]).minimum(sizes - 1)
    w = torch.where(corners[None].bool(), frac[:, None, :], 1 - frac[:, None, :]).prod(-1)
    flat = (idx[..., 0] * grid[1] + idx[..., 1]) * grid[2] + idx[..., 2]
    return flat, idx.to(p.dtype) + offset, w
