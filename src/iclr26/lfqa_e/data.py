"""LFQA-E comparisons and their two released layouts, read from a local path (nothing is
downloaded).

- The unified release (`YuchenFan48/LFQA-E`, `data/unified_benchmark*.json`): a JSON array of
  {id, question, context, reference, response_a, response_b, compare_type, label}, with an optional
  `type` (the topic; English files only). `label` is `response_a`, `response_b` or `same`.
- The older layout (`ChenLing03/LFQA-E`, `data/*_test.json`, `LFQA-E-en.json`): one record per pair
  with `Concise_Reference`, the answers under `student_answer_a|b` (human) and `model_answer_a|b`,
  and one `X_vs_Y` key whose value names the better field, or says `equal`/`same`.

Both become `Comparison`s. Every error names the file, the record (its id, else its index) and the
field.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iclr26.core.errors import UserError

LABELS = ("response_a", "response_b", "same")
"""the three classes: the first response is better, the second is, or they are equal"""
COMPARE_TYPES = ("human_vs_human", "human_vs_model", "model_vs_model")
LANGUAGES = ("en", "zh")
OLD_ANSWER_FIELDS = ("student_answer_a", "student_answer_b", "model_answer_a", "model_answer_b")
_TIE_WORDS = ("same", "equal", "tie")
_CJK = re.compile(r"[\u4e00-\u9fff]")


class DataError(UserError, ValueError):
    """A comparison file or record that cannot be used; the message names the record and field."""


@dataclass(frozen=True)
class Comparison:
    """One pairwise human judgement: which of two long-form answers is better, given the reference."""

    id: str
    question: str
    reference: str
    response_a: str
    response_b: str
    label: str
    """response_a, response_b or same"""
    compare_type: str = "model_vs_model"
    context: str = ""
    language: str = "en"
    topic: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)
    """how a built-here pair was made (the edits on each side); empty for released data"""

    def swapped(self) -> Comparison:
        """The same comparison with the two responses in the other order (the label follows)."""
        flip = {"response_a": "response_b", "response_b": "response_a", "same": "same"}
        meta = dict(self.meta)
        for key in self.meta:  # every per-side entry (edits_a / edits_b, quality_a / quality_b, ...)
            if key.endswith("_a") and key[:-2] + "_b" in self.meta:
                meta[key], meta[key[:-2] + "_b"] = self.meta[key[:-2] + "_b"], self.meta[key]
        return Comparison(
            self.id, self.question, self.reference, self.response_b, self.response_a, flip[self.label],
            self.compare_type, self.context, self.language, self.topic, meta,
        )  # fmt: skip


def guess_language(*texts: str) -> str:
    """'zh' when CJK characters make up a fifth of the letters, else 'en'."""
    text = "".join(texts)
    letters = sum(ch.isalpha() for ch in text) or 1
    return "zh" if len(_CJK.findall(text)) / letters > 0.2 else "en"


def _where(path: Path, i: int, rec: object) -> str:
    rid = rec.get("id") if isinstance(rec, dict) else None
    return f"{path.name}: record {rid!r}" if rid not in (None, "") else f"{path.name}: record #{i}"


def _text(rec: dict, key: str, where: str, *, allow_empty: bool = False) -> str:
    if key not in rec:
        raise DataError(f"{where}: missing field {key!r}")
    value = rec[key]
    if value is None and allow_empty:
        return ""
    if not isinstance(value, str):
        raise DataError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise DataError(f"{where}: field {key!r} is empty")
    return value


def _unified(rec: dict, where: str, language: str | None) -> Comparison:
    label = _text(rec, "label", where).strip()
    if label not in LABELS:
        raise DataError(f"{where}: field 'label' must be one of {', '.join(LABELS)}, got {label!r}")
    ctype = _text(rec, "compare_type", where).strip()
    if ctype not in COMPARE_TYPES:
        raise DataError(
            f"{where}: field 'compare_type' must be one of {', '.join(COMPARE_TYPES)}, got {ctype!r}"
        )
    q, ref = _text(rec, "question", where), _text(rec, "reference", where)
    a, b = _text(rec, "response_a", where), _text(rec, "response_b", where)
    return Comparison(
        str(rec.get("id") or where), q, ref, a, b, label, ctype,
        _text(rec, "context", where, allow_empty=True) if "context" in rec else "",
        language or guess_language(q, ref), str(rec.get("type") or ""),
    )  # fmt: skip


def _old(rec: dict, where: str, language: str | None) -> Comparison:
    keys = [k for k in rec if "_vs_" in k]
    if len(keys) != 1:
        raise DataError(f"{where}: expected one 'X_vs_Y' field naming the pair, found {keys or 'none'}")
    key = keys[0]
    left, right = key.split("_vs_", 1)
    for side in (left, right):
        if side not in OLD_ANSWER_FIELDS:
            allowed = ", ".join(OLD_ANSWER_FIELDS)
            raise DataError(f"{where}: field {key!r} names {side!r}, not one of {allowed}")
    verdict = _text(rec, key, where).strip().lower()
    if verdict == left:
        label = "response_a"
    elif verdict == right:
        label = "response_b"
    elif any(w in verdict for w in _TIE_WORDS):
        label = "same"
    else:
        raise DataError(f"{where}: field {key!r} must name {left!r}, {right!r} or a tie, got {verdict!r}")
    human = [s.startswith("student") for s in (left, right)]
    ctype = COMPARE_TYPES[2 - sum(human)]  # two humans, one, or none
    ref_key = "Concise_Reference" if "Concise_Reference" in rec else "reference"
    q, ref = _text(rec, "question", where), _text(rec, ref_key, where)
    return Comparison(
        str(rec.get("id") or where), q, ref, _text(rec, left, where), _text(rec, right, where), label,
        ctype, "", language or guess_language(q, ref), str(rec.get("type") or ""), {"pair": key},
    )  # fmt: skip


def parse_records(
    records: object, source: str = "<records>", language: str | None = None
) -> list[Comparison]:
    """Comparisons from already-parsed JSON (a list of records in either layout)."""
    path = Path(source)
    if isinstance(records, dict):  # a wrapper object holding the list
        lists = [v for v in records.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise DataError(f"{path.name}: expected a JSON array of records, got an object")
        records = lists[0]
    if not isinstance(records, list):
        raise DataError(f"{path.name}: expected a JSON array of records, got {type(records).__name__}")
    if language is not None and language not in LANGUAGES:
        raise DataError(f"language must be one of {', '.join(LANGUAGES)}, got {language!r}")
    out = []
    for i, rec in enumerate(records):
        where = _where(path, i, rec)
        if not isinstance(rec, dict):
            raise DataError(f"{where}: expected an object, got {type(rec).__name__}")
        out.append(_unified(rec, where, language) if "response_a" in rec else _old(rec, where, language))
    if not out:
        raise DataError(f"{path.name}: holds no records")
    return out


def load_comparisons(path: str | Path, language: str | None = None) -> list[Comparison]:
    """Every comparison in a release file (either layout; JSON array or JSON lines); `language`
    overrides the per-record guess."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        records: object = json.loads(text)
    except json.JSONDecodeError as e:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines or not lines[0].lstrip().startswith("{"):
            raise DataError(f"{path.name}: not JSON ({e.msg} at line {e.lineno})") from None
        records = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as le:
                    raise DataError(f"{path.name}: line {n} is not JSON ({le.msg})") from None
    return parse_records(records, str(path), language)


def save_comparisons(comparisons: Iterable[Comparison], path: str | Path) -> Path:
    """Write comparisons in the unified release schema (plus `language` and `meta`)."""
    rows = [
        {
            "id": c.id, "question": c.question, "context": c.context, "type": c.topic,
            "reference": c.reference, "response_a": c.response_a, "response_b": c.response_b,
            "compare_type": c.compare_type, "label": c.label, "language": c.language, "meta": c.meta,
        }
        for c in comparisons
    ]  # fmt: skip
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def split_by_question(
    comparisons: Sequence[Comparison], train_share: float, seed: int = 0
) -> tuple[list[Comparison], list[Comparison]]:
    """(train, test): a seeded `train_share` of the questions and all their comparisons go to train,
    so no question is in both."""
    questions = sorted({c.question for c in comparisons})
    random.Random(seed).shuffle(questions)
    train_q = set(questions[: round(train_share * len(questions))])
    train = [c for c in comparisons if c.question in train_q]
    return train, [c for c in comparisons if c.question not in train_q]


def label_counts(comparisons: Sequence[Comparison]) -> dict[str, int]:
    """How many comparisons carry each label."""
    return {lab: sum(c.label == lab for c in comparisons) for lab in LABELS}


__all__ = [
    "COMPARE_TYPES",
    "LABELS",
    "LANGUAGES",
    "Comparison",
    "DataError",
    "guess_language",
    "label_counts",
    "load_comparisons",
    "parse_records",
    "save_comparisons",
    "split_by_question",
]
