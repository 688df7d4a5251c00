"""A small character-level decoder-only transformer with KV-cached batched sampling.

Batches are left-padded: `attention_mask` marks real tokens, positions count real tokens only,
so a prompt gets the same positions whatever it is batched with.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

Cache = list[tuple[torch.Tensor, torch.Tensor]]


@dataclass(frozen=True)
class ModelConfig:
    """Size of the character transformer."""

    vocab_size: int = 99
    dim: int = 128
    layers: int = 4
    heads: int = 4
    max_len: int = 192

    def __post_init__(self) -> None:
        if self.dim % self.heads:
            raise ValueError(f"dim ({self.dim}) must be a multiple of heads ({self.heads})")


class _Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.heads = cfg.heads
        self.ln1, self.ln2 = nn.LayerNorm(cfg.dim), nn.LayerNorm(cfg.dim)
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.proj = nn.Linear(cfg.dim, cfg.dim)
        self.mlp = nn.Sequential(nn.Linear(cfg.dim, 4 * cfg.dim), nn.GELU(), nn.Linear(4 * cfg.dim, cfg.dim))

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x)), (k, v)


class CharTransformer(nn.Module):
    """GPT-style decoder: token + learned position embeddings, pre-norm blocks, tied head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.dim)
        self.pos = nn.Embedding(cfg.max_len, cfg.dim)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(cfg.dim)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(
        self,
        ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        cache: Cache | None = None,
    ) -> tuple[torch.Tensor, Cache]:
        """Logits (B, T, V) for ids (B, T); `attention_mask` (B, T_past + T) marks real tokens."""
        b, t = ids.shape
        past = 0 if cache is None else cache[0][0].shape[2]
        if attention_mask is None:
            attention_mask = torch.ones(b, past + t, dtype=torch.bool, device=ids.device)
        attention_mask = attention_mask.bool()
        positions = (attention_mask.long().cumsum(-1) - 1).clamp_min(0)[:, past:]
        if int(positions.max()) >= self.cfg.max_len:
            raise ValueError(f"sequence longer than max_len={self.cfg.max_len}")
        x = self.tok(ids) + self.pos(positions)
        # causal over the full (past + new) axis, and never attend to padding
        causal = torch.ones(t, past + t, dtype=torch.bool, device=ids.device).tril(past)
        mask = causal[None, None] & attention_mask[:, None, None, :]
        # a fully padded query row would give NaN: let it attend to itself only
        eye = torch.zeros_like(mask)
        eye[..., torch.arange(t), past + torch.arange(t)] = True
        mask = mask | (eye & ~mask.any(-1, keepdim=True))
        new_cache = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, mask, None if cache is None else cache[i])
            new_cache.append(kv)
        return self.ln(x) @ self.tok.weight.T, new_cache


def left_pad(seqs: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-pad id lists into (ids, mask) tensors."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros(len(seqs), width, dtype=torch.bool)
    for i, s in enumerate(seqs):
        if s:
            ids[i, width - len(s) :] = torch.tensor(s)
            mask[i, width - len(s) :] = True
    return ids, mask


@torch.no_grad()
def generate(
    model: CharTransformer,
    prompts: list[list[int]],
    *,
    max_new_tokens: int,
    eos_id: int,
    pad_id: int,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
) -> list[list[int]]:
    """Sample a completion for each prompt (KV cache); each stops after its <eos>."""
    if not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("generate needs non-empty prompts")
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    ids, mask = left_pad(prompts, pad_id)
    ids, mask = ids.to(device), mask.to(device)
    room = model.cfg.max_len - int(mask.sum(1).max())
    max_new_tokens = min(max_new_tokens, room)
    logits, cache = model(ids, mask)
    last = logits[:, -1]
    done = torch.zeros(len(prompts), dtype=torch.bool, device=device)
    out = torch.full((len(prompts), max(max_new_tokens, 0)), pad_id, dtype=torch.long, device=device)
    for step in range(max_new_tokens):
        if temperature == 0:
            nxt = last.argmax(-1)
        else:
            probs = torch.softmax(last.float() / temperature, dim=-1)
            nxt = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1).to(device)
        nxt = torch.where(done, torch.full_like(nxt, pad_id), nxt)
        out[:, step] = nxt
        done = done | (nxt == eos_id)
        if bool(done.all()):
            break
        mask = torch.cat([mask, torch.ones(len(prompts), 1, dtype=torch.bool, device=device)], 1)
        logits, cache = model(nxt[:, None], mask, cache)
        last = logits[:, -1]
    model.train(was_training)
    result = []
    for row in out.tolist():
        seq = []
        for tok in row:
            if tok == pad_id:
                break
            seq.append(tok)
            if tok == eos_id:
                break
        result.append(seq)
    return result


def pack(
    prompts: list[list[int]], completions: list[list[int]], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows of left-padded prompt then right-padded completion, so every row's completion sits in
    the same columns: (ids, mask, completion ids, completion mask), on `device`."""
    p_ids, p_mask = left_pad(prompts, pad_id)
    c_len = max(1, max(len(c) for c in completions))
    c_ids = torch.full((len(completions), c_len), pad_id, dtype=torch.long)
    c_mask = torch.zeros(len(completions), c_len, dtype=torch.bool)
    for i, c in enumerate(completions):
        if c:
            c_ids[i, : len(c)] = torch.tensor(c, dtype=torch.long)
        c_mask[i, : len(c)] = True
    ids, mask = torch.cat([p_ids, c_ids], 1), torch.cat([p_mask, c_mask], 1)
    return ids.to(device), mask.to(device), c_ids.to(device), c_mask.to(device)


def completion_scores(
    logits: torch.Tensor, c_ids: torch.Tensor, c_mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """From the logits (B, C, V) that predict the completion tokens: their log-probs, the mask and
    the entropies of the predictive distributions, each (B, C)."""
    logp_all = logits.float().log_softmax(-1)
    logp = logp_all.gather(-1, c_ids[..., None]).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp, c_mask, entropy


def token_logprobs(
    model: CharTransformer, prompts: list[list[int]], completions: list[list[int]], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Log-probs (B, C) of each completion token given its prompt, their mask, and entropies."""
    ids, mask, c_ids, c_mask = pack(prompts, completions, pad_id, next(model.parameters()).device)
    logits, _ = model(ids[:, :-1], mask[:, :-1])
    return completion_scores(logits[:, -c_ids.shape[1] :], c_ids, c_mask)  # predict the completions
