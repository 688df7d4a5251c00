"""Loaders, by local path, for the question sets Eigen-1 (arXiv 2509.21193) is evaluated on. Nothing is
downloaded.

- `load_authors_json`: the authors' files (`data/hle-bio.json`, `data/supergpqa-hard.json`,
  `data/trqa_lit_converted.json` in tangxiangru/Eigen-1): a JSON array of
  {id, query, gt, category, answer_type}, answer_type "multipleChoice" or "exactMatch" (our own names
  exact / multiple_choice / numeric are accepted too). Options are parsed from the query's lettered
  lines ("A. text" or "A: text").
- `load_hle`: Humanity's Last Exam as exported from its Hugging Face dataset (JSON array, JSON lines, or
  parquet when pandas is installed): {id, question, answer, answer_type, category, image, ...}. Items
  with an image are skipped, counted and warned about (the paper's runs are text-only).
- `load_supergpqa`: SuperGPQA records {uuid, question, options, answer_letter, answer, discipline,
  field, subfield, difficulty}; the query is written with lettered options, as the authors' file has.
- `load_trqa`: TRQA in the authors' converted form (multiple-answer multiple choice: gt such as "BCD").

Each returns a list of `Question`s; every error is a `LoaderError` naming the file, the record (its id,
else its index) and the problem.
"""

from __future__ import annotations

import contextlib
import json
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.jsonfile import read_json, read_jsonl
from iclr26.sci_refine.question import ANSWER_TYPES, Passage, Question

__all__ = [
    "ANSWER_TYPE_NAMES",
    "FORMATS",
    "LoaderError",
    "load_authors_json",
    "load_hle",
    "load_questions",
    "load_supergpqa",
    "load_trqa",
    "parse_choices",
]

ANSWER_TYPE_NAMES = {
    "multipleChoice": "multiple_choice",
    "exactMatch": "exact",
    **{name: name for name in ANSWER_TYPES},
}
"""answer_type as written in the files -> ours"""
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_OPTION_LINE = re.compile(r"^\s*([A-Z])\s*[.:)](?:\s+(.*?))?\s*$")


class LoaderError(UserError, ValueError):
    """A question file or record that cannot be used; the message names the file, record and field."""


def _where(path: Path, i: int, rec: object, key: str = "id") -> str:
    rid = rec.get(key) if isinstance(rec, dict) else None
    return f"{path.name}: record {rid!r}" if rid not in (None, "") else f"{path.name}: record #{i}"


def _read_records(path: str | Path) -> tuple[Path, list[Any]]:
    """The records of a JSON array, a JSON-lines file, or (with pandas) a parquet file."""
    path = Path(path)
    if not path.exists():
        raise LoaderError(f"{path}: no such file")
    if path.is_dir():
        raise LoaderError(f"{path}: is a folder; give the question file itself")
    if path.suffix == ".parquet":
        try:
            import pandas as pd
        except ImportError:
            raise LoaderError(f"{path}: reading parquet needs pandas (pip install pandas pyarrow)") from None
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several kinds
            raise LoaderError(f"{path}: not a readable parquet file ({type(exc).__name__}: {exc})") from None
        return path, frame.to_dict(orient="records")
    if path.suffix == ".jsonl":
        return path, [rec for _, rec in read_jsonl(path, LoaderError)]
    doc = read_json(path, LoaderError)
    if isinstance(doc, dict):  # {"data": [...]} or {"test": [...]}, as some exports write
        lists = [v for v in doc.values() if isinstance(v, list)]
        if len(lists) == 1:
            doc = lists[0]
    if not isinstance(doc, list):
        raise LoaderError(f"{path}: expected a JSON array of question records, got {type(doc).__name__}")
    return path, doc


def _text(path: Path, i: int, rec: dict[str, Any], key: str, required: bool = True) -> str:
    value = rec.get(key)
    if value is None or (isinstance(value, float) and value != value):  # missing, or NaN from parquet
        if required:
            raise LoaderError(f"{_where(path, i, rec)}: missing field {key!r}")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise LoaderError(f"{_where(path, i, rec)}: field {key!r} should be text, got {type(value).__name__}")
    return str(value).strip()


def _gold(path: Path, i: int, rec: dict[str, Any], key: str) -> str:
    gt = _text(path, i, rec, key, required=False)
    if not gt:
        raise LoaderError(f"{_where(path, i, rec)}: no gold answer (field {key!r} is missing or empty)")
    return gt


def _answer_type(path: Path, i: int, rec: dict[str, Any], key: str = "answer_type") -> str:
    raw = _text(path, i, rec, key)
    if raw not in ANSWER_TYPE_NAMES:
        raise LoaderError(
            f"{_where(path, i, rec)}: unknown answer_type {raw!r}; "
            f"expected one of {', '.join(ANSWER_TYPE_NAMES)}"
        )
    return ANSWER_TYPE_NAMES[raw]


def parse_choices(query: str) -> tuple[str, ...]:
    """The options of the last lettered list in the query: lines starting "A." / "A:" / "A)", then B, C,
    ... in order; an option runs on to the next option's line (options may span lines). () if none."""
    lines = query.splitlines()
    starts = [(n, m) for n, line in enumerate(lines) if (m := _OPTION_LINE.match(line))]
    runs: list[list[tuple[int, re.Match[str]]]] = []
    for n, m in starts:
        if runs and m.group(1) == LETTERS[len(runs[-1])]:
            runs[-1].append((n, m))
        elif m.group(1) == "A":
            runs.append([(n, m)])
    runs = [r for r in runs if len(r) >= 2]
    if not runs:
        return ()
    run = runs[-1]
    out = []
    for k, (n, m) in enumerate(run):
        end = run[k + 1][0] if k + 1 < len(run) else len(lines)
        out.append("\n".join([m.group(2) or "", *lines[n + 1 : end]]).strip())
    return tuple(out)


def _check_letters(
    path: Path, i: int, rec: dict[str, Any], gt: str, choices: Sequence[str], multi: bool
) -> str:
    letters = re.sub(r"[\s,;]", "", gt).upper()
    ok = re.fullmatch(r"[A-Z]+" if multi else r"[A-Z]", letters) is not None
    if ok and choices:
        ok = all(LETTERS.index(c) < len(choices) for c in letters)
    if not ok:
        allowed = f"A-{LETTERS[len(choices) - 1]}" if choices else "A-Z"
        what = "one or more option letters" if multi else "one option letter"
        raise LoaderError(f"{_where(path, i, rec)}: multiple-choice gold {gt!r} is not {what} ({allowed})")
    return letters


def _filtered(questions: Iterable[Question], categories: Sequence[str] | None) -> list[Question]:
    if categories is None:
        return list(questions)
    wanted = {c.lower() for c in categories}
    return [
        q for q in questions if q.category.lower() in wanted or q.category.split("/")[0].lower() in wanted
    ]


def _unique(qid: str, seen: set[str], path: Path, i: int, rec: object) -> str:
    """`qid`, added to `seen`; a LoaderError naming the record when it is already there."""
    if qid in seen:
        raise LoaderError(f"{_where(path, i, rec)}: duplicate id {qid!r} (question ids must be unique)")
    seen.add(qid)
    return qid


def load_authors_json(
    path: str | Path, categories: Sequence[str] | None = None, multi_answer: bool = False
) -> list[Question]:
    """Questions from the authors' JSON ({id, query, gt, category, answer_type}); `categories` keeps only
    those whose category (or its part before '/') is listed; `multi_answer` allows golds like 'BCD'."""
    path, records = _read_records(path)
    out, seen = [], set()
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise LoaderError(f"{path.name}: record #{i} is a {type(rec).__name__}, not an object")
        qid = _unique(_text(path, i, rec, "id", required=False) or f"{path.stem}-{i}", seen, path, i, rec)
        query = _text(path, i, rec, "query")
        if not query:
            raise LoaderError(f"{_where(path, i, rec)}: empty query")
        gt, kind = _gold(path, i, rec, "gt"), _answer_type(path, i, rec)
        choices: tuple[str, ...] = ()
        if kind == "multiple_choice":
            choices = parse_choices(query)
            gt = _check_letters(path, i, rec, gt, choices, multi_answer)
        elif kind == "numeric":
            try:
                float(gt)
            except ValueError:
                raise LoaderError(f"{_where(path, i, rec)}: numeric gold {gt!r} is not a number") from None
        category = _text(path, i, rec, "category", required=False)
        out.append(Question(qid, query, gt, kind, category, None, choices))
    return _filtered(out, categories)


def load_trqa(path: str | Path) -> list[Question]:
    """TRQA in the authors' converted form (multiple-answer multiple choice; gold letters such as 'BCD')."""
    return load_authors_json(path, multi_answer=True)


def load_hle(path: str | Path, categories: Sequence[str] | None = None) -> list[Question]:
    """Humanity's Last Exam from its exported JSON / JSON lines / parquet, text-only items (those with an
    image are skipped with a warning); `categories`, e.g. ("Biology/Medicine", "Chemistry") for the
    paper's HLE Bio/Chem."""
    path, records = _read_records(path)
    out, skipped, seen = [], 0, set()
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise LoaderError(f"{path.name}: record #{i} is a {type(rec).__name__}, not an object")
        if _text(path, i, rec, "image", required=False):
            skipped += 1
            continue
        qid = _unique(_text(path, i, rec, "id", required=False) or f"hle-{i}", seen, path, i, rec)
        query = _text(path, i, rec, "question")
        gt, kind = _gold(path, i, rec, "answer"), _answer_type(path, i, rec)
        choices: tuple[str, ...] = ()
        if kind == "multiple_choice":
            choices = parse_choices(query)
            gt = _check_letters(path, i, rec, gt, choices, multi=False)
        out.append(Question(qid, query, gt, kind, _text(path, i, rec, "category", False), None, choices))
    if skipped:
        warnings.warn(
            f"{path.name}: skipped {skipped} item(s) with an image (text-only evaluation)", stacklevel=2
        )
    return _filtered(out, categories)


def _options(path: Path, i: int, rec: dict[str, Any]) -> list[str]:
    options = rec.get("options")
    if hasattr(options, "tolist"):  # a numpy array, from parquet
        options = options.tolist()
    if isinstance(options, str):  # some exports store the list as its JSON text
        with contextlib.suppress(json.JSONDecodeError):
            options = json.loads(options)
    if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
        raise LoaderError(f"{_where(path, i, rec, 'uuid')}: field 'options' should be a list of 2+ strings")
    if len(options) > len(LETTERS):
        raise LoaderError(f"{_where(path, i, rec, 'uuid')}: {len(options)} options, more than {len(LETTERS)}")
    return [o.strip() for o in options]


def load_supergpqa(
    path: str | Path, fields: Sequence[str] | None = None, difficulty: str | None = None
) -> list[Question]:
    """SuperGPQA records as multiple-choice questions; `fields` (e.g. ("Biology",)) and `difficulty`
    (e.g. "hard", as the authors' supergpqa-hard) filter them."""
    path, records = _read_records(path)
    out, seen = [], set()
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise LoaderError(f"{path.name}: record #{i} is a {type(rec).__name__}, not an object")
        where = _where(path, i, rec, "uuid")
        qid = _unique(
            _text(path, i, rec, "uuid", required=False)
            or _text(path, i, rec, "id", False)
            or f"supergpqa-{i}",
            seen,
            path,
            i,
            rec,
        )
        question = _text(path, i, rec, "question")
        options = _options(path, i, rec)
        letter = _text(path, i, rec, "answer_letter", required=False).upper()
        if not letter:  # fall back to the answer's text among the options
            answer = _text(path, i, rec, "answer", required=False)
            if not answer:
                raise LoaderError(f"{where}: no gold answer (fields 'answer_letter' and 'answer' are empty)")
            if answer not in options:
                raise LoaderError(f"{where}: answer {answer!r} is not among the options and no answer_letter")
            letter = LETTERS[options.index(answer)]
        if len(letter) != 1 or letter not in LETTERS[: len(options)]:
            raise LoaderError(
                f"{where}: answer_letter {letter!r} is not one of A-{LETTERS[len(options) - 1]}"
            )
        field, subfield = _text(path, i, rec, "field", False), _text(path, i, rec, "subfield", False)
        if fields is not None and field.lower() not in {f.lower() for f in fields}:
            continue
        if difficulty is not None and _text(path, i, rec, "difficulty", False).lower() != difficulty.lower():
            continue
        query = (
            question
            + "\n\nAnswer Choices:\n"
            + "\n".join(f"{LETTERS[k]}. {o}" for k, o in enumerate(options))
        )
        category = "/".join(p for p in (field, subfield) if p) or _text(path, i, rec, "discipline", False)
        out.append(Question(qid, query, letter, "multiple_choice", category, None, tuple(options)))
    return out


FORMATS: dict[str, Callable[[str | Path], list[Question]]] = {
    "authors": load_authors_json,
    "hle": load_hle,
    "supergpqa": load_supergpqa,
    "trqa": load_trqa,
}
"""format name -> loader"""


def load_questions(path: str | Path, fmt: str = "authors") -> list[Question]:
    """Questions from `path` in format `fmt` (one of FORMATS)."""
    if fmt not in FORMATS:
        raise LoaderError(f"unknown question format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return FORMATS[fmt](path)


def load_corpus(path: str | Path) -> list[Passage]:
    """A corpus file by path: a JSON list of paragraph strings (as the authors' paragraphs.json) or of
    {"id", "text"} records (ids default to c00000, c00001, ...)."""
    path = Path(path)
    data = read_json(path, LoaderError)
    if not isinstance(data, list):
        raise LoaderError(f"{path}: a corpus must be a JSON list of paragraphs, got {type(data).__name__}")
    out = []
    for i, rec in enumerate(data):
        if isinstance(rec, str):
            pid, text = f"c{i:05d}", rec
        elif isinstance(rec, dict) and isinstance(rec.get("text"), str):
            pid, text = str(rec.get("id", f"c{i:05d}")), rec["text"]
        else:
            raise LoaderError(f"{path}: paragraph {i} is neither a string nor an object with 'text'")
        if text.strip():
            out.append(Passage(pid, text.strip(), str(rec.get("topic", "")) if isinstance(rec, dict) else ""))
    if not out:
        raise LoaderError(f"{path}: the corpus is empty")
    return out
