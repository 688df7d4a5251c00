"""One translator on one split, end to end: translate, label by CHAIR, run the three passes.

`score_split` is what every analysis of the system calls (the main table, the degradations, the
wrong starting prompt): greedy translations of the samples (optionally after a forced prefix),
CHAIR labels against the references' entities, and the batched three teacher-forced passes
(`reliability.three_passes`: clean, masked and mismatched video, one call each per batch, never
per token). The mismatched video of each sample is drawn from the same split (`choose_mismatched`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from iclr26.slt_reliability import hallucination as H
from iclr26.slt_reliability.data import Sample
from iclr26.slt_reliability.models import Translator, pad_tokens, pad_videos
from iclr26.slt_reliability.reliability import Passes, ReliabilityConfig, choose_mismatched, three_passes
from iclr26.slt_reliability.train import bleu, translate


@dataclass
class Scored:
    """A split translated and scored: one entry per sample, in the samples' order."""

    samples: list[Sample]
    hyps: list[list[str]]
    """the hypotheses' words (a forced prefix excluded)"""
    prefix: list[list[str]]
    """the forced words each hypothesis started with ([] without a prompt)"""
    chair: np.ndarray
    """CHAIR of each hypothesis against its reference's entities"""
    y: np.ndarray
    """1 = hallucinated (CHAIR > 0)"""
    passes: Passes
    """the three passes over bos + prefix + hypothesis + eos; only hypothesis words are scored"""
    bleu: float
    """corpus BLEU (sacrebleu) of the hypotheses"""

    def select(self, index: Sequence[int] | np.ndarray) -> Scored:
        """The sentences at `index` (BLEU recomputed on them)."""
        idx = [int(i) for i in index]
        hyps = [self.hyps[i] for i in idx]
        samples = [self.samples[i] for i in idx]
        return Scored(
            samples=samples,
            hyps=hyps,
            prefix=[self.prefix[i] for i in idx],
            chair=self.chair[idx],
            y=self.y[idx],
            passes=self.passes.select(idx),
            bleu=bleu(hyps, [list(s.text) for s in samples]) if idx else float("nan"),
        )


def rest_pose(samples: Sequence[Sample], n: int = 200) -> torch.Tensor:
    """The masked video's frame: the mean pose over every frame of the first `n` samples; (50, 2)."""
    if not samples:
        raise ValueError("rest_pose: needs at least one sample")
    return torch.as_tensor(np.concatenate([s.keypoints for s in samples[:n]]).mean(axis=0))


def run_passes(
    model: Translator,
    samples: Sequence[Sample],
    words: Sequence[Sequence[str]],
    rest: torch.Tensor,
    config: ReliabilityConfig,
    n_unscored: Sequence[int] | None = None,
    batch_size: int = 64,
) -> Passes:
    """The three passes over bos + words + eos for every sample, in batches of similar length.

    The first `n_unscored[i]` words of sample i (a forced prefix) are read but not scored.
    """
    if len(words) != len(samples):
        raise ValueError(f"words: {len(words)} hypotheses for {len(samples)} samples")
    vocab = model.vocab
    lengths = np.array([len(s.keypoints) for s in samples])
    other = choose_mismatched(lengths, k=config.mismatch_k, seed=config.seed)
    order = np.argsort(lengths, kind="stable")  # similar lengths per batch: less padding
    parts, where = [], []
    for b in range(0, len(order), batch_size):
        idx = order[b : b + batch_size]
        video, lens = pad_videos([torch.as_tensor(samples[i].keypoints) for i in idx])
        mis_video, mis_lens = pad_videos([torch.as_tensor(samples[other[i]].keypoints) for i in idx])
        tokens = pad_tokens([[vocab.bos, *vocab.encode(words[i]), vocab.eos] for i in idx], vocab.pad)
        parts.append(three_passes(model, video, lens, tokens, mis_video, mis_lens, rest, config))
        where.extend(idx.tolist())
    passes = Passes.cat(parts).select(np.argsort(where))
    if n_unscored is not None:
        for i, k in enumerate(n_unscored):
            passes.mask[i, :k] = False
            if not passes.mask[i].any():  # nothing generated after the prefix: score its eos
                passes.mask[i, len(words[i])] = True
    return passes


def score_split(
    model: Translator,
    samples: Sequence[Sample],
    entity_words: Collection[str],
    rest: torch.Tensor,
    config: ReliabilityConfig,
    prefix: Sequence[Sequence[str]] | None = None,
    max_len: int = 40,
) -> Scored:
    """Translate `samples` (after the forced `prefix` words, if given), label and run the passes."""
    samples = list(samples)
    prefix = [list(p) for p in prefix] if prefix is not None else [[] for _ in samples]
    full = translate(model, samples, max_len=max_len, prefix=prefix if any(prefix) else None)
    hyps = [h[len(p) :] for h, p in zip(full, prefix, strict=True)]
    chair = H.chair_scores(hyps, [s.entities for s in samples], entity_words)
    passes = run_passes(model, samples, full, rest, config, n_unscored=[len(p) for p in prefix])
    return Scored(
        samples=samples,
        hyps=hyps,
        prefix=prefix,
        chair=chair,
        y=H.hallucinated(chair),
        passes=passes,
        bleu=bleu(hyps, [list(s.text) for s in samples]),
    )
