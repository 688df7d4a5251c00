"""The paper's encoder family: an RVRT-style recurrent video transformer (Liang et al. 2022, "Recurrent
Video Restoration Transformer with Guided Deformable Attention", arXiv 2206.02146), in PyTorch.

V³ predicts its Fourier coefficients with a JAX port of RVRT (window attention, guided deformable
attention steered by optical flow). This module builds the same three stages on the LR voxel grid:

1. shallow features: a per-frame 3×3 convolution and `shallow_blocks` 3D (shifted-)window attention
   blocks (RVRT §3.1, Video-Swin style with a relative position bias);
2. recurrent feature refinement (RVRT §3.2): the clip is cut into clips of `clip_len` frames and
   processed clip by clip in `passes` alternating backward / forward passes. Each clip attends to
   the refined features of the previously processed clip through guided deformable attention
   (RVRT Eq. 3–6: sampling points = flow-warped position + learned offsets, attention over them),
   then `blocks` window-attention blocks refine the clip. Pass p reads all earlier passes' outputs
   (dense connections, as RVRT);
3. a fusion of all passes back to `channels` features per voxel, (B, C, T, h, w) like `Encoder3D`.

Differences from RVRT (and V³'s port): optical flow is OpenCV's Farneback on the LR frames (no
pretrained SpyNet/RAFT can be downloaded here; `flow="none"` lets the offsets learn motion from
zero), and flows between clips are computed frame pair by frame pair instead of chained. Keys and
values are projected before sampling (a point outside the frame reads k = v = 0, without the
projection's bias). A clip whose length is not a multiple of `clip_len` is padded by repeating its
last frame, and the padding also passes through the shallow attention.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval

FLOWS = ("farneback", "none")


@dataclass(frozen=True)
class RVRTConfig:
    """Sizes of the RVRT-style encoder (RVRT's video SR model: 192 channels, 6 heads, window 2×8×8,
    clips of 2 frames, 4 passes of 2×2 blocks, 9 points per head)."""

    channels: int = 32
    """feature channels per voxel"""
    heads: int = 4
    """attention heads (channels must be a multiple)"""
    window: tuple[int, int, int] = (2, 8, 8)
    """(t, h, w) attention window"""
    shallow_blocks: int = 1
    """window-attention blocks of the shallow feature stage"""
    clip_len: int = 2
    """frames per clip in the recurrent refinement"""
    passes: int = 2
    """recurrent passes, alternating backward / forward"""
    blocks: int = 2
    """window-attention blocks refining each clip in each pass"""
    points: int = 9
    """deformable sampling points per head and per frame of the previous clip"""
    mlp_ratio: float = 2.0
    """hidden width of each block's MLP, as a multiple of channels"""
    max_offset: float = 10.0
    """offsets are max_offset·tanh(·) LR pixels around the flow target"""
    flow: str = "farneback"
    """optical flow guiding the deformable attention: farneback (OpenCV), or none (offsets learned)"""

    def __post_init__(self) -> None:
        object.__setattr__(self, "window", tuple(int(w) for w in self.window))
        if self.channels < 1 or self.heads < 1 or self.channels % self.heads:
            raise ConfigError(
                f"channels ({self.channels}) must be a positive multiple of heads ({self.heads})"
            )
        if len(self.window) != 3 or min(self.window) < 1:
            raise ConfigError(f"window must be three positive sizes (t, h, w), got {self.window}")
        for name in ("clip_len", "passes", "points"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        check_int("shallow_blocks", self.shallow_blocks, 0)
        check_int("blocks", self.blocks, 0)
        check_interval("mlp_ratio", self.mlp_ratio, 0, closed=(False, True))
        check_interval("max_offset", self.max_offset, 0)
        check_in("flow", self.flow, FLOWS)


# ------------------------------------------------------------------------------ window attention


def _pad_to_windows(x: Tensor, window: tuple[int, int, int]) -> Tensor:
    """Zero-pad (B, T, H, W, C) at the end of T, H, W to multiples of the window."""
    t, h, w = x.shape[1:4]
    pt, ph, pw = ((-n) % k for n, k in zip((t, h, w), window, strict=True))
    return F.pad(x, (0, 0, 0, pw, 0, ph, 0, pt)) if pt or ph or pw else x


def window_partition(x: Tensor, window: tuple[int, int, int]) -> Tensor:
    """(B, T, H, W, C) with T, H, W multiples of the window -> (B·nW, wt·wh·ww, C) token groups."""
    b, t, h, w, c = x.shape
    wt, wh, ww = window
    x = x.view(b, t // wt, wt, h // wh, wh, w // ww, ww, c)
    return x.permute(0, 1, 3, 5, 2, 4, 6, 7).reshape(-1, wt * wh * ww, c)


def window_reverse(windows: Tensor, window: tuple[int, int, int], shape: tuple[int, int, int, int]) -> Tensor:
    """Inverse of `window_partition`: (B·nW, wt·wh·ww, C) -> (B, T, H, W, C) for shape (B, T, H, W)."""
    b, t, h, w = shape
    wt, wh, ww = window
    x = windows.view(b, t // wt, h // wh, w // ww, wt, wh, ww, -1)
    return x.permute(0, 1, 4, 2, 5, 3, 6, 7).reshape(b, t, h, w, -1)


def _relative_index(window: tuple[int, int, int], table: tuple[int, int, int]) -> Tensor:
    """Index of every token pair's relative offset (Δt, Δh, Δw) in `window` into the bias table of a
    (possibly larger) `table` window, (n, n)."""
    coords = torch.stack(torch.meshgrid(*[torch.arange(k) for k in window], indexing="ij")).flatten(1)
    rel = coords[:, :, None] - coords[:, None, :] + (torch.tensor(table) - 1)[:, None, None]  # (3, n, n)
    return (rel[0] * (2 * table[1] - 1) + rel[1]) * (2 * table[2] - 1) + rel[2]


def _shift_mask(
    padded: tuple[int, int, int], window: tuple[int, int, int], shift: tuple[int, int, int]
) -> Tensor:
    """(nW, n, n) additive mask: tokens that came from different regions after the cyclic shift
    must not attend to each other (Swin's shifted-window mask)."""
    region = torch.zeros(padded)
    cuts = [
        ((0, -k), (-k, -s), (-s, None)) if s else ((0, None),) for k, s in zip(window, shift, strict=True)
    ]
    for i, (ct, ch, cw) in enumerate(itertools.product(*cuts)):
        region[slice(*ct), slice(*ch), slice(*cw)] = i
    ids = window_partition(region[None, ..., None], window)[..., 0]  # (nW, n)
    return (ids[:, :, None] != ids[:, None, :]).float() * -100.0


class WindowAttentionBlock(nn.Module):
    """Pre-norm transformer block with multi-head self-attention inside 3D windows (optionally
    shifted by half a window) and a relative position bias, then an MLP (Video Swin / RVRT)."""

    def __init__(
        self, c: int, heads: int, window: tuple[int, int, int], shift: bool, mlp_ratio: float
    ) -> None:
        super().__init__()
        self.heads, self.window, self.shift = heads, window, shift
        self.norm1, self.norm2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        wt, wh, ww = window
        self.bias = nn.Parameter(torch.zeros((2 * wt - 1) * (2 * wh - 1) * (2 * ww - 1), heads))
        nn.init.trunc_normal_(self.bias, std=0.02)
        self.register_buffer("rel_index", _relative_index(window, window), persistent=False)
        self._masks: dict[tuple, Tensor] = {}
        hidden = int(c * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(c, hidden), nn.GELU(), nn.Linear(hidden, c))

    def _attention(self, x: Tensor) -> Tensor:
        b, t, h, w, c = x.shape
        window = tuple(min(k, n) for k, n in zip(self.window, (t, h, w), strict=True))
        shift = tuple(k // 2 if self.shift and n > k else 0 for k, n in zip(window, (t, h, w), strict=True))
        x = _pad_to_windows(x, window)
        padded = x.shape[1:4]
        if any(shift):
            x = torch.roll(x, shifts=tuple(-s for s in shift), dims=(1, 2, 3))
        win = window_partition(x, window)  # (B·nW, n, C)
        n, d = win.shape[1], c // self.heads
        qkv = self.qkv(win).view(-1, n, 3, self.heads, d).permute(2, 0, 3, 1, 4)  # 3 × (B·nW, heads, n, d)
        index = self.rel_index if window == self.window else _relative_index(window, self.window).to(x.device)
        mask = self.bias[index.reshape(-1)].view(n, n, -1).permute(2, 0, 1)[None]  # (1, heads, n, n): B
        q, k, v = (u.view(b, -1, self.heads, n, d) for u in qkv)  # (B, nW, heads, n, d)
        if any(shift):  # (1, nW, heads, n, n): the bias plus the shifted-window mask of each window
            mask = mask + self._cached_shift_mask(padded, window, shift, x.device)[:, None]
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask.to(q.dtype))
        out = self.proj(out.transpose(2, 3).reshape(-1, n, c))  # softmax(QKᵀ/√d + B)·V, heads merged
        out = window_reverse(out, window, (b, *padded))
        if any(shift):
            out = torch.roll(out, shifts=shift, dims=(1, 2, 3))
        return out[:, :t, :h, :w]

    def _cached_shift_mask(
        self, padded: tuple[int, int, int], window: tuple[int, int, int], shift: tuple[int, int, int], device
    ) -> Tensor:
        key = (tuple(padded), window, shift, str(device))
        if key not in self._masks:  # built once per clip geometry and device, not on every call
            self._masks[key] = _shift_mask(padded, window, shift).to(device)
        return self._masks[key]

    def forward(self, x: Tensor) -> Tensor:
        """x (B, T, H, W, C) -> same shape."""
        x = x + self._attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def _blocks(c: int, cfg: RVRTConfig, n: int) -> nn.Sequential:
    return nn.Sequential(
        *[
            WindowAttentionBlock(c, cfg.heads, cfg.window, shift=i % 2 == 1, mlp_ratio=cfg.mlp_ratio)
            for i in range(n)
        ]
    )


# ------------------------------------------------------------------------------- optical flow


def _grey(frame: np.ndarray) -> np.ndarray:
    """(3, h, w) RGB in [0, 1] -> (h, w) uint8 grey, as Farneback takes it."""
    rgb = np.ascontiguousarray((frame.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8))
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)


def farneback_flow(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Dense flow f (h, w, 2) in pixels (x, y), source(p) ≈ target(p + f(p)); frames (3, h, w) in [0, 1]
    or already grey (h, w) uint8."""
    src, tgt = (f if f.ndim == 2 else _grey(f) for f in (source, target))
    return cv2.calcOpticalFlowFarneback(src, tgt, None, 0.5, 3, 9, 3, 5, 1.1, 0)


def pair_flows(lr: Tensor, pairs: list[tuple[int, int]], method: str) -> dict[tuple[int, int], Tensor]:
    """Flow (B, 2, h, w) from frame s to frame r for every pair (s, r) of the clip lr (B, T, 3, h, w);
    computed on the CPU (OpenCV) and returned on lr's device."""
    b, _, _, h, w = lr.shape
    if method == "none":
        zero = lr.new_zeros(b, 2, h, w)
        return dict.fromkeys(pairs, zero)
    frames = lr.detach().float().cpu().numpy()
    used = sorted({i for pair in pairs for i in pair})
    grey = {(k, i): _grey(frames[k, i]) for k in range(b) for i in used}  # once per frame, not per pair
    out = {}
    for s, r in pairs:
        flow = np.stack([farneback_flow(grey[(k, s)], grey[(k, r)]) for k in range(b)])  # (B, h, w, 2)
        out[(s, r)] = torch.from_numpy(flow).permute(0, 3, 1, 2).to(lr.device, lr.dtype)
    return out


def flow_warp(x: Tensor, flow: Tensor) -> Tensor:
    """Backward warp: out(p) = x(p + flow(p)), bilinear; x (N, C, h, w), flow (N, 2, h, w) in pixels."""
    grid = point_grid(flow[:, None])
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=True)


def point_grid(offset: Tensor) -> Tensor:
    """grid_sample grid (N, M·h, w, 2) that samples positions p + offset_m(p) for M points per pixel;
    offset (N, M, 2, h, w) in pixels (x, y). The sampled output (N, C, M·h, w) views as (N, C, M, h, w)."""
    n, m, _, h, w = offset.shape
    dtype, offset = offset.dtype, offset.float()  # positions in float32: bf16 would round to ~0.2 px
    ys = torch.arange(h, device=offset.device, dtype=offset.dtype).view(h, 1)
    xs = torch.arange(w, device=offset.device, dtype=offset.dtype).view(1, w)
    x = (xs + offset[:, :, 0]) * (2 / max(w - 1, 1)) - 1  # align_corners=True: pixel 0 -> -1, w-1 -> 1
    y = (ys + offset[:, :, 1]) * (2 / max(h - 1, 1)) - 1
    return torch.stack([x, y], -1).view(n, m * h, w, 2).to(dtype)


# ------------------------------------------------------------------ guided deformable attention


class GuidedDeformableAttention(nn.Module):
    """RVRT's guided deformable attention (Eq. 3–6): each pixel of a frame of the current clip
    attends to `points` locations in each frame of the previous clip, per head. The locations are
    the optical-flow target plus offsets predicted from [query, flow-warped features, flows];
    keys/values are bilinear samples there, weights are softmax(q·k/√d) over all sampled points."""

    def __init__(
        self, c: int, heads: int, frames: int, points: int, max_offset: float, mlp_ratio: float
    ) -> None:
        super().__init__()
        self.heads, self.frames, self.points, self.max_offset = heads, frames, points, max_offset
        n_off = heads * frames * points * 2
        self.offset_net = nn.Sequential(
            nn.Conv2d(c * (1 + frames) + 2 * frames, c, 3, padding=1),
            nn.LeakyReLU(0.1),
            nn.Conv2d(c, c, 3, padding=1),
            nn.LeakyReLU(0.1),
            nn.Conv2d(c, n_off, 3, padding=1),
        )
        with torch.no_grad():  # offsets start as a fixed small grid around the flow target
            last = self.offset_net[-1]
            last.weight.zero_()
            side = math.ceil(math.sqrt(points))
            grid = [(i % side - (side - 1) / 2, i // side - (side - 1) / 2) for i in range(points)]
            if max_offset > 0:
                init = torch.tensor(grid).repeat(heads * frames, 1).flatten() / max_offset
                last.bias.copy_(torch.atanh(init.clamp(-0.99, 0.99)))
            else:  # offsets fixed at 0: every point samples the flow target
                last.bias.zero_()
        self.q, self.kv, self.proj = nn.Linear(c, c), nn.Linear(c, 2 * c), nn.Linear(c, c)
        self.norm = nn.LayerNorm(c)
        hidden = int(c * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(c, hidden), nn.GELU(), nn.Linear(hidden, c))

    def forward(self, query: Tensor, values: Tensor, flows: Tensor) -> Tensor:
        """query (B, C, h, w) of one frame; values (B, L, C, h, w), the previous clip's features;
        flows (B, L, 2, h, w) from the query frame to each of them. Returns aligned (B, C, h, w)."""
        b, n_frames, c, h, w = values.shape
        if n_frames != self.frames:
            raise ValueError(f"expected {self.frames} frames of the previous clip, got {n_frames}")
        heads, m, d = self.heads, self.points, c // self.heads
        warped = flow_warp(values.flatten(0, 1), flows.flatten(0, 1)).view(b, n_frames * c, h, w)
        raw = self.offset_net(torch.cat([query, warped, flows.flatten(1, 2)], 1))
        offsets = self.max_offset * torch.tanh(raw).view(b, heads, n_frames, m, 2, h, w)
        # sampling positions p + flow_l(p) + Δ_{h,l,m}(p), one grid per (batch, frame, head)
        pos = flows.view(b, 1, n_frames, 1, 2, h, w) + offsets  # (B, heads, L, M, 2, h, w)
        pos = pos.permute(0, 2, 1, 3, 4, 5, 6).reshape(b * n_frames * heads, m, 2, h, w)
        kv = self.kv(values.permute(0, 1, 3, 4, 2))  # (B, L, h, w, 2C)
        kv = kv.view(b, n_frames, h, w, 2, heads, d).permute(0, 1, 5, 4, 6, 2, 3)  # (B, L, heads, 2, d, h, w)
        kv = kv.reshape(b * n_frames * heads, 2 * d, h, w)
        sampled = F.grid_sample(
            kv, point_grid(pos), mode="bilinear", padding_mode="zeros", align_corners=True
        )
        sampled = sampled.view(b, n_frames, heads, 2, d, m, h, w)  # keys and values at the points
        k = sampled[:, :, :, 0].permute(0, 2, 5, 6, 1, 4, 3).reshape(b, heads, h, w, n_frames * m, d)
        v = sampled[:, :, :, 1].permute(0, 2, 5, 6, 1, 4, 3).reshape(b, heads, h, w, n_frames * m, d)
        q = self.q(query.permute(0, 2, 3, 1)).view(b, h, w, heads, d).permute(0, 3, 1, 2, 4)
        attn = torch.softmax((q.unsqueeze(-2) * k).sum(-1) / math.sqrt(d), dim=-1)  # (B, heads, h, w, L·M)
        out = (attn.unsqueeze(-1) * v).sum(-2)  # Σ_j softmax(q·k_j/√d) v_j  (RVRT Eq. 5)
        out = self.proj(out.permute(0, 2, 3, 1, 4).reshape(b, h, w, c))
        out = out + self.mlp(self.norm(out))
        return out.permute(0, 3, 1, 2)


# ------------------------------------------------------------------------------------ encoder


class RVRTEncoder(nn.Module):
    """LR clip (B, T, 3, h, w) -> voxel features (B, C, T, h, w), RVRT-style (see the module doc)."""

    def __init__(self, cfg: RVRTConfig = RVRTConfig()) -> None:
        super().__init__()
        self.cfg = cfg
        c = cfg.channels
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.shallow = _blocks(c, cfg, cfg.shallow_blocks)
        self.pass_in = nn.ModuleList([nn.Linear(c * (p + 1), c) for p in range(cfg.passes)])
        self.align = nn.ModuleList(
            [
                GuidedDeformableAttention(
                    c, cfg.heads, cfg.clip_len, cfg.points, cfg.max_offset, cfg.mlp_ratio
                )
                for _ in range(cfg.passes)
            ]
        )
        self.fuse = nn.ModuleList([nn.Linear(2 * c, c) for _ in range(cfg.passes)])
        self.refine = nn.ModuleList([_blocks(c, cfg, cfg.blocks) for _ in range(cfg.passes)])
        self.out = nn.Sequential(nn.Linear(c * (cfg.passes + 1), c), nn.GELU(), nn.Linear(c, c))

    def forward(self, lr: Tensor) -> Tensor:
        cfg, (b, t, _, h, w) = self.cfg, lr.shape
        n = cfg.clip_len
        pad = (-t) % n  # repeat the last frame so the clip splits into whole clips; cropped at the end
        frames = torch.cat([lr, lr[:, -1:].expand(-1, pad, -1, -1, -1)], 1) if pad else lr
        tp = t + pad
        clips = [list(range(i, i + n)) for i in range(0, tp, n)]
        pairs = [
            (s, r)
            for a, bb in itertools.pairwise(clips)
            for s, r in [*itertools.product(a, bb), *itertools.product(bb, a)]
        ]
        flows = pair_flows(frames, pairs, cfg.flow)
        x = self.stem(frames.flatten(0, 1) * 2 - 1).view(b, tp, -1, h, w).permute(0, 1, 3, 4, 2)
        feats = [self.shallow(x)]  # each (B, T, h, w, C)
        for p in range(cfg.passes):
            inp = self.pass_in[p](torch.cat(feats, -1))
            order = clips[::-1] if p % 2 == 0 else clips  # backward first, as RVRT
            out: dict[int, Tensor] = {}
            prev: list[int] | None = None
            for clip in order:
                cur = inp[:, clip]  # (B, n, h, w, C)
                if prev is None:
                    aligned = torch.zeros_like(cur)
                else:
                    vals = torch.stack([out[i] for i in prev], 1).permute(0, 1, 4, 2, 3)  # (B, n, C, h, w)
                    aligned = torch.stack(
                        [
                            self.align[p](
                                cur[:, j].permute(0, 3, 1, 2),
                                vals,
                                torch.stack([flows[(s, r)] for r in prev], 1),
                            ).permute(0, 2, 3, 1)
                            for j, s in enumerate(clip)
                        ],
                        1,
                    )
                y = self.fuse[p](torch.cat([cur, aligned], -1))
                refined = cur + self.refine[p](y)
                for j, i in enumerate(clip):
                    out[i] = refined[:, j]
                prev = clip
            feats.append(torch.stack([out[i] for i in range(tp)], 1))
        z = feats[0] + self.out(torch.cat(feats, -1))
        return z[:, :t].permute(0, 4, 1, 2, 3)  # (B, C, T, h, w)
