"""The static metrics (the paper's first family, §4.1): each response is scored against the
reference alone, and a pair's preference is the side with the higher score.

- length (words in English, characters in Chinese): the paper's length baseline;
- ROUGE-1/2/L F-measure (`rouge-score`; Porter stemming in English, characters in Chinese);
- sentence BLEU, chrF and TER (`sacrebleu`; its `zh` tokenizer for Chinese; TER is negated so
  that higher is better);
- BERTScore precision, recall and F1 (`bert-score`) on the local all-MiniLM-L6-v2 (its sixth,
  last layer; no idf weighting);
- embedding cosine between the response and the reference (`core.embed`, the same encoder's
  mean-pooled sentence vectors).

`score_static(name, comparisons)` returns the (n, 2) scores of (response_a, response_b); the tie
rule that turns them into preferences lives in `preference.py`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

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
    "ter",
    "bertscore_p",
    "bertscore_r",
    "bertscore_f1",
    "embed_cosine",
)
BERTSCORE_LAYER = 6  # all-MiniLM-L6-v2 has six layers; bert-score needs the layer for a local path
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
    if kind == "chrf":
        return sacrebleu.sentence_chrf(response, [reference]).score
    if language == "zh":  # TER splits on spaces only: give it one token per character
        tok = _CharTokenizer().tokenize
        reference, response = " ".join(tok(reference)), " ".join(tok(response))
    return -sacrebleu.sentence_ter(response, [reference]).score


@functools.cache
def bertscorer(batch_size: int = 16):
    """The cached BERTScorer on the local MiniLM (its folder from `core.embed.model_dir`)."""
    import bert_score

    from iclr26.core.embed import model_dir

    return bert_score.BERTScorer(
        model_type=str(model_dir()), num_layers=BERTSCORE_LAYER, batch_size=batch_size, device="cpu"
    )


def _pairs(comparisons: Sequence[Comparison]) -> tuple[list[str], list[str]]:
    refs = [c.reference for c in comparisons for _ in (0, 1)]
    hyps = [r for c in comparisons for r in (c.response_a, c.response_b)]
    return refs, hyps


def _embed_cosine(refs: list[str], hyps: list[str]) -> np.ndarray:
    from iclr26.core.embed import embed

    unique = sorted(set(refs) | set(hyps))
    vec = embed(unique)
    row = {t: i for i, t in enumerate(unique)}
    return np.array([float(vec[row[a]] @ vec[row[b]]) for a, b in zip(refs, hyps, strict=True)])


def score_static(names: Sequence[str], comparisons: Sequence[Comparison]) -> dict[str, np.ndarray]:
    """(n, 2) scores of each comparison's (response_a, response_b) for each static metric in `names`
    (BERTScore's three numbers come from one pass of the encoder)."""
    for name in names:
        check_in("metric", name, STATIC_METRICS)
    refs, hyps = _pairs(comparisons)
    langs = [c.language for c in comparisons for _ in (0, 1)]
    rows = list(zip(refs, hyps, langs, strict=True))
    flat: dict[str, np.ndarray] = {}
    if any(n.startswith("rouge") for n in names):
        got = [rouge(r, h, lg) for r, h, lg in rows]
        flat |= {k: np.array([g[k] for g in got]) for k in ("rouge1", "rouge2", "rougeL")}
    if any(n.startswith("bertscore") for n in names):
        p, r, f = bertscorer().score(hyps, refs)
        flat |= {"bertscore_p": p.numpy(), "bertscore_r": r.numpy(), "bertscore_f1": f.numpy()}
    for name in names:
        if name == "length":
            flat[name] = np.array([length(h, lg) for _, h, lg in rows], dtype=np.float64)
        elif name in ("bleu", "chrf", "ter"):
            one: Callable[[str, str, str], float] = functools.partial(_sacrebleu, name)
            flat[name] = np.array([one(r, h, lg) for r, h, lg in rows])
        elif name == "embed_cosine":
            flat[name] = _embed_cosine(refs, hyps)
    return {n: np.asarray(flat[n], dtype=np.float64).reshape(len(comparisons), 2) for n in names}


__all__ = ["BERTSCORE_LAYER", "STATIC_METRICS", "bertscorer", "length", "rouge", "score_static"]
