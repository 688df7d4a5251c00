"""Small vision transformers parameterised by attention type (same blocks, same budget)."""

from __future__ import annotations

from typing import Any, Literal

import torch
from einops import rearrange
from torch import nn

from iclr26.core.validation import check_in, check_int
from iclr26.laplacianformer.attention import LaplacianAttention
from iclr26.laplacianformer.baselines import (
    GaussianSoftAttention,
    NystromAttention,
    PerformerAttention,
    SoftmaxAttention,
)

AttentionKind = Literal["laplacian", "softmax", "nystrom", "performer", "soft"]
ATTENTION_KINDS: tuple[str, ...] = ("laplacian", "softmax", "nystrom", "performer", "soft")


def make_attention(kind: str, dim: int, heads: int, landmarks: int = 16, **kw: Any) -> nn.Module:
    """An attention module of `kind` with the shared (dim, heads, landmarks) settings."""
    check_in("attention", kind, ATTENTION_KINDS)
    if kind == "laplacian":
        return LaplacianAttention(dim, heads, landmarks=landmarks, **kw)
    if kind == "softmax":
        return SoftmaxAttention(dim, heads)
    if kind == "nystrom":
        return NystromAttention(dim, heads, landmarks=landmarks)
    if kind == "performer":
        return PerformerAttention(dim, heads, features=4 * landmarks)
    return GaussianSoftAttention(dim, heads, landmarks=landmarks)  # soft


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(LN x), then x + MLP(LN x)."""

    def __init__(self, dim: int, attn: nn.Module, mlp_ratio: float = 2.0, dropout: float = 0.0):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = attn
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(
            nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim)
        )

    def forward(self, x: torch.Tensor, hw: tuple[int, int] | None = None) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), hw=hw)
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    """Patch embedding → `depth` blocks → mean pool → linear classifier."""

    def __init__(
        self,
        image_size: int,
        patch: int,
        channels: int,
        classes: int,
        dim: int = 64,
        depth: int = 2,
        heads: int = 4,
        attention: str = "laplacian",
        landmarks: int = 16,
        mlp_ratio: float = 2.0,
        dropout: float = 0.0,
        **attn_kw: Any,
    ) -> None:
        super().__init__()
        check_int("patch", patch, 1)
        check_int("depth", depth, 1)
        if image_size % patch:
            raise ValueError(f"image_size ({image_size}) must be divisible by patch ({patch})")
        self.grid = (image_size // patch, image_size // patch)
        tokens = self.grid[0] * self.grid[1]
        if attention != "softmax" and landmarks > tokens:
            raise ValueError(f"landmarks ({landmarks}) > tokens ({tokens}) for {image_size}/{patch}")
        self.embed = nn.Conv2d(channels, dim, patch, stride=patch)
        self.pos = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.blocks = nn.ModuleList(
            Block(dim, make_attention(attention, dim, heads, landmarks, **attn_kw), mlp_ratio, dropout)
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """images (B, C, H, W) → logits (B, classes)."""
        x = rearrange(self.embed(images), "b d h w -> b (h w) d") + self.pos
        for block in self.blocks:
            x = block(x, hw=self.grid)
        return self.head(self.norm(x).mean(dim=1))
