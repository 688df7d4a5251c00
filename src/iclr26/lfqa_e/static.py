"""The static metrics (the paper's first family, §4.1): each response is scored against the
reference alone, and a pair's preference is the side with the higher score.

- length (words in English, characters in Chinese): the paper's length baseline;
- ROUGE-1/2/L F-measure (`rouge-score`; Porter stemming in English, characters in Chinese);
- sentence BLEU and chrF (`sacrebleu`; its `zh` tokenizer for Chinese). TER is left out: its shift
  search takes minutes per thousand long answers;
- BERTScore precision, recall and F1 on the local all-MiniLM-L6-v2 (its sixth, last layer; no idf
  weighting), computed here so that it shares one encoder pass with the next metric; a test checks
  it against the `bert-score` package;
- embedding cosine between the response and the reference (the same pass, mean-pooled and
  normalised as `core.embed` does it).

`score_static(name, comparisons)` returns the (n, 2) scores of (response_a, response_b); the tie
rule that turns them into preferences lives in `preference.py`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

from iclr26.core.validation import check_in
from iclr26.lfqa_e.data import Comparison

STATIC_METRICS = (
    "length",
    "rouge1",
    "rouge2",
    "rougeL",
    "bleu",
    "chrf",
    "bertscore_p",
    "bertscore_r",
    "bertscore_f1",
    "embed_cosine",
)
BERTSCORE_LAYER = 6  # BERTScore's layer for MiniLM: its sixth and last (bert-score needs it for a local path)
_CJK_OR_WORD = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+")


class _CharTokenizer:
    """rouge-score's tokenizer interface for Chinese: one token per CJK character, plus words and
    numbers (the default tokenizer keeps only [a-z0-9] and would drop every Chinese character)."""

    def tokenize(self, text: str) -> list[str]:
        return [t.lower() for t in _CJK_OR_WORD.findall(text)]


def length(text: str, language: str) -> int:
    """Words (English) or CJK characters plus words (Chinese)."""
    return len(_CJK_OR_WORD.findall(text)) if language == "zh" else len(text.split())


@functools.cache
def _rouge_scorer(language: str):
    from rouge_score import rouge_scorer

    if language == "zh":
        return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=_CharTokenizer())
    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def rouge(reference: str, response: str, language: str) -> dict[str, float]:
    """ROUGE-1/2/L F-measure of `response` against `reference`."""
    got = _rouge_scorer(language).score(reference, response)
    return {k: v.fmeasure for k, v in got.items()}


def _sacrebleu(kind: str, reference: str, response: str, language: str) -> float:
    import sacrebleu

    if kind == "bleu":
        tokenize = "zh" if language == "zh" else "13a"
        return sacrebleu.sentence_bleu(response, [reference], tokenize=tokenize).score
    return sacrebleu.sentence_chrf(response, [reference]).score


def _states(texts: Sequence[str], max_length: int, batch_size: int) -> dict[str, np.ndarray]:
    """Each unique text's last-layer token states (CLS and SEP included), L2-normalised per token,
    and its mean-pooled unit sentence vector under key (text, "sentence")."""
    import torch

    from iclr26.core.embed import load_model

    st = load_model()  # core.embed's cached all-MiniLM-L6-v2: its tokenizer and BERT
    tok, net = st.tokenizer, st[0].auto_model
    unique = sorted(set(texts), key=len)  # similar lengths share a batch: less padding
    out: dict = {}
    with torch.inference_mode():
        for i in range(0, len(unique), batch_size):
            batch = unique[i : i + batch_size]
            enc = tok(batch, truncation=True, max_length=max_length, padding=True, return_tensors="pt")
            h = net(**enc).last_hidden_state  # (b, t, 384): layer BERTSCORE_LAYER, the last
            mask = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
            pooled = torch.nn.functional.normalize((h * mask).sum(1) / mask.sum(1), dim=-1)
            tokens = torch.nn.functional.normalize(h, dim=-1)
            for k, text in enumerate(batch):
                n = int(enc["attention_mask"][k].sum())
                out[text] = tokens[k, :n].numpy()
                out[(text, "sentence")] = pooled[k].numpy()
    return out


def encoder_scores(
    refs: Sequence[str], hyps: Sequence[str], *, max_length: int = 256, batch_size: int = 32, chunk: int = 512
) -> dict[str, np.ndarray]:
    """BERTScore P, R, F1 and the sentence-embedding cosine of each (ref, hyp) from one pass of
    all-MiniLM-L6-v2 over every unique text, `max_length` word pieces each (the encoder's training
    length). BERTScore (Zhang et al. 2020, Eq. 1-3, no idf): with unit token vectors x (reference)
    and x̂ (response), R = mean_i max_j x_i·x̂_j and P = mean_j max_i x_i·x̂_j over the non-special
    tokens (each max still ranges over every token, as the bert-score package does), F = 2PR/(P+R).
    The cosine is between the mean-pooled unit vectors, as `core.embed.embed` computes them."""
    out = {k: np.zeros(len(refs)) for k in ("bertscore_p", "bertscore_r", "bertscore_f1", "embed_cosine")}
    for start in range(0, len(refs), chunk):  # bounded memory: states of one chunk's texts at a time
        part = range(start, min(start + chunk, len(refs)))
        states = _states([refs[i] for i in part] + [hyps[i] for i in part], max_length, batch_size)
        for i in part:
            x, y = states[refs[i]], states[hyps[i]]
            sim = x @ y.T  # (ref tokens, hyp tokens)
            r = float(sim.max(axis=1)[1:-1].mean())  # Eq. 1: ref tokens, [CLS] and [SEP] left out
            p = float(sim.max(axis=0)[1:-1].mean())  # Eq. 2: response tokens
            out["bertscore_r"][i], out["bertscore_p"][i] = r, p
            out["bertscore_f1"][i] = 2 * p * r / (p + r)  # Eq. 3
            out["embed_cosine"][i] = float(states[(refs[i], "sentence")] @ states[(hyps[i], "sentence")])
    return out


def _pairs(comparisons: Sequence[Comparison]) -> tuple[list[str], list[str]]:
    refs = [c.reference for c in comparisons for _ in (0, 1)]
    hyps = [r for c in comparisons for r in (c.response_a, c.response_b)]
    return refs, hyps


def score_static(names: Sequence[str], comparisons: Sequence[Comparison]) -> dict[str, np.ndarray]:
    """(n, 2) scores of each comparison's (response_a, response_b) for each static metric in `names`
    (BERTScore and the embedding cosine share one pass of the encoder)."""
    for name in names:
        check_in("metric", name, STATIC_METRICS)
    refs, hyps = _pairs(comparisons)
    langs = [c.language for c in comparisons for _ in (0, 1)]
    rows = list(zip(refs, hyps, langs, strict=True))
    flat: dict[str, np.ndarray] = {}
    if any(n.startswith("rouge") for n in names):
        got = [rouge(r, h, lg) for r, h, lg in rows]
        flat |= {k: np.array([g[k] for g in got]) for k in ("rouge1", "rouge2", "rougeL")}
    if any(n.startswith("bertscore") or n == "embed_cosine" for n in names):
        flat |= encoder_scores(refs, hyps)
    for name in names:
        if name == "length":
            flat[name] = np.array([length(h, lg) for _, h, lg in rows], dtype=np.float64)
        elif name in ("bleu", "chrf"):
            flat[name] = np.array([_sacrebleu(name, r, h, lg) for r, h, lg in rows])
    return {n: np.asarray(flat[n], dtype=np.float64).reshape(len(comparisons), 2) for n in names}


__all__ = ["BERTSCORE_LAYER", "STATIC_METRICS", "encoder_scores", "length", "rouge", "score_static"]
