"""Two sign-language translators with cross-attention decoders (arXiv 2510.18439, Sec. 4 setups).

* `GlossBasedTranslator` (TwoStream-SLT in spirit): keypoint frames -> visual encoder -> memory;
  a CTC gloss head reads the memory, a transformer decoder reads it through cross-attention.
  Loss: L = CE(words) + λ · CTC(glosses).
* `GlossFreeTranslator` (SpaMo in spirit): the same visual encoder straight to the text decoder,
  L = CE(words).

The contract the reliability scorer uses (`encode`, `decode`, `DecoderOutput`, `Vocab`, `stride`,
`greedy_decode`) is the same for both. Visual encoder: per-frame features [x_t, x_t − x_{t−1}]
(100 + 100 coordinates, standardised by training-set statistics) -> linear embedding -> log2(stride)
temporal convolutions (kernel 5, stride 2) -> sinusoidal positions -> transformer encoder. Padded
frames are zeroed after the embedding and after each convolution, so their content never reaches a
valid memory position. The decoder is pre-LN; `DecoderOutput.hidden` is the final LayerNorm of the
last decoder layer, i.e. exactly the input of the (embedding-tied) vocabulary projection.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Integral

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import Tensor, nn

from iclr26.core.errors import UserError

N_POINTS = 50
"""Keypoints per frame (hands and body), each (x, y)."""

SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")


class Vocab:
    """Word <-> id table; ids 0..3 are `<pad>`, `<bos>`, `<eos>`, `<unk>`, then the words in order."""

    pad, bos, eos, unk = 0, 1, 2, 3

    def __init__(self, words: Iterable[str]) -> None:
        self.itos: tuple[str, ...] = SPECIALS + tuple(dict.fromkeys(w for w in words if w not in SPECIALS))
        self.stoi: dict[str, int] = {w: i for i, w in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def __hash__(self) -> int:
        return hash(self.itos)

    def encode(self, words: Sequence[str]) -> list[int]:
        """Ids of `words` (unknown words -> `unk`), without `bos`/`eos`."""
        return [self.stoi.get(w, self.unk) for w in words]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Words of `ids`, stopping at the first `eos` and skipping `pad`/`bos`."""
        out: list[str] = []
        for i in ids:
            i = int(i)
            if i == self.eos:
                break
            if i in (self.pad, self.bos):
                continue
            out.append(self.itos[i] if 0 <= i < len(self.itos) else self.itos[self.unk])
        return out


@dataclass
class DecoderOutput:
    """One teacher-forced decoder pass.

    logits: (B, L, V); hidden: (B, L, d), the input of the vocabulary projection (final LayerNorm of
    the last decoder layer); cross_attn: (B, n_layers, n_heads, L, S), each row a distribution over
    the unpadded memory positions (padded ones get 0; dropout-free in `eval()` mode).
    """

    logits: Tensor
    hidden: Tensor
    cross_attn: Tensor


def sinusoid(n: int, d: int, device: torch.device | None = None) -> Tensor:
    """Sinusoidal positional encodings, (n, d)."""
    pos = torch.arange(n, device=device, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d, device=device)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return pe


def length_mask(lengths: Tensor, n: int) -> Tensor:
    """(B, n) bool, True at padded positions (index >= length)."""
    return torch.arange(n, device=lengths.device)[None, :] >= lengths[:, None]


class VisualEncoder(nn.Module):
    """Keypoint video (B, T, 50, 2) -> memory (B, S, d), S = ceil(T / stride)."""

    def __init__(self, d_model: int, layers: int, heads: int, d_ff: int, stride: int, dropout: float) -> None:
        super().__init__()
        if stride < 1 or stride & (stride - 1):
            raise ValueError(f"stride must be a power of two (1, 2, 4, ...), got {stride!r}")
        self.stride = stride
        n_in = 4 * N_POINTS  # positions and velocities
        self.register_buffer("input_mean", torch.zeros(n_in))
        self.register_buffer("input_std", torch.ones(n_in))
        self.embed = nn.Linear(n_in, d_model)
        self.convs = nn.ModuleList(
            nn.Conv1d(d_model, d_model, kernel_size=5, stride=2, padding=2)
            for _ in range(int(math.log2(stride)))
        )
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(d_model, heads, d_ff, dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)

    @staticmethod
    def frame_features(video: Tensor) -> Tensor:
        """(B, T, 50, 2) -> (B, T, 200): coordinates and their frame-to-frame differences."""
        x = rearrange(video, "b t p c -> b t (p c)")
        dx = torch.cat([torch.zeros_like(x[:, :1]), x[:, 1:] - x[:, :-1]], dim=1)
        return torch.cat([x, dx], dim=-1)

    def forward(self, video: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        T = video.shape[1]
        feats = (self.frame_features(video) - self.input_mean) / self.input_std
        pad = length_mask(lengths, T)
        h = self.embed(feats).masked_fill(pad[..., None], 0.0)
        h = rearrange(h, "b t d -> b d t")
        n = lengths
        for conv in self.convs:
            h = F.gelu(conv(h))
            n = (n + 1) // 2  # ceil(n / 2): positions whose window centre is a valid frame
            h = h.masked_fill(length_mask(n, h.shape[-1])[:, None, :], 0.0)
        h = rearrange(h, "b d s -> b s d")
        S = h.shape[1]
        memory_pad_mask = length_mask(n, S)
        h = self.drop(h + sinusoid(S, h.shape[-1], h.device))
        memory = self.norm(self.encoder(h, src_key_padding_mask=memory_pad_mask))
        return memory, memory_pad_mask


class DecoderLayer(nn.Module):
    """Pre-LN transformer decoder layer that returns its per-head cross-attention weights."""

    def __init__(self, d_model: int, heads: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, heads, dropout=dropout, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d_model, heads, dropout=dropout, batch_first=True)
        self.ff = nn.Sequential(
            nn.Linear(d_model, d_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model)
        )
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.drop = nn.Dropout(dropout)

    def forward(
        self, y: Tensor, causal: Tensor, tok_pad: Tensor, memory: Tensor, memory_pad_mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        q = self.norm1(y)
        a, _ = self.self_attn(q, q, q, attn_mask=causal, key_padding_mask=tok_pad, need_weights=False)
        y = y + self.drop(a)
        q = self.norm2(y)
        a, w = self.cross_attn(
            q, memory, memory, key_padding_mask=memory_pad_mask, need_weights=True, average_attn_weights=False
        )
        y = y + self.drop(a)
        y = y + self.drop(self.ff(self.norm3(y)))
        return y, w  # w: (B, H, L, S)


class Translator(nn.Module):
    """Visual encoder + cross-attention text decoder; base of both translators."""

    has_gloss_head = False

    def __init__(
        self,
        vocab: Vocab,
        d_model: int = 128,
        layers: int = 2,
        heads: int = 4,
        d_ff: int | None = None,
        stride: int = 4,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        if d_model % heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by heads ({heads})")
        d_ff = d_ff or 2 * d_model
        self.vocab = vocab
        self.d_model, self.n_layers, self.n_heads = d_model, layers, heads
        self.stride = stride
        """Frames per memory position; videos need at least `stride` frames."""
        self.encoder = VisualEncoder(d_model, layers, heads, d_ff, stride, dropout)
        self.tok_embed = nn.Embedding(len(vocab), d_model, padding_idx=vocab.pad)
        nn.init.normal_(self.tok_embed.weight, std=d_model**-0.5)  # unit-scale logits with tied weights
        with torch.no_grad():
            self.tok_embed.weight[vocab.pad].zero_()
        self.layers = nn.ModuleList(DecoderLayer(d_model, heads, d_ff, dropout) for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(d_model, len(vocab))
        self.out.weight = self.tok_embed.weight  # tied input/output embeddings

    # --- contract -------------------------------------------------------------------------------
    def encode(
        self, video: Tensor, lengths: Tensor, ids: Sequence[str] | None = None
    ) -> tuple[Tensor, Tensor]:
        """video (B, T, 50, 2), lengths (B,) -> memory (B, S, d), memory_pad_mask (B, S) (True = pad).

        `ids` (optional) name the samples in error messages.
        """
        self._check_video(video, lengths, ids)
        return self.encoder(video, lengths.to(video.device))

    def decode(self, memory: Tensor, memory_pad_mask: Tensor, tokens: Tensor) -> DecoderOutput:
        """Teacher-forced pass over tokens (B, L) (starting with `bos`) -> `DecoderOutput`."""
        if tokens.dtype not in (torch.int64, torch.int32) or tokens.dim() != 2:
            raise UserError(f"tokens must be an int tensor (B, L), got {tokens.dtype} {tuple(tokens.shape)}")
        if tokens.numel() and (int(tokens.max()) >= len(self.vocab) or int(tokens.min()) < 0):
            b = int(((tokens >= len(self.vocab)) | (tokens < 0)).any(1).nonzero()[0])
            raise UserError(
                f"vocabulary mismatch: sequence {b} of the batch has token id {int(tokens[b].max())} but the "
                f"model's vocabulary has {len(self.vocab)} entries; encode words with this model's `vocab`"
            )
        L = tokens.shape[1]
        causal = torch.ones(L, L, dtype=torch.bool, device=tokens.device).triu(1)
        tok_pad = tokens == self.vocab.pad
        y = self.tok_embed(tokens) * math.sqrt(self.d_model) + sinusoid(L, self.d_model, tokens.device)
        y = self.drop(y)
        weights = []
        for layer in self.layers:
            y, w = layer(y, causal, tok_pad, memory, memory_pad_mask)
            weights.append(w)
        hidden = self.norm(y)
        return DecoderOutput(logits=self.out(hidden), hidden=hidden, cross_attn=torch.stack(weights, dim=1))

    def forward(self, video: Tensor, lengths: Tensor, tokens: Tensor) -> DecoderOutput:
        """decode(encode(video, lengths), tokens)."""
        return self.decode(*self.encode(video, lengths), tokens)

    # --- training -------------------------------------------------------------------------------
    def loss(
        self,
        video: Tensor,
        lengths: Tensor,
        tokens: Tensor,
        glosses: Tensor | None = None,
        gloss_lengths: Tensor | None = None,
        ctc_weight: float = 0.0,
    ) -> dict[str, Tensor]:
        """tokens (B, L) = [bos, w_1..w_n, eos, pad...]; returns {"loss", "ce", "ctc"} (scalars)."""
        memory, mask = self.encode(video, lengths)
        ce = self.text_loss(memory, mask, tokens)
        return {"loss": ce, "ce": ce.detach(), "ctc": torch.zeros((), device=ce.device)}

    def text_loss(self, memory: Tensor, mask: Tensor, tokens: Tensor) -> Tensor:
        """Teacher-forced cross-entropy of tokens[:, 1:] given tokens[:, :-1] (padding ignored)."""
        out = self.decode(memory, mask, tokens[:, :-1])
        return F.cross_entropy(
            rearrange(out.logits, "b l v -> (b l) v"), tokens[:, 1:].reshape(-1), ignore_index=self.vocab.pad
        )

    def set_input_stats(self, mean: Tensor, std: Tensor) -> None:
        """Standardise the 200 frame features with training-set statistics."""
        self.encoder.input_mean.copy_(mean)
        self.encoder.input_std.copy_(std.clamp_min(1e-6))

    def _check_video(self, video: Tensor, lengths: Tensor, ids: Sequence[str] | None) -> None:
        def name(b: int) -> str:
            return f"sample {ids[b]!r}" if ids is not None else f"sample {b} of the batch"

        if video.dim() != 4 or tuple(video.shape[2:]) != (N_POINTS, 2):
            raise UserError(f"video must be (B, T, {N_POINTS}, 2) keypoints, got shape {tuple(video.shape)}")
        if lengths.shape != (video.shape[0],):
            raise UserError(f"lengths must be (B,) = ({video.shape[0]},), got {tuple(lengths.shape)}")
        short = (lengths < self.stride).nonzero()
        if len(short):
            b = int(short[0])
            raise UserError(
                f"{name(b)} has {int(lengths[b])} frames, fewer than the model's stride ({self.stride}); "
                f"drop it or pad the video to at least {self.stride} frames"
            )
        if int(lengths.max()) > video.shape[1]:
            b = int(lengths.argmax())
            raise UserError(f"{name(b)}: length {int(lengths[b])} exceeds the {video.shape[1]} frames given")
        valid = ~length_mask(lengths.to(video.device), video.shape[1])
        bad = (~torch.isfinite(video).all(dim=(2, 3)) & valid).any(1).nonzero()
        if len(bad):
            raise UserError(
                f"{name(int(bad[0]))} has NaN or infinite keypoints; interpolate or drop those frames"
            )


class GlossFreeTranslator(Translator):
    """SpaMo in spirit: visual encoder straight to the text decoder, trained with CE(words) only."""


class GlossBasedTranslator(Translator):
    """TwoStream-SLT in spirit: a CTC gloss head on the encoder memory; L = CE + λ·CTC."""

    has_gloss_head = True

    def __init__(self, vocab: Vocab, gloss_vocab: Sequence[str], **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        self.gloss_vocab: tuple[str, ...] = ("<blank>", *gloss_vocab)
        """CTC classes: blank (id 0) then the corpus glosses."""
        self.gloss_index = {g: i for i, g in enumerate(self.gloss_vocab)}
        self.ctc_head = nn.Linear(self.d_model, len(self.gloss_vocab))

    def encode_glosses(self, glosses: Sequence[str]) -> list[int]:
        """CTC target ids of a gloss sequence; an unknown gloss is an error."""
        try:
            return [self.gloss_index[g] for g in glosses]
        except KeyError as e:
            raise UserError(f"gloss {e.args[0]!r} is not in the model's gloss vocabulary") from None

    def gloss_logits(self, memory: Tensor) -> Tensor:
        """memory (B, S, d) -> CTC logits (B, S, 1 + n_glosses)."""
        return self.ctc_head(memory)

    def loss(
        self,
        video: Tensor,
        lengths: Tensor,
        tokens: Tensor,
        glosses: Tensor | None = None,
        gloss_lengths: Tensor | None = None,
        ctc_weight: float = 1.0,
    ) -> dict[str, Tensor]:
        if glosses is None or gloss_lengths is None:
            raise UserError("the gloss-based translator needs gloss targets (glosses, gloss_lengths)")
        memory, mask = self.encode(video, lengths)
        ce = self.text_loss(memory, mask, tokens)
        log_probs = rearrange(self.gloss_logits(memory).log_softmax(-1), "b s c -> s b c")
        ctc = F.ctc_loss(
            log_probs.float(), glosses, (~mask).sum(1), gloss_lengths, blank=0, zero_infinity=True
        )
        return {"loss": ce + ctc_weight * ctc, "ce": ce.detach(), "ctc": ctc.detach()}  # L = CE + λ·CTC

    @torch.no_grad()
    def recognise(self, video: Tensor, lengths: Tensor) -> list[list[str]]:
        """Greedy CTC gloss recognition (collapse repeats, drop blanks)."""
        memory, mask = self.encode(video, lengths)
        best = self.gloss_logits(memory).argmax(-1)
        out = []
        for b in range(best.shape[0]):
            seq = best[b, : int((~mask[b]).sum())].tolist()
            out.append([self.gloss_vocab[c] for i, c in enumerate(seq) if c and (i == 0 or c != seq[i - 1])])
        return out


@torch.no_grad()
def greedy_decode(
    model: Translator,
    video: Tensor,
    lengths: Tensor,
    max_len: int,
    ids: Sequence[str] | None = None,
    prefix: Sequence[Sequence[int]] | None = None,
) -> list[list[int]]:
    """Batched greedy decoding; per sample the generated ids without `bos` and without the final `eos`.

    At most `max_len` ids per sample; `ids` (optional) name the samples in error messages. `prefix`
    (optional, one id sequence per sample, possibly empty) forces those ids right after `bos` (the
    paper's wrong starting prompt on the language side): sample b's first len(prefix[b]) steps emit
    its prefix, then greedy generation continues for up to `max_len` more ids; the returned ids start
    with the prefix. Prefixes of different lengths share a batch: each is forced while it lasts.
    """
    vocab = model.vocab
    memory, mask = model.encode(video, lengths, ids)
    B = memory.shape[0]
    device = memory.device
    forced, n_forced = _check_prefix(prefix, B, vocab, ids)
    P = int(n_forced.max()) if B else 0
    forced, n_forced = forced.to(device), n_forced.to(device)
    tokens = torch.full((B, 1), vocab.bos, dtype=torch.long, device=device)
    done = n_forced + max_len <= 0  # (B,) bool: emits only pad from now on
    min_forced = int(n_forced.min()) if B else 0
    for t in range(P + max_len):
        if t < min_forced:  # every sample is still forced: the logits are not needed
            nxt = forced[:, t]
        else:
            nxt = model.decode(memory, mask, tokens).logits[:, -1].argmax(-1)
            if t < P:
                nxt = torch.where(t < n_forced, forced[:, t], nxt)
        nxt = nxt.masked_fill(done, vocab.pad)
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
        done |= nxt == vocab.eos
        if P:
            done |= t + 1 >= n_forced + max_len  # max_len ids generated after this sample's prefix
        if bool(done.all()):
            break
    out = []
    for row in tokens[:, 1:].tolist():
        ids = []
        for i in row:
            if i in (vocab.eos, vocab.pad):
                break
            ids.append(i)
        out.append(ids)
    return out


def _check_prefix(
    prefix: Sequence[Sequence[int]] | None, B: int, vocab: Vocab, ids: Sequence[str] | None
) -> tuple[Tensor, Tensor]:
    """Forced ids (B, P) (pad-filled) and their counts (B,) of `greedy_decode`'s `prefix`; zeros for None.

    A prefix id must be a word or `unk` of `vocab` (not `pad`, `bos` or `eos`)."""
    if prefix is None:
        return torch.zeros(B, 0, dtype=torch.long), torch.zeros(B, dtype=torch.long)
    if isinstance(prefix, str) or not hasattr(prefix, "__len__") or len(prefix) != B:
        n = len(prefix) if hasattr(prefix, "__len__") else type(prefix).__name__
        raise UserError(f"prefix must hold one id sequence per sample of the batch ({B}), got {n!r}")
    seqs = []
    for b, p in enumerate(prefix):
        name = f"sample {ids[b]!r}" if ids is not None else f"sample {b} of the batch"
        p = p.tolist() if isinstance(p, Tensor) else p
        if isinstance(p, str) or not all(isinstance(i, Integral) and not isinstance(i, bool) for i in p):
            raise UserError(f"prefix of {name} must be a sequence of int token ids, got {p!r}")
        p = [int(i) for i in p]
        bad = [i for i in p if not vocab.unk <= i < len(vocab)]
        if bad:
            raise UserError(
                f"prefix of {name} has token id {bad[0]}; prefix ids must be words of the model's vocabulary"
                f" (ids {vocab.unk}..{len(vocab) - 1}), not pad, bos, eos or out of range"
            )
        seqs.append(list(p))
    n_forced = torch.tensor([len(p) for p in seqs], dtype=torch.long)
    return pad_tokens(seqs, vocab.pad), n_forced


def pad_tokens(seqs: Sequence[Sequence[int]], pad: int, device: torch.device | str = "cpu") -> Tensor:
    """Right-pad int sequences into a (B, max len) long tensor."""
    L = max((len(s) for s in seqs), default=0)
    out = torch.full((len(seqs), L), pad, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out.to(device)


def pad_videos(videos: Sequence[Tensor], device: torch.device | str = "cpu") -> tuple[Tensor, Tensor]:
    """Zero-pad (T_i, 50, 2) videos into (B, T_max, 50, 2) and their lengths (B,)."""
    lengths = torch.tensor([len(v) for v in videos], dtype=torch.long)
    out = torch.zeros(len(videos), int(lengths.max()), N_POINTS, 2)
    for i, v in enumerate(videos):
        out[i, : len(v)] = v
    return out.to(device), lengths.to(device)


def n_parameters(model: nn.Module) -> int:
    """Trainable parameter count (tied weights counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
