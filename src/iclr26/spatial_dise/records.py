"""Spatial-DISE dataset rows in the authors' CSV schema (arXiv 2510.13394; HF TACPS-liv/Spatial-DISE).

One row per item: `id, question, answer, image, category, difficulty, dise_category`, with the
answer a letter A-D, `image` one path (or several joined by ';') relative to the CSV's folder,
`category` the task (3d_rotation, 2d_rotation, fold_punch, ...) and `dise_category` one of the
four quadrants. Our generator adds `n_question_panels` (how many question panels the composed
image holds, for `items.crop_panels`).

`write_csv` writes our rows (strict: difficulty easy/medium/hard). `read_csv` reads ours and the
authors' release (lenient: column-name aliases, any difficulty string, unknown columns ignored),
and validates every row; bad input raises `RecordError` naming the file, the row and the field.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.errors import UserError
from iclr26.spatial_dise.items import DIFFICULTIES, LETTERS, QUADRANTS

CSV_COLUMNS = ("id", "question", "answer", "image", "category", "difficulty", "dise_category")
"""The authors' column order."""
EXTRA_COLUMNS = ("n_question_panels",)
"""Columns our generator adds after the authors' (optional on read)."""
REQUIRED = ("question", "answer", "image", "category", "dise_category")
"""Columns a CSV must have (the release may lack `id`, then rows are numbered, and `difficulty`)."""

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "item_id", "qid", "question_id", "uid", "index", "idx"),
    "question": ("question", "prompt", "query", "text", "question_text"),
    "answer": ("answer", "label", "correct", "correct_answer", "gt", "ground_truth", "answer_letter"),
    "image": (
        "image",
        "image_path",
        "images",
        "img",
        "image_paths",
        "img_path",
        "image_file",
        "path",
        "file",
    ),
    "category": ("category", "task", "task_name", "task_type", "type"),
    "difficulty": ("difficulty", "level", "difficulty_level"),
    "dise_category": ("dise_category", "dise", "quadrant", "dise_quadrant", "dise_type", "taxonomy"),
    "n_question_panels": ("n_question_panels", "question_panels", "n_question"),
}
"""Accepted header spellings (compared after lower-casing and turning spaces/hyphens into '_')."""

_QUADRANT_KEYS = {
    **{re.sub(r"[^a-z]", "", q.lower()): q for q in QUADRANTS},
    **{"".join(w[0] for w in q.lower().split("-")): q for q in QUADRANTS},
}
"""'intrinsicstatic' / 'is' -> 'Intrinsic-Static', and so on."""


class RecordError(UserError):
    """A Spatial-DISE CSV is malformed; the message names the file, the row and the field."""


def quadrant_name(value: str) -> str:
    """The canonical quadrant for an authors' spelling ('Intrinsic-Static', 'intrinsic_static', 'IS')."""
    key = re.sub(r"[^a-z]", "", value.lower())
    if key not in _QUADRANT_KEYS:
        raise ValueError(
            f"unknown quadrant {value!r}; expected one of {', '.join(QUADRANTS)} (or IS/ID/ES/ED)"
        )
    return _QUADRANT_KEYS[key]


def answer_letter(value: str) -> str:
    """'A', ' b ', '(C)', 'D.' -> the upper-case letter; anything else is refused."""
    m = re.fullmatch(r"\s*[(\[]?\s*([A-Da-d])\s*[)\].]?\s*", value)
    if m is None:
        raise ValueError(f"answer must be a letter A-D, got {value!r}")
    return m.group(1).upper()


@dataclass(frozen=True)
class Record:
    """One benchmark item as a CSV row; `image` is relative to the CSV's folder (';' joins several)."""

    id: str
    question: str
    answer: str  # A-D
    image: str
    category: str  # task name, e.g. 3d_rotation
    difficulty: str  # easy / medium / hard on ours; the release may hold other strings or ''
    dise_category: str  # one of items.QUADRANTS
    n_question_panels: int | None = None  # question panels in the composed image (ours only)

    def __post_init__(self) -> None:
        if self.answer not in LETTERS:
            raise ValueError(f"Record.answer must be one of {', '.join(LETTERS)}, got {self.answer!r}")
        if self.dise_category not in QUADRANTS:
            raise ValueError(
                f"Record.dise_category must be one of {', '.join(QUADRANTS)}, got {self.dise_category!r}"
            )
        if self.n_question_panels is not None and not 1 <= self.n_question_panels <= 3:
            raise ValueError(f"Record.n_question_panels must be 1-3 or None, got {self.n_question_panels!r}")

    @property
    def images(self) -> tuple[str, ...]:
        """The image paths of this row (one for a composed item, several for multi-image rows)."""
        return tuple(p.strip() for p in self.image.split(";") if p.strip())

    def image_paths(self, root: Path | str) -> list[Path]:
        """The image files under `root` (the CSV's folder)."""
        return [Path(root) / p for p in self.images]


def csv_text(records: Iterable[Record], *, strict: bool = True) -> str:
    """The CSV of `records` in our schema, '\\n' line endings (`strict`: difficulty easy/medium/hard)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow((*CSV_COLUMNS, *EXTRA_COLUMNS))
    for r in records:
        if strict and r.difficulty not in DIFFICULTIES:
            raise RecordError(
                f"record {r.id!r}: difficulty must be one of {', '.join(DIFFICULTIES)}, got {r.difficulty!r}"
            )
        n = "" if r.n_question_panels is None else str(r.n_question_panels)
        writer.writerow((r.id, r.question, r.answer, r.image, r.category, r.difficulty, r.dise_category, n))
    return buf.getvalue()


def write_csv(path: Path | str, records: Iterable[Record]) -> Path:
    """Write `records` to `path` (UTF-8, fixed column order, '\\n' endings: same records, same bytes)."""
    records = list(records)
    ids = [r.id for r in records]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise RecordError(f"{path}: record id {dup!r} appears more than once")
    write_text_atomic(path, csv_text(records))
    return Path(path)


def _header_map(path: Path, header: Sequence[str]) -> dict[str, int]:
    """Field name -> column index, through the aliases; checks the required columns."""
    normal = [re.sub(r"[\s\-]+", "_", h.strip().lower()) for h in header]
    found: dict[str, int] = {}
    for field, aliases in COLUMN_ALIASES.items():
        for alias in aliases:
            if alias in normal:
                found[field] = normal.index(alias)
                break
    missing = [f for f in REQUIRED if f not in found]
    if missing:
        raise RecordError(
            f"{path}: row 1 (header): missing required column {missing[0]!r} "
            f"(header is {', '.join(header)}; expected {', '.join(CSV_COLUMNS)})"
        )
    return found


def read_csv(path: Path | str, *, check_images: bool = True) -> list[Record]:
    """The records of a Spatial-DISE CSV (ours or the authors'), validated row by row.

    Rows are numbered as in a spreadsheet (the header is row 1). Ours (it has `n_question_panels`)
    must use easy/medium/hard; the release may hold any difficulty, kept lower-cased. With
    `check_images`, every image path must exist relative to the CSV's folder.
    """
    path = Path(path)
    if not path.is_file():
        raise RecordError(f"{path}: no such CSV file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise RecordError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:
        raise RecordError(f"{path}: unreadable CSV ({e})") from e
    if not rows:
        raise RecordError(f"{path}: row 1 (header): the file is empty")
    header, body = rows[0], rows[1:]
    cols = _header_map(path, header)
    ours = "n_question_panels" in cols
    records: list[Record] = []
    seen: set[str] = set()
    for k, row in enumerate(body, start=2):
        if not any(cell.strip() for cell in row):
            continue  # blank line
        if len(row) != len(header):
            raise RecordError(f"{path}: row {k}: has {len(row)} fields, the header has {len(header)}")

        def cell(field: str, row: list[str] = row) -> str:
            return row[cols[field]].strip() if field in cols else ""

        def bad(field: str, why: str, k: int = k) -> RecordError:
            return RecordError(f"{path}: row {k}, field {field!r}: {why}")

        rid = cell("id") if "id" in cols else f"{path.stem}_{k - 1:05d}"
        if ours and "id" not in cols:
            raise bad("id", "our CSVs carry an id column")
        if not rid:
            raise bad("id", "empty id")
        if rid in seen:
            raise bad("id", f"id {rid!r} appears more than once")
        seen.add(rid)
        try:
            answer = answer_letter(cell("answer"))
        except ValueError as e:
            raise bad("answer", str(e)) from None
        try:
            quadrant = quadrant_name(cell("dise_category"))
        except ValueError as e:
            raise bad("dise_category", str(e)) from None
        category = cell("category")
        if not category:
            raise bad("category", "empty task category")
        difficulty = cell("difficulty").lower()
        if ours and difficulty not in DIFFICULTIES:
            raise bad("difficulty", f"must be one of {', '.join(DIFFICULTIES)}, got {difficulty!r}")
        n_panels: int | None = None
        if cell("n_question_panels"):
            try:
                n_panels = int(cell("n_question_panels"))
            except ValueError:
                n_panels = 0
            if not 1 <= n_panels <= 3:
                raise bad("n_question_panels", f"must be 1, 2 or 3, got {cell('n_question_panels')!r}")
        record = Record(
            rid, row[cols["question"]], answer, cell("image"), category, difficulty, quadrant, n_panels
        )
        if not record.images:
            raise bad("image", "no image path")
        if check_images:
            for p in record.image_paths(path.parent):
                if not p.is_file():
                    raise bad("image", f"image file {p} does not exist")
        records.append(record)
    return records


def load_release(path: Path | str, *, check_images: bool = True) -> list[Record]:
    """The records of a downloaded release: a CSV file, or a folder holding test.csv (else its CSVs).

    In a folder, `test.csv` is looked for at the top, then in `dataset/`; failing that every `*.csv`
    there (sorted) is read and concatenated.
    """
    path = Path(path)
    if path.is_file():
        return read_csv(path, check_images=check_images)
    if not path.is_dir():
        raise RecordError(f"{path}: no such file or folder (give the release folder or its test.csv)")
    for candidate in (path / "test.csv", path / "dataset" / "test.csv"):
        if candidate.is_file():
            return read_csv(candidate, check_images=check_images)
    csvs = sorted(path.glob("*.csv")) or sorted((path / "dataset").glob("*.csv"))
    if not csvs:
        raise RecordError(f"{path}: no test.csv or other *.csv file in this folder or its dataset/ folder")
    return [r for c in csvs for r in read_csv(c, check_images=check_images)]
