"""Scoring replies on Spatial-DISE (arXiv 2510.13394): letter parsing, accuracy with Wilson CIs.

The paper asks every model for one letter ("Please respond with only one letter: A, B, C, or
D.") and reports accuracy per task, per quadrant and overall against two anchors: random choice
(24.8%) and humans (76.8%). `parse_letter` reads the letter out of a messy reply (markdown,
"Answer: D.", a <think> block, "option c"); a reply with no letter, or two ("A or B"), counts as
wrong and is logged. `evaluate` scores any predictor; `vlm_predictor` asks a `ChatModel`.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iclr26.core.intervals import wilson_interval
from iclr26.core.llm import ChatModel, user_message
from iclr26.spatial_dise.items import PROMPT_SUFFIX
from iclr26.spatial_dise.records import Record

log = logging.getLogger(__name__)

RANDOM = 0.248
"""The paper's random-choice accuracy (24.8%)."""
HUMAN = 0.768
"""The paper's human accuracy, overall (76.8%)."""
HUMAN_BY_QUADRANT = {"Intrinsic-Dynamic": 0.802, "Extrinsic-Dynamic": 0.611, "Intrinsic-Static": 0.768}
"""Human accuracy per quadrant, where the paper states it (Extrinsic-Static is not given)."""


# ---------------------------------------------------------------------------------------------
# Letter parsing
# ---------------------------------------------------------------------------------------------

_LONE = re.compile(r"[\s\W_]*([A-Da-d])[\s\W_]*")
"""The whole reply is one letter, perhaps with punctuation: 'B', '(c).', '**A**'."""
_BOXED = re.compile(r"\\boxed\s*\{\s*(?:\\text\s*\{)?\s*\(?([A-Da-d])\)?\s*\}?\s*\}")
_FINAL = re.compile(
    r"\b(?:final\s+answer|answer|correct\s+(?:option|choice|answer|one)|right\s+(?:option|choice|answer))"
    r"\s*(?:is|would\s+be|should\s+be|must\s+be|:|=|-|–)?\s*(?:option|choice|letter)?\s*[:\-]?\s*"
    r"(?P<open>[(\[{]?)\s*(?P<letter>[A-Da-d])\b(?!['’]\w)",
    re.IGNORECASE,
)
"""'Answer: D', 'the answer is (B)', 'correct option is c.'."""
_NAMED = re.compile(
    r"\b(?:(?P<noun>option|choice|letter)|choose|select|pick|go(?:ing)?\s+with|it['’]s)"
    r"\s*[:\-]?\s*(?P<open>[(\[{]?)\s*(?P<letter>[A-Da-d])\b(?!['’]\w)",
    re.IGNORECASE,
)
"""'option c', 'I'd go with B', 'choose (d)'."""
_BARE = re.compile(r"(?<![\w'’])(?:\((?P<paren>[A-Da-d])\)|(?P<letter>[A-D]))(?![\w'’])")
"""Stand-alone capital letters and parenthesised letters anywhere in the reply."""
_PUNCT_AFTER = re.compile(r"\s*(?:$|[.,;:!?)\]}\n])")
_EITHER = re.compile(r"\s*(?:or|/|and|,)\s*(?:option\s*)?[(\[]?\s*[A-Da-d]\b(?![\w'’])", re.IGNORECASE)
_ARTICLE_FOLLOWERS = {
    "or",
    "and",
    "nor",
    "is",
    "was",
    "seems",
    "looks",
    "appears",
    "matches",
    "fits",
    "shows",
}


def _final_part(reply: str) -> str:
    """The reply after any <think>...</think> block; an unclosed <think> drops the rest."""
    text = reply.rsplit("</think>", 1)[-1]
    if "<think>" in text:
        text = text.split("<think>", 1)[0]
    return text


def _lowercase_ok(text: str, m: re.Match[str]) -> bool:
    """A lower-case letter counts only where it cannot be the article 'a' (or a word): it is in
    brackets, or followed by punctuation / the end."""
    letter = m.group("letter")
    if letter.isupper() or m.group("open"):
        return True
    return _PUNCT_AFTER.match(text, m.end()) is not None


def _unique(letters: list[str]) -> str | None:
    """The one letter named, or None when none or several different ones are named."""
    distinct = set(letters)
    return letters[0] if len(distinct) == 1 else None


def parse_letter(reply: str) -> str | None:
    """The option letter a reply gives (upper case), or None when it gives none or is ambiguous.

    In order: a reply that is just a letter; `\\boxed{X}`; the last 'answer is X' / 'Answer: X';
    a single letter named as 'option X' / 'go with X'; a single stand-alone capital letter or
    '(x)'. The sentence-initial article 'A' ('A cube...') and the lower-case 'a' of prose are
    not letters; 'A or B' is ambiguous.
    """
    if not isinstance(reply, str):
        return None
    text = _final_part(reply)
    text = re.sub(r"[*_`#]+", " ", text).strip()  # markdown emphasis and code
    if not text:
        return None
    if m := _LONE.fullmatch(text):
        return m.group(1).upper()
    if boxed := _BOXED.findall(text):
        return boxed[-1].upper()
    finals = [m for m in _FINAL.finditer(text) if _lowercase_ok(text, m)]
    if finals:
        last = finals[-1]
        return None if _EITHER.match(text, last.end()) else last.group("letter").upper()
    named = [
        m
        for m in _NAMED.finditer(text)
        if m.group("noun") or m.group("letter").isupper() or _lowercase_ok(text, m)
    ]
    if named:
        if any(_EITHER.match(text, m.end()) for m in named):
            return None
        return _unique([m.group("letter").upper() for m in named])
    bare: list[str] = []
    for m in _BARE.finditer(text):
        if m.group("paren"):
            bare.append(m.group("paren").upper())
            continue
        if m.group("letter") == "A":
            follower = re.match(r"\s+([a-z]+)", text[m.end() :])
            if follower and follower.group(1) not in _ARTICLE_FOLLOWERS:
                continue  # "A cube ..." is the article
        bare.append(m.group("letter"))
    return _unique(bare)


# ---------------------------------------------------------------------------------------------
# Accuracy
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Accuracy:
    """`correct` of `total` right, `unparsed` of them with no readable letter (counted wrong)."""

    correct: int
    total: int
    unparsed: int = 0

    @property
    def value(self) -> float:
        """The accuracy (nan with no items)."""
        return self.correct / self.total if self.total else math.nan

    @property
    def ci(self) -> tuple[float, float]:
        """The Wilson 95% interval of the accuracy."""
        return wilson_interval(self.correct, self.total)

    def __str__(self) -> str:
        lo, hi = self.ci
        return f"{100 * self.value:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] (n={self.total})"


@dataclass(frozen=True)
class Prediction:
    """One scored item: the reply, the letter read from it (None: unparsed) and the verdict."""

    id: str
    reply: str
    letter: str | None
    answer: str

    @property
    def correct(self) -> bool:
        return self.letter == self.answer


@dataclass
class Evaluation:
    """Accuracy overall and per task (`category`), quadrant and difficulty."""

    predictions: list[Prediction]
    overall: Accuracy
    by_task: dict[str, Accuracy] = field(default_factory=dict)
    by_quadrant: dict[str, Accuracy] = field(default_factory=dict)
    by_difficulty: dict[str, Accuracy] = field(default_factory=dict)

    def rows(self) -> list[tuple[str, str, float, float, float, int]]:
        """(group, key, accuracy, ci_low, ci_high, n) rows: overall, then quadrants, tasks, difficulties."""
        out = [("overall", "all", self.overall.value, *self.overall.ci, self.overall.total)]
        for group, table in (
            ("quadrant", self.by_quadrant),
            ("task", self.by_task),
            ("difficulty", self.by_difficulty),
        ):
            out += [(group, key, acc.value, *acc.ci, acc.total) for key, acc in table.items()]
        return out


def _accuracy(preds: Sequence[Prediction]) -> Accuracy:
    return Accuracy(sum(p.correct for p in preds), len(preds), sum(p.letter is None for p in preds))


def _grouped(
    records: Sequence[Record], preds: Sequence[Prediction], key: Callable[[Record], str]
) -> dict[str, Accuracy]:
    groups: dict[str, list[Prediction]] = {}
    for r, p in zip(records, preds, strict=True):
        groups.setdefault(key(r), []).append(p)
    return {k: _accuracy(groups[k]) for k in sorted(groups)}


Predictor = Callable[[Record], str]
"""Maps a record to a reply (any text) or a letter."""


def evaluate(
    records: Sequence[Record], predict: Predictor | Sequence[str | None], *, log_unparsed: int = 3
) -> Evaluation:
    """Score `predict` (a function of a record, or one reply per record) on `records`.

    Replies go through `parse_letter`; one without a letter counts as wrong; the first
    `log_unparsed` of those are logged as warnings (record id, first 80 characters), then a count.
    Errors the predictor raises (an unreachable server, a text-only model asked about images)
    propagate.
    """
    records = list(records)
    if callable(predict):
        replies = [predict(r) for r in records]
    else:
        replies = list(predict)
        if len(replies) != len(records):
            raise ValueError(
                f"predict holds {len(replies)} replies for {len(records)} records; give one per record"
            )
    preds, unparsed = [], []
    for r, reply in zip(records, replies, strict=True):
        text = "" if reply is None else str(reply)
        letter = parse_letter(text)
        if letter is None:
            unparsed.append((r.id, text))
        preds.append(Prediction(r.id, text, letter, r.answer))
    for rid, text in unparsed[:log_unparsed]:
        log.warning("no answer letter for %s: %r", rid, text[:80])
    if len(unparsed) > log_unparsed > 0:
        log.warning(
            "... and %d more replies with no answer letter (counted wrong)", len(unparsed) - log_unparsed
        )
    return Evaluation(
        predictions=preds,
        overall=_accuracy(preds),
        by_task=_grouped(records, preds, lambda r: r.category),
        by_quadrant=_grouped(records, preds, lambda r: r.dise_category),
        by_difficulty=_grouped(records, preds, lambda r: r.difficulty or "unknown"),
    )


def prompt_text(record: Record) -> str:
    """The record's question with the paper's one-letter instruction (added if not already there)."""
    q = record.question.strip()
    return q if PROMPT_SUFFIX in q else f"{q} {PROMPT_SUFFIX}"


def vlm_predictor(
    model: ChatModel, *, image_root: Path | str, max_tokens: int = 16, temperature: float = 0.0
) -> Predictor:
    """A predictor that asks `model` each question with the record's image(s) attached.

    One user message per record (the question, then its images from `image_root`), greedy
    (temperature 0), a few tokens; returns the reply text for `evaluate` to parse. A text-only
    backend refuses images with `LLMUnsupported`, which propagates with its message.
    """
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    root = Path(image_root)

    def predict(record: Record) -> str:
        message = user_message(prompt_text(record), *record.image_paths(root))
        completions = model.chat([message], temperature=temperature, max_tokens=max_tokens)  # type: ignore[list-item]
        return completions[0].text if completions else ""

    return predict


__all__ = [
    "HUMAN",
    "HUMAN_BY_QUADRANT",
    "RANDOM",
    "Accuracy",
    "Evaluation",
    "Prediction",
    "evaluate",
    "parse_letter",
    "prompt_text",
    "vlm_predictor",
    "wilson_interval",
]
