"""The encoder, the V³ model (encoder → per-voxel amplitudes/phases → Fourier field) and the
implicit-neural-representation baseline (the same encoder → local coordinate MLP, VideoINR/LIIF
style), plus frame rendering in memory-bounded chunks.

Both models predict a residual on top of the classical interpolant of the input (bicubic in space,
linear in time, evaluated at the query), so both start from the baseline and learn what it misses.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_int, check_interval
from iclr26.vff.field import FourierField, frame_queries, nearest_voxel, neighbours, output_scale
from iclr26.vff.rvrt import RVRTConfig, RVRTEncoder


@dataclass(frozen=True)
class EncoderConfig:
    """Width and depth of the spatio-temporal encoder."""

    channels: int = 32
    """feature channels per voxel"""
    blocks: int = 4
    """residual blocks of two 3×3×3 convolutions: receptive field 4·blocks + 3 voxels"""
    temporal_kernel: int = 3
    """temporal size of every convolution (odd)"""

    def __post_init__(self) -> None:
        check_int("channels", self.channels, 1)
        check_int("blocks", self.blocks, 0)
        check_int("temporal_kernel", self.temporal_kernel, 1)
        if self.temporal_kernel % 2 == 0:  # same-size padding kt // 2 needs an odd kernel
            raise ConfigError(f"temporal_kernel must be odd, got {self.temporal_kernel}")


class _Block(nn.Module):
    def __init__(self, c: int, kt: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv3d(c, c, (kt, 3, 3), padding=(kt // 2, 1, 1))
        self.conv2 = nn.Conv3d(c, c, (kt, 3, 3), padding=(kt // 2, 1, 1))

    def forward(self, x: Tensor) -> Tensor:
        return x + self.conv2(F.gelu(self.conv1(x)))


class Encoder3D(nn.Module):
    """LR clip (B, T, 3, h, w) -> voxel features (B, C, T, h, w) with 3D convolutions."""

    def __init__(self, cfg: EncoderConfig = EncoderConfig()) -> None:
        super().__init__()
        self.cfg = cfg
        self.stem = nn.Conv3d(
            3, cfg.channels, (cfg.temporal_kernel, 3, 3), padding=(cfg.temporal_kernel // 2, 1, 1)
        )
        self.body = nn.Sequential(*[_Block(cfg.channels, cfg.temporal_kernel) for _ in range(cfg.blocks)])

    def forward(self, lr: Tensor) -> Tensor:
        x = lr.permute(0, 2, 1, 3, 4) * 2 - 1  # (B, 3, T, h, w), centred
        return self.body(self.stem(x))


def build_encoder(cfg: EncoderConfig | RVRTConfig) -> nn.Module:
    """The encoder a config describes: `Encoder3D` (3D convolutions) or the RVRT-style transformer."""
    if isinstance(cfg, RVRTConfig):
        return RVRTEncoder(cfg)
    if isinstance(cfg, EncoderConfig):
        return Encoder3D(cfg)
    raise TypeError(f"encoder must be an EncoderConfig or RVRTConfig, got {type(cfg).__name__}")


def check_clip(lr: Tensor, min_frames: int = 2) -> None:
    """Raise if `lr` is not a batch of RGB clips (B, T, 3, h, w) with at least `min_frames` frames."""
    if not isinstance(lr, Tensor) or lr.dim() != 5 or lr.shape[2] != 3:
        got = tuple(lr.shape) if isinstance(lr, Tensor) else type(lr).__name__
        raise ValueError(f"lr must be a batch of RGB clips (B, T, 3, h, w), got {got}")
    if lr.shape[1] < min_frames:
        raise ValueError(f"the clip has {lr.shape[1]} frames; the model needs at least {min_frames}")


def interpolate_input(lr: Tensor, p: Tensor) -> Tensor:
    """The classical interpolant at queries: bicubic in space, linear in time. lr (B,T,3,h,w), p (B,M,3)."""
    b, t_len, _, h, w = lr.shape
    t = p[..., 0].clamp(0, t_len - 1)
    t0 = t.floor().long().clamp(max=max(t_len - 2, 0))
    frac = (t - t0).unsqueeze(-1)
    grid = torch.stack([2 * p[..., 2] / w - 1, 2 * p[..., 1] / h - 1], -1)  # x, y in grid_sample's [-1, 1]
    out = []
    for k in range(b):
        frames = lr[k]  # (T, 3, h, w)
        g = grid[k][None, None].expand(t_len, 1, -1, 2)  # sample every frame at every query
        vals = F.grid_sample(frames, g, mode="bicubic", padding_mode="border", align_corners=False)[:, :, 0]
        vals = vals.permute(2, 0, 1)  # (M, T, 3)
        i0 = t0[k]
        i1 = (i0 + 1).clamp(max=t_len - 1)
        m = torch.arange(len(i0), device=lr.device)
        out.append((1 - frac[k]) * vals[m, i0] + frac[k] * vals[m, i1])
    return torch.stack(out)


class VideoFourierField(nn.Module):
    """V³: encoder → per-voxel phases (N) and amplitudes (N × 3) → Fourier field at any (x, y, t, s)."""

    min_frames = 2

    def __init__(
        self,
        encoder: EncoderConfig | RVRTConfig = EncoderConfig(),
        frequencies: int = 64,
        radius: float = 4 * math.pi,
        t_scale: float = 1.0,
        learn_frequencies: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__()
        check_int("frequencies", frequencies, 1)
        check_interval("radius", radius, 0, closed=(False, True))
        self.encoder = build_encoder(encoder)
        self.head = nn.Conv3d(encoder.channels, 4 * frequencies, 1)  # N phases + 3N amplitudes per voxel
        with torch.no_grad():  # amplitudes start at 0: the model starts as the classical interpolant
            self.head.weight[frequencies:].zero_()
            self.head.bias[frequencies:].zero_()
        self.field = FourierField(frequencies, radius, t_scale, learn_frequencies, seed)

    def encode(self, lr: Tensor) -> Tensor:
        """Per-voxel coefficients (B, T·h·w, 4N): phases then amplitudes."""
        check_clip(lr, self.min_frames)
        return self.head(self.encoder(lr)).flatten(2).transpose(1, 2)

    def query(self, lr: Tensor, code: Tensor, p: Tensor, scale: Tensor) -> Tensor:
        """RGB (B, M, 3) at queries p (B, M, 3) for output scales `scale` (B,)."""
        grid = (lr.shape[1], lr.shape[3], lr.shape[4])
        n = self.field.frequencies
        res = []
        for k in range(len(p)):
            flat, delta = nearest_voxel(p[k], grid)
            coeff = code[k][flat]  # (M, 4N)
            res.append(self.field(coeff[:, :n], coeff[:, n:].view(-1, n, 3), delta, scale[k]))
        return interpolate_input(lr, p) + torch.stack(res)

    def forward(self, lr: Tensor, p: Tensor, scale: Tensor) -> Tensor:
        return self.query(lr, self.encode(lr), p, scale)


class ImplicitVideoBaseline(nn.Module):
    """VideoINR/LIIF-style baseline: the same encoder, then an MLP on (voxel feature, p − c_v, 1/s)
    for each of the 8 voxels around the query, blended with trilinear weights."""

    min_frames = 2

    def __init__(
        self, encoder: EncoderConfig | RVRTConfig = EncoderConfig(), hidden: int = 128, layers: int = 3
    ) -> None:
        super().__init__()
        check_int("hidden", hidden, 1)
        check_int("layers", layers, 1)
        self.encoder = build_encoder(encoder)
        dims = [encoder.channels + 4] + [hidden] * (layers - 1)
        mlp: list[nn.Module] = []
        for a, b in itertools.pairwise(dims):
            mlp += [nn.Linear(a, b), nn.GELU()]
        self.mlp = nn.Sequential(*mlp, nn.Linear(dims[-1], 3))
        with torch.no_grad():  # the residual starts at 0: the model starts as the classical interpolant
            self.mlp[-1].weight.zero_()
            self.mlp[-1].bias.zero_()

    def encode(self, lr: Tensor) -> Tensor:
        """Voxel features (B, T·h·w, C)."""
        check_clip(lr, self.min_frames)
        return self.encoder(lr).flatten(2).transpose(1, 2)

    def query(self, lr: Tensor, code: Tensor, p: Tensor, scale: Tensor) -> Tensor:
        grid = (lr.shape[1], lr.shape[3], lr.shape[4])
        res = []
        for k in range(len(p)):
            flat, centres, w = neighbours(p[k], grid)
            feat = code[k][flat]  # (M, 8, C)
            rel = p[k][:, None, :] - centres
            inv_s = (1 / scale[k]).expand(*rel.shape[:2], 1)
            out = self.mlp(torch.cat([feat, rel, inv_s], -1))  # (M, 8, 3)
            res.append((w[..., None] * out).sum(1))
        return interpolate_input(lr, p) + torch.stack(res)

    def forward(self, lr: Tensor, p: Tensor, scale: Tensor) -> Tensor:
        return self.query(lr, self.encode(lr), p, scale)


@torch.no_grad()
def render(
    model: nn.Module, lr: Tensor, times: list[float], out_size: tuple[int, int], chunk: int = 16384
) -> Tensor:
    """Frames (K, 3, H, W) on the CPU at input-frame times `times` (frame k at t = k), `chunk` pixels
    at a time, computed on the model's device."""
    check_clip(lr[None] if lr.dim() == 4 else lr, getattr(model, "min_frames", 1))
    lr = (lr[None] if lr.dim() == 4 else lr).to(next(model.parameters()).device)
    t_len, (h, w) = lr.shape[1], lr.shape[-2:]
    if len(out_size) != 2 or min(out_size) <= 0:
        raise ConfigError(f"out_size must be positive, got {out_size}")
    check_int("chunk", chunk, 1)
    for t in times:
        if not 0 <= t <= t_len - 1:
            raise ValueError(f"time {t} is outside the clip (0 .. {t_len - 1} input frames)")
    model.eval()
    code = model.encode(lr)
    scale = torch.tensor([output_scale(out_size, (h, w))], device=lr.device)
    frames = []
    for t in times:
        p = frame_queries(t, out_size, (h, w), device=lr.device)
        rgb = torch.cat([model.query(lr, code, c[None], scale)[0] for c in p.split(chunk)])
        frames.append(rgb.view(*out_size, 3).permute(2, 0, 1).clamp(0, 1))
    return torch.stack(frames).cpu()
