"""The session transformer (VINCIE §3.2, scaled down): a flow-matching DiT over all frames and
texts of a session.

- Frames (images and masks) are patchified in pixel space; each carries 3 noisy channels, 3
  condition channels and a flag channel (context frames: clean, condition = the frame, flag 1;
  frames to generate: x_t, condition 0, flag 0), as the authors' 16 + 16 + 1 latent channels.
- Each turn's text is a learned turn-ID token followed by its words (a word embedding trained here).
- Token order: every frame's patches, then every turn's text.
- 3D rotary positions: text token p sits at (p, p, p); patch (y, x) of frame f at (L + f, y, x),
  with L the text budget of a whole session, so positions do not depend on the batch. With
  `absolute_positions` a learned embedding of the patch's (row, column) is added to its token too
  (ours, for the grid world, whose instructions name cells by row and column).
- The first `separate_blocks` blocks are MM-DiT (separate image and text weights, one joint
  attention); the rest share one set of weights for all tokens. The timestep modulates every block
  through adaLN-Zero.
- Attention is block-causal over turns (a token of turn k sees turns ≤ k) or full (`attention`), the
  released checkpoints' choice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26.core.validation import check_in, check_int

ATTENTIONS = ("block_causal", "full")
PAD, NULL, UNK = 0, 1, 2  # word ids: padding, the CFG null word, out of vocabulary
IN_CHANNELS = 7  # 3 noisy + 3 condition + 1 clean flag


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the session transformer."""

    image_size: int = 32
    """frame side in pixels (the model works in pixel space)"""
    patch: int = 4
    """patch side; a frame is (image_size / patch)² tokens"""
    width: int = 144
    """token width"""
    heads: int = 4
    """attention heads (head width = width / heads, split over the three rotary axes)"""
    separate_blocks: int = 2
    """leading MM-DiT blocks with separate image and text weights (the authors: 10 of 32)"""
    shared_blocks: int = 4
    """following blocks with one set of weights for all tokens (the authors: 22 of 32)"""
    max_words: int = 16
    """text budget per turn, in words (the turn-ID token comes on top)"""
    max_turns: int = 8
    """turn-ID embeddings: the longest session, in turns"""
    attention: str = "block_causal"
    """block_causal (no attention to later turns) or full"""
    absolute_positions: bool = False
    """also add a learned embedding of each patch's (row, column) to its token: rotary positions
    are relative only, and the grid world's instructions name cells by row and column"""

    def __post_init__(self) -> None:
        check_int("image_size", self.image_size, 8)
        check_int("patch", self.patch, 1)
        if self.image_size % self.patch:
            raise ValueError(f"image_size={self.image_size} must be a multiple of patch={self.patch}")
        check_int("width", self.width, 8)
        check_int("heads", self.heads, 1)
        if self.width % self.heads or (self.width // self.heads) % 6:
            raise ValueError(
                "width / heads must be a multiple of 6 (three even rotary axes), "
                f"got {self.width}/{self.heads}"
            )
        check_int("separate_blocks", self.separate_blocks, 0)
        check_int("shared_blocks", self.shared_blocks, 0)
        if self.separate_blocks + self.shared_blocks < 1:
            raise ValueError("the model needs at least one block (separate_blocks + shared_blocks ≥ 1)")
        check_int("max_words", self.max_words, 1)
        check_int("max_turns", self.max_turns, 1)
        check_in("attention", self.attention, ATTENTIONS)

    @property
    def grid(self) -> int:
        """Patches per frame side."""
        return self.image_size // self.patch

    @property
    def text_length(self) -> int:
        """Text tokens of a session at the budget: max_turns × (1 + max_words)."""
        return self.max_turns * (1 + self.max_words)


# ---------------------------------------------------------------------------------------------
# Positions and the attention mask


def rope_angles(pos: Tensor, head_dim: int, theta: float = 100.0) -> Tensor:
    """Rotation angles (…, L, head_dim / 2) for 3D positions (…, L, 3): each axis gets a third of
    the head's dimensions, frequencies θ^(−2i/d) per axis (RoFormer's eq. 15, one axis at a time)."""
    d = head_dim // 3
    freqs = theta ** (-torch.arange(0, d, 2, dtype=torch.float32, device=pos.device) / d)
    return torch.cat([pos[..., a : a + 1].float() * freqs for a in range(3)], dim=-1)


def apply_rope(x: Tensor, angles: Tensor) -> Tensor:
    """Rotate consecutive pairs of x (B, H, L, D) by angles (B, L, D / 2)."""
    a = angles.unsqueeze(1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = a.cos(), a.sin()
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


def attention_mask(block: Tensor, present: Tensor, mode: str) -> Tensor:
    """Boolean (B, 1, L, L) mask, True where query i may attend to key j: key j is present and,
    block-causally, block[j] ≤ block[i]. Every token may attend to itself (padding rows stay finite)."""
    check_in("attention", mode, ATTENTIONS)
    allowed = present[:, None, :].expand(-1, block.shape[1], -1)
    if mode == "block_causal":
        allowed = allowed & (block[:, None, :] <= block[:, :, None])
    eye = torch.eye(block.shape[1], dtype=torch.bool, device=block.device)
    return (allowed | eye).unsqueeze(1)


# ---------------------------------------------------------------------------------------------
# Blocks


def timestep_embedding(t: Tensor, dim: int) -> Tensor:
    """Sinusoidal embedding of t ∈ [0, 1] (scaled by 1000, as DiT's), (B,) → (B, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    args = 1000.0 * t[:, None].float() * freqs
    return torch.cat([args.cos(), args.sin()], dim=-1)


class Stream(nn.Module):
    """One modality's weights in a block: adaLN-Zero modulation, qkv, output and MLP."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"), nn.Linear(4 * width, width)
        )
        self.modulation = nn.Linear(width, 6 * width)
        nn.init.zeros_(self.modulation.weight)  # adaLN-Zero: every block starts as the identity
        nn.init.zeros_(self.modulation.bias)


class Block(nn.Module):
    """A transformer block over [image tokens; text tokens]: `separate` gives each modality its own
    Stream (MM-DiT), else one Stream serves both; attention is always joint."""

    def __init__(self, width: int, heads: int, separate: bool) -> None:
        super().__init__()
        self.heads = heads
        self.streams = nn.ModuleList([Stream(width) for _ in range(2 if separate else 1)])

    def forward(self, x: Tensor, n_image: int, temb: Tensor, angles: Tensor, mask: Tensor) -> Tensor:
        parts = (x[:, :n_image], x[:, n_image:])
        streams = [self.streams[min(i, len(self.streams) - 1)] for i in range(2)]
        mods = [s.modulation(F.silu(temb)).unsqueeze(1).chunk(6, dim=-1) for s in streams]
        qkv = []
        for p, s, (shift, scale, _, _, _, _) in zip(parts, streams, mods, strict=True):
            qkv.append(s.qkv(s.norm1(p) * (1 + scale) + shift))
        b, n, w = x.shape
        q, k, v = torch.cat(qkv, dim=1).view(b, n, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        q, k = apply_rope(q, angles), apply_rope(k, angles)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, n, w)
        out = []
        for p, ap, s, (_, _, gate1, shift2, scale2, gate2) in zip(
            parts, (a[:, :n_image], a[:, n_image:]), streams, mods, strict=True
        ):
            p = p + gate1 * s.out(ap)
            p = p + gate2 * s.mlp(s.norm2(p) * (1 + scale2) + shift2)
            out.append(p)
        return torch.cat(out, dim=1)


class SessionDiT(nn.Module):
    """Predicts the flow velocity of every frame of a session given all frames and texts."""

    def __init__(self, cfg: ModelConfig, vocab_size: int) -> None:
        super().__init__()
        self.cfg = cfg
        w, p = cfg.width, cfg.patch
        self.patch_in = nn.Linear(IN_CHANNELS * p * p, w)
        self.patch_pos = (
            nn.Parameter(torch.randn(cfg.grid * cfg.grid, w) * 0.02) if cfg.absolute_positions else None
        )
        self.words = nn.Embedding(vocab_size, w)
        self.turn_id = nn.Embedding(cfg.max_turns, w)  # the learned token before each turn's text
        self.time = nn.Sequential(nn.Linear(w, w), nn.SiLU(), nn.Linear(w, w))
        self.blocks = nn.ModuleList([Block(w, cfg.heads, True) for _ in range(cfg.separate_blocks)])
        shared = Block(w, cfg.heads, False) if cfg.shared_blocks else None
        self.shared = shared
        self.final_norm = nn.LayerNorm(w, elementwise_affine=False, eps=1e-6)
        self.final_mod = nn.Linear(w, 2 * w)
        self.patch_out = nn.Linear(w, 3 * p * p)
        for layer in (self.final_mod, self.patch_out):
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def tokens(self, frames: Tensor, frame_index: Tensor, words: Tensor) -> tuple[Tensor, Tensor]:
        """Token embeddings [patches; texts] (B, L, width) and their 3D positions (B, L, 3)."""
        cfg = self.cfg
        b, f = frames.shape[:2]
        g, p = cfg.grid, cfg.patch
        patches = frames.reshape(b, f, IN_CHANNELS, g, p, g, p).permute(0, 1, 3, 5, 2, 4, 6)
        img = self.patch_in(patches.reshape(b, f, g * g, IN_CHANNELS * p * p))
        if self.patch_pos is not None:
            img = img + self.patch_pos
        img = img.reshape(b, f * g * g, cfg.width)
        turns = words.shape[1]
        ids = torch.arange(turns, device=words.device)
        txt = torch.cat([self.turn_id(ids)[None, :, None].expand(b, -1, -1, -1), self.words(words)], dim=2)
        txt = txt.reshape(b, turns * (1 + cfg.max_words), cfg.width)
        yy, xx = torch.meshgrid(torch.arange(g), torch.arange(g), indexing="ij")
        yx = torch.stack([yy.flatten(), xx.flatten()], -1).to(frames.device)  # (g², 2)
        ft = (cfg.text_length + frame_index)[:, :, None, None].expand(-1, -1, g * g, 1)
        img_pos = torch.cat([ft, yx[None, None].expand(b, f, -1, -1)], dim=-1).reshape(b, f * g * g, 3)
        tp = torch.arange(txt.shape[1], device=frames.device)[None, :, None].expand(b, -1, 3)
        return torch.cat([img, txt], dim=1), torch.cat([img_pos, tp], dim=1)

    def forward(
        self, frames: Tensor, frame_block: Tensor, frame_index: Tensor, words: Tensor, t: Tensor
    ) -> Tensor:
        """frames (B, F, 7, H, W); frame_block (B, F) the turn each frame belongs to, −1 for an absent
        frame; frame_index (B, F) the frame's place in the session; words (B, T, max_words) word ids
        of each turn (a turn of all PAD is absent); t (B,). Returns velocities (B, F, 3, H, W)."""
        cfg = self.cfg
        b, f = frames.shape[:2]
        g, p = cfg.grid, cfg.patch
        x, pos = self.tokens(frames, frame_index, words)
        turns = words.shape[1]
        n_image = f * g * g
        text_block = torch.arange(turns, device=words.device).repeat_interleave(1 + cfg.max_words)
        text_present = torch.cat([(words != PAD).any(-1, keepdim=True), words != PAD], dim=-1).reshape(b, -1)
        block = torch.cat(
            [frame_block.repeat_interleave(g * g, dim=1), text_block[None].expand(b, -1)], dim=1
        )
        present = torch.cat([(frame_block >= 0).repeat_interleave(g * g, dim=1), text_present], dim=1)
        mask = attention_mask(block, present, cfg.attention)
        angles = rope_angles(pos, cfg.width // cfg.heads)
        temb = self.time(timestep_embedding(t, cfg.width))
        for blk in self.blocks:
            x = blk(x, n_image, temb, angles, mask)
        for _ in range(cfg.shared_blocks):
            x = self.shared(x, n_image, temb, angles, mask)  # type: ignore[misc]
        shift, scale = self.final_mod(F.silu(temb)).unsqueeze(1).chunk(2, dim=-1)
        out = self.patch_out(self.final_norm(x[:, :n_image]) * (1 + scale) + shift)
        out = out.reshape(b, f, g, g, 3, p, p).permute(0, 1, 4, 2, 5, 3, 6)
        return out.reshape(b, f, 3, cfg.image_size, cfg.image_size)
