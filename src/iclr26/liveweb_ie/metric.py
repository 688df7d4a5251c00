"""LiveWeb-IE's metric: precision, recall and F1 over value sets.

For one (query, page): each attribute's extracted values are matched one-to-one against its
ground-truth values after `normalise`; P = matched / extracted, R = matched / gold, F1 their
harmonic mean (both empty: 1; one empty: 0). The (query, page) score is the mean over the
query's attributes; scores are macro-averaged over (query, page) pairs, per type and overall.

Normalisation (stated in the README, tested in tests/liveweb_ie/test_metric.py):
- Unicode NFKC, lowercase, whitespace runs collapsed and the ends stripped;
- URLs (values of link and image attributes, or anything with a scheme): the scheme and host are
  dropped, and leading `../` and `./` and `/` are stripped, so `../../media/a.jpg`,
  `/media/a.jpg` and `https://host/media/a.jpg` are equal;
- a value ending in "..." (or "…") matches a value that starts with its text before the dots
  (titles shortened on listing pages).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

_SPACE = re.compile(r"\s+")
_DOTS = ("...", "\u2026")


def normalise(value: str, *, url: bool = False) -> str:
    """The comparable form of one value (see the module docstring)."""
    v = _SPACE.sub(" ", unicodedata.normalize("NFKC", str(value))).strip().lower()
    if url or re.match(r"^[a-z][a-z0-9+.-]*://", v):
        parts = urlsplit(v)
        if parts.scheme and parts.netloc:
            v = parts.path + (f"?{parts.query}" if parts.query else "")
        while v.startswith(("../", "./", "/")):
            v = v[3:] if v.startswith("../") else v[2:] if v.startswith("./") else v[1:]
    return v


def _stem(v: str) -> str | None:
    """The text before a trailing "..." (None when the value is not truncated)."""
    for d in _DOTS:
        if v.endswith(d):
            return v[: -len(d)].rstrip()
    return None


def same(pred: str, gold: str) -> bool:
    """Whether two normalised values match: equal, or one is the other truncated with "..."."""
    if pred == gold:
        return True
    for a, b in ((pred, gold), (gold, pred)):
        stem = _stem(a)
        if stem and b.startswith(stem):
            return True
    return False


@dataclass(frozen=True)
class PRF:
    """Precision, recall, F1 (fractions in [0, 1])."""

    precision: float
    recall: float
    f1: float


def match_count(pred: Sequence[str], gold: Sequence[str]) -> int:
    """Values matched one-to-one (greedy: exact matches first, then "..." prefix matches)."""
    left = list(gold)
    rest = []
    n = 0
    for p in pred:
        if p in left:
            left.remove(p)
            n += 1
        else:
            rest.append(p)
    for p in rest:
        hit = next((g for g in left if same(p, g)), None)
        if hit is not None:
            left.remove(hit)
            n += 1
    return n


def prf(pred: Iterable[str], gold: Iterable[str], *, url: bool = False) -> PRF:
    """P/R/F1 of one attribute's extracted values against the gold ones (normalised; empty values dropped)."""
    p = [v for v in (normalise(x, url=url) for x in pred) if v]
    g = [v for v in (normalise(x, url=url) for x in gold) if v]
    if not p and not g:
        return PRF(1.0, 1.0, 1.0)
    if not p or not g:
        return PRF(0.0, 0.0, 0.0)
    m = match_count(p, g)
    precision, recall = m / len(p), m / len(g)
    f1 = 0.0 if m == 0 else 2 * precision * recall / (precision + recall)
    return PRF(precision, recall, f1)


def page_score(pred: dict[str, list[str]], gold: dict[str, list[str]], url_attrs: Iterable[str] = ()) -> PRF:
    """One (query, page): the mean over the query's attributes (the keys of `gold`)."""
    if not gold:
        raise ValueError("page_score needs at least one gold attribute")
    urls = set(url_attrs)
    scores = [prf(pred.get(a, []), g, url=a in urls) for a, g in gold.items()]
    return mean_prf(scores)


def mean_prf(scores: Sequence[PRF]) -> PRF:
    """The macro average of several scores (NaN-free: an empty list raises)."""
    if not scores:
        raise ValueError("mean_prf of no scores")
    k = len(scores)
    return PRF(
        sum(s.precision for s in scores) / k, sum(s.recall for s in scores) / k, sum(s.f1 for s in scores) / k
    )
