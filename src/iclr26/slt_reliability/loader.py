"""Real sign-language data from a local folder: per-sample keypoint or feature `.npy` files plus a
PHOENIX-2014T annotation CSV (arXiv 2510.18439 evaluates on PHOENIX-2014T and CSL-Daily).

The CSV is PHOENIX's: '|'-separated, a header `name|video|start|end|speaker|orth|translation` (only
`name`, `orth` and `translation` are required), `orth` the glosses separated by spaces, `translation`
the text. The arrays are read with `np.load(allow_pickle=False)`, never pickle:

- (T, K, 2) keypoints are kept; (T, K, 3) keypoints (x, y, confidence) lose the confidence;
- (T, D) features become (T, D, 1), so a model that flattens the last two axes sees D inputs.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from iclr26.core.errors import UserError
from iclr26.core.validation import check_in
from iclr26.slt_reliability.data import Corpus, Sample, build_corpus

__all__ = ["SPLITS", "load_keypoint_corpus", "load_keypoint_dataset", "read_annotations", "read_entities"]

SPLITS = ("train", "dev", "test")
_REQUIRED = ("name", "orth", "translation")
_WORD = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")


def _find_csv(root: Path, split: str) -> Path:
    candidates = [
        *sorted(root.glob(f"*.{split}.corpus.csv")),
        *sorted((root / "annotations" / "manual").glob(f"*.{split}.corpus.csv")),
    ]
    if not candidates:
        raise UserError(
            f"no annotation file *.{split}.corpus.csv in {root} or {root / 'annotations' / 'manual'};"
            " put PHOENIX-2014-T.{split}.corpus.csv there or pass annotations="
        )
    return candidates[0]


def _signer(speaker: str, known: dict[str, int]) -> int:
    """'Signer05' -> 5; a speaker without digits gets the next free id (in file order)."""
    digits = re.findall(r"\d+", speaker)
    if digits:
        return int(digits[-1])
    return known.setdefault(speaker, 1000 + len(known))


def read_annotations(path: Path) -> list[dict[str, str]]:
    """The rows of a PHOENIX-style '|'-separated CSV as dicts; a one-line `UserError` naming the file and
    line for a missing column, a row with the wrong number of fields or an empty gloss/translation."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"annotation file not found: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise UserError(f"{path}: empty annotation file; expected a header {'|'.join(_REQUIRED)}|...")
    header = [h.strip() for h in lines[0].split("|")]
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise UserError(
            f"{path}:1: header {'|'.join(header)!r} lacks column(s) {', '.join(missing)}; expected"
            " name|video|start|end|speaker|orth|translation"
        )
    rows = []
    for i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != len(header):
            raise UserError(
                f"{path}:{i}: malformed row: {len(fields)} '|'-separated fields, expected {len(header)}"
                f" ({'|'.join(header)})"
            )
        row = dict(zip(header, (f.strip() for f in fields), strict=True))
        for col in _REQUIRED:
            if not row[col]:
                raise UserError(f"{path}:{i}: malformed row {row['name'] or '?'!r}: empty {col}")
        rows.append(row)
    return rows


def read_entities(path: str | Path) -> frozenset[str]:
    """Entity words from a text file, one per line (lower-cased; blank lines and '#' comments skipped)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"entity file not found: {path}")
    lines = (w.strip().lower() for w in path.read_text(encoding="utf-8").splitlines())
    return frozenset(w for w in lines if w and not w.startswith("#"))


def _load_array(path: Path, where: str) -> np.ndarray:
    try:
        x = np.load(path, allow_pickle=False)
    except ValueError as err:  # object arrays need pickle
        raise UserError(
            f"{where}: {path} cannot be read without pickle ({err}); save a numeric array"
        ) from None
    except OSError as err:
        raise UserError(f"{where}: {path} is not a valid .npy file ({err})") from None
    if not isinstance(x, np.ndarray) or x.dtype.kind not in "fiu":
        raise UserError(f"{where}: {path} holds {getattr(x, 'dtype', type(x))}, expected a numeric array")
    if x.ndim == 3 and x.shape[-1] in (2, 3):
        x = x[..., :2]
    elif x.ndim == 2:
        x = x[..., None]
    else:
        raise UserError(
            f"{where}: {path} has shape {x.shape} (rank {x.ndim}); expected (T, K, 2) or (T, K, 3) keypoints"
            " or (T, D) features"
        )
    if len(x) == 0:
        raise UserError(f"{where}: {path} has no frames")
    x = x.astype(np.float32)
    if not np.isfinite(x).all():
        frame = int(np.nonzero(~np.isfinite(x))[0][0])
        raise UserError(
            f"{where}: {path} contains NaN or infinite values (first at frame {frame} of {len(x)});"
            " interpolate or drop the missing keypoints"
        )
    return x


def load_keypoint_dataset(
    root: str | Path,
    split: str,
    *,
    annotations: str | Path | None = None,
    arrays: str | Path | None = None,
    entity_file: str | Path | None = None,
    dataset: str = "phoenix",
) -> list[Sample]:
    """The samples of `split` ("train", "dev" or "test") of a local PHOENIX-style folder.

    annotations: the CSV (default: the one `*.{split}.corpus.csv` in root or root/annotations/manual);
    arrays: the folder of `{name}.npy` files (default: the first of root/{split}, root/keypoints/{split},
    root/features/{split} that exists); entity_file: entity words, one per line ('#' comments), else
    every sample's `entities` is empty. Texts are lower-cased and stripped of punctuation; glosses are
    upper-cased. Sample ids are "{dataset}/{split}/{name}".
    """
    root = Path(root)
    check_in("split", split, SPLITS)
    if not root.is_dir():
        raise UserError(f"data folder not found: {root}")
    csv = Path(annotations) if annotations is not None else _find_csv(root, split)
    if arrays is not None:
        npy_dir = Path(arrays)
    else:
        dirs = [root / split, root / "keypoints" / split, root / "features" / split]
        npy_dir = next((d for d in dirs if d.is_dir()), dirs[0])
    entities = read_entities(entity_file) if entity_file is not None else frozenset()
    speakers: dict[str, int] = {}
    samples = []
    for i, row in enumerate(read_annotations(csv), start=2):
        name = row["name"]
        where = f"{csv.name} row {name!r}"
        npy = npy_dir / f"{name}.npy"
        if not npy.is_file():
            raise UserError(f"{where}: keypoint file not found: {npy}")
        text = tuple(_WORD.findall(row["translation"].lower()))
        if not text:
            raise UserError(f"{csv}:{i}: malformed row {name!r}: translation has no words")
        words = tuple(row["orth"].upper().split())
        samples.append(
            Sample(
                id=f"{dataset}/{split}/{name}",
                keypoints=_load_array(npy, where),
                glosses=words,
                text=text,
                entities=frozenset(text) & entities,
                signer=_signer(row.get("speaker", ""), speakers),
                dataset=dataset,
            )
        )
    return samples


def load_keypoint_corpus(
    root: str | Path, *, entity_file: str | Path | None = None, dataset: str = "phoenix"
) -> Corpus:
    """The three splits of a local folder as a `Corpus` (vocabularies from the splits)."""
    splits = {s: load_keypoint_dataset(root, s, entity_file=entity_file, dataset=dataset) for s in SPLITS}
    entity_words = read_entities(entity_file) if entity_file is not None else frozenset()
    return build_corpus(dataset, splits["train"], splits["dev"], splits["test"], entity_words)
