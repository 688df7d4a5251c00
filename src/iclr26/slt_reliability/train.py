"""Training, translation and BLEU for the two translators of `models.py` (arXiv 2510.18439 setups).

`train_translator` minimises L = CE(words) + λ·CTC(glosses) (λ = 0 and no CTC head for the
gloss-free model) with Adam and a warmup / inverse-square-root learning rate, which does not depend
on the number of epochs, so a run resumed with more epochs equals an uninterrupted one. A checkpoint
(`out_dir/last.pt`) is written atomically after every epoch and resumed from when present.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import sacrebleu
import torch

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint, write_text_atomic
from iclr26.core.config import ConfigError
from iclr26.core.device import resolve_device
from iclr26.core.errors import UserError
from iclr26.core.seeding import set_seed
from iclr26.slt_reliability.models import (
    GlossBasedTranslator,
    GlossFreeTranslator,
    Translator,
    VisualEncoder,
    Vocab,
    greedy_decode,
    pad_tokens,
    pad_videos,
)

Kind = Literal["gloss_based", "gloss_free"]
KINDS: tuple[str, ...] = ("gloss_based", "gloss_free")
CHECKPOINT = "last.pt"


@dataclass(frozen=True)
class TrainConfig:
    """Translator training; defaults fit ~2,000 synthetic samples on 2 CPU cores in minutes."""

    epochs: int = 20
    """Passes over the training split (a resumed run trains up to this many in total)."""
    batch_size: int = 32
    """Samples per optimiser step."""
    lr: float = 1e-3
    """Peak Adam learning rate, reached after `warmup` steps, then decayed as 1/sqrt(step)."""
    warmup: int = 200
    """Linear learning-rate warmup steps."""
    d_model: int = 128
    """Width of encoder and decoder."""
    layers: int = 2
    """Transformer layers in the encoder and, separately, in the decoder."""
    heads: int = 4
    """Attention heads per layer (d_model must be divisible by it)."""
    d_ff: int = 256
    """Hidden width of the feed-forward blocks."""
    stride: int = 4
    """Frames per memory position (a power of two: log2(stride) stride-2 temporal convolutions)."""
    dropout: float = 0.1
    """Dropout in embeddings, attention and feed-forward blocks."""
    ctc_weight: float = 1.0
    """λ in L = CE + λ·CTC; used by the gloss-based model only."""
    grad_clip: float = 1.0
    """Gradient-norm clipping threshold (0 disables)."""
    max_len: int = 40
    """Longest generated sentence, in words, when decoding dev for BLEU."""
    seed: int = 0
    """Seeds initialisation, batch order and dropout."""
    device: str = "cpu"
    """cpu, cuda, cuda:N or auto."""

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "d_model", "layers", "heads", "d_ff", "stride", "max_len"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.d_model % self.heads:
            raise ConfigError(f"d_model ({self.d_model}) must be divisible by heads ({self.heads})")
        if self.stride & (self.stride - 1):
            raise ConfigError(f"stride must be a power of two, got {self.stride!r}")
        if self.lr <= 0 or self.ctc_weight < 0 or not 0 <= self.dropout < 1 or self.warmup < 0:
            raise ConfigError("need lr > 0, ctc_weight >= 0, 0 <= dropout < 1 and warmup >= 0")


class _Sample(Protocol):
    id: str
    keypoints: np.ndarray
    glosses: tuple[str, ...]
    text: tuple[str, ...]


class _Corpus(Protocol):
    name: str
    train: list
    dev: list
    glosses: tuple[str, ...]
    words: tuple[str, ...]


def build_translator(kind: str, vocab: Vocab, glosses: Sequence[str], cfg: TrainConfig) -> Translator:
    """A fresh translator of `kind` ("gloss_based" or "gloss_free") sized by `cfg`."""
    sizes = dict(
        d_model=cfg.d_model, layers=cfg.layers, heads=cfg.heads, d_ff=cfg.d_ff, stride=cfg.stride,
        dropout=cfg.dropout,
    )  # fmt: skip
    if kind == "gloss_based":
        return GlossBasedTranslator(vocab, glosses, **sizes)
    if kind == "gloss_free":
        return GlossFreeTranslator(vocab, **sizes)
    raise ConfigError(f"kind must be one of {KINDS}, got {kind!r}")


def input_stats(samples: Sequence[_Sample]) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and std of the 200 frame features over every frame of `samples`."""
    feats = torch.cat(
        [
            VisualEncoder.frame_features(torch.as_tensor(s.keypoints, dtype=torch.float32)[None])[0]
            for s in samples
        ]
    )
    return feats.mean(0), feats.std(0)


def _lr_factor(step: int, warmup: int) -> float:
    """Linear warmup to 1 over `warmup` steps, then sqrt(warmup / step) (independent of run length)."""
    if warmup == 0:
        return 1.0
    step = max(step, 1)
    return min(step / warmup, math.sqrt(warmup / step))


def train_translator(
    kind: Kind,
    corpus: _Corpus,
    cfg: TrainConfig,
    out_dir: Path | str,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
) -> Translator:
    """Train (or resume) a translator on `corpus.train`; returns it in eval mode.

    Each history row (also in `out_dir/history.json`) holds the epoch's mean losses, samples/s and,
    after the last epoch, dev BLEU (`dev_bleu`). `model.history` holds the rows too.
    """
    if kind not in KINDS:
        raise ConfigError(f"kind must be one of {KINDS}, got {kind!r}")
    if not corpus.train:
        raise UserError(f"corpus {corpus.name!r} has no training samples")
    out_dir = Path(out_dir)
    device = resolve_device(cfg.device)
    seeded = set_seed(cfg.seed)
    vocab = Vocab(corpus.words)
    model = build_translator(kind, vocab, corpus.glosses, cfg)
    model.set_input_stats(*input_stats(corpus.train))
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _lr_factor(s + 1, cfg.warmup))
    order_gen = seeded.torch_generator

    videos = [torch.as_tensor(s.keypoints, dtype=torch.float32) for s in corpus.train]
    token_ids = [[vocab.bos, *vocab.encode(s.text), vocab.eos] for s in corpus.train]
    gloss_ids = (
        [model.encode_glosses(s.glosses) for s in corpus.train]
        if isinstance(model, GlossBasedTranslator)
        else None
    )
    ckpt = out_dir / CHECKPOINT
    history: list[dict[str, Any]] = []
    start = 0
    resolved = {"kind": kind, **asdict(cfg)}
    if ckpt.exists():
        state = load_checkpoint(ckpt, device)
        saved = {k: v for k, v in state["config"].items() if k not in ("epochs", "device")}
        now = {k: v for k, v in resolved.items() if k not in ("epochs", "device")}
        if saved != now:
            diff = sorted(k for k in now if saved.get(k) != now[k])
            raise UserError(f"{ckpt} was trained with other settings ({', '.join(diff)}); use a new out_dir")
        if state["vocab"] != list(vocab.itos):
            raise UserError(f"{ckpt} was trained on another vocabulary; use a new out_dir")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        order_gen.set_state(state["order_gen"])
        torch.set_rng_state(state["torch_rng"])
        history, start = state["history"], state["epoch"]
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out_dir / "config.json", json.dumps(resolved, indent=2))

    for epoch in range(start, cfg.epochs):
        model.train()
        t0 = time.perf_counter()
        sums = np.zeros(4)  # loss, ce, ctc, samples
        for batch in torch.randperm(len(videos), generator=order_gen).split(cfg.batch_size):
            idx = batch.tolist()
            video, lengths = pad_videos([videos[i] for i in idx], device)
            tokens = pad_tokens([token_ids[i] for i in idx], vocab.pad, device)
            extra: dict[str, Any] = {}
            if gloss_ids is not None:
                extra = dict(
                    glosses=torch.tensor(
                        [g for i in idx for g in gloss_ids[i]], dtype=torch.long, device=device
                    ),
                    gloss_lengths=torch.tensor(
                        [len(gloss_ids[i]) for i in idx], dtype=torch.long, device=device
                    ),
                    ctc_weight=cfg.ctc_weight,
                )
            losses = model.loss(video, lengths, tokens, **extra)
            opt.zero_grad()
            losses["loss"].backward()
            if cfg.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            sched.step()
            sums += len(idx) * np.array([float(losses[k].detach()) for k in ("loss", "ce", "ctc")] + [1.0])
        seconds = time.perf_counter() - t0
        row: dict[str, Any] = {
            "epoch": epoch + 1,
            "loss": float(sums[0] / sums[3]),
            "ce": float(sums[1] / sums[3]),
            "ctc": float(sums[2] / sums[3]),
            "lr": opt.param_groups[0]["lr"],
            "samples_per_s": float(sums[3] / seconds),
            "seconds": seconds,
        }
        if epoch + 1 == cfg.epochs and corpus.dev:
            model.eval()
            row["dev_bleu"] = bleu(
                translate(model, corpus.dev, max_len=cfg.max_len), [s.text for s in corpus.dev]
            )
        history.append(row)
        save_checkpoint(
            ckpt,
            {
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(),
                "order_gen": order_gen.get_state(),
                "torch_rng": torch.get_rng_state(),
                "history": history,
                "epoch": epoch + 1,
                "config": resolved,
                "vocab": list(vocab.itos),
                "glosses": list(corpus.glosses),
            },
        )
        write_text_atomic(out_dir / "history.json", json.dumps(history, indent=2))
        if on_epoch is not None:
            on_epoch(row)
    model.eval()
    model.history = history
    return model


def load_translator(path: Path | str, device: str = "cpu") -> Translator:
    """The translator saved in checkpoint `path` (a `last.pt` or its folder), in eval mode."""
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT
    if not path.exists():
        raise UserError(f"no translator checkpoint at {path}; train one with train_translator first")
    state = load_checkpoint(path, resolve_device(device))
    cfg_dict = dict(state["config"])
    kind = cfg_dict.pop("kind")
    model = build_translator(kind, Vocab(state["vocab"][4:]), state["glosses"], TrainConfig(**cfg_dict))
    model.load_state_dict(state["model"])
    model.history = state["history"]
    return model.to(resolve_device(device)).eval()


@torch.no_grad()
def translate(
    model: Translator,
    samples: Sequence[_Sample],
    batch_size: int = 64,
    max_len: int = 40,
    prefix: Sequence[Sequence[str]] | None = None,
) -> list[list[str]]:
    """Greedy translations of `samples` (in order), as word lists.

    `prefix` (optional, one word sequence per sample) is forced right after `bos` (the paper's wrong
    starting prompt, see `greedy_decode`); each translation then starts with its prefix. A prefix word
    outside the model's vocabulary is a `UserError`.
    """
    forced = None if prefix is None else _encode_prefix(model.vocab, samples, prefix)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    order = sorted(range(len(samples)), key=lambda i: len(samples[i].keypoints))  # less padding
    hyps: dict[int, list[str]] = {}
    for k in range(0, len(order), batch_size):
        idx = order[k : k + batch_size]
        video, lengths = pad_videos(
            [torch.as_tensor(samples[i].keypoints, dtype=torch.float32) for i in idx], device
        )
        ids = [samples[i].id for i in idx]
        pre = None if forced is None else [forced[i] for i in idx]  # the prefixes in batch order
        gens = greedy_decode(model, video, lengths, max_len, ids=ids, prefix=pre)
        for i, gen in zip(idx, gens, strict=True):
            hyps[i] = model.vocab.decode(gen)
    out = [hyps[i] for i in range(len(samples))]
    model.train(was_training)
    return out


def _encode_prefix(
    vocab: Vocab, samples: Sequence[_Sample], prefix: Sequence[Sequence[str]]
) -> list[list[int]]:
    """The ids of `translate`'s word prefixes, one list per sample; unknown words are an error."""
    if isinstance(prefix, str) or len(prefix) != len(samples):
        n = "a string" if isinstance(prefix, str) else len(prefix)
        raise UserError(f"prefix must hold one word sequence per sample ({len(samples)}), got {n}")
    out = []
    for s, words in zip(samples, prefix, strict=True):
        if isinstance(words, str):
            raise UserError(f"prefix of sample {s.id}: must be a sequence of words, got the string {words!r}")
        unknown = [w for w in words if w not in vocab.stoi or vocab.stoi[w] < vocab.unk]
        if unknown:
            raise UserError(
                f"prefix of sample {s.id}: word {unknown[0]!r} is not in the model's vocabulary"
                f" ({len(vocab)} entries)"
            )
        out.append(vocab.encode(words))
    return out


def bleu(hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU-4 (sacrebleu, 13a tokenisation) of word-list hypotheses against one reference each."""
    if len(hyps) != len(refs):
        raise ValueError(f"bleu: {len(hyps)} hypotheses but {len(refs)} references")
    return float(sacrebleu.corpus_bleu([" ".join(h) for h in hyps], [[" ".join(r) for r in refs]]).score)
