"""Heuristic baselines on composed Spatial-DISE items (arXiv 2510.13394): they expose weak distractors.

Each baseline looks only at pixels of the panels that `items.crop_panels` cuts out of a composed
image, never at the question's meaning: `pixel_similarity` picks the option that looks most like
a question panel, `odd_one_out` the option least like the other three, `most_ink` / `least_ink`
the option with the most / least drawing. A benchmark whose distractors are well made keeps all
of them near `random_choice` (25%); one that beats chance clearly names a shortcut to fix.

Panels are compared as `grey_square` arrays: the panel in grey, its white margin trimmed, padded
to a square and resized, as ink in [0, 1] (0 = white paper), so a question panel and an option
panel drawn at different scales line up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from iclr26.core.errors import UserError
from iclr26.spatial_dise.items import LETTERS, crop_panels
from iclr26.spatial_dise.records import Record

BORDER = 3
"""Pixels trimmed from every crop edge (the option frame `compose` draws)."""
INK_LEVEL = 245
"""Grey levels below this are ink when trimming margins."""


@dataclass(frozen=True)
class Panels:
    """The question panels and the four option panels (A-D) of one item, as PIL images."""

    question: tuple[Image.Image, ...]
    options: tuple[Image.Image, ...]


def panels_of(image: Image.Image | np.ndarray, n_question: int) -> Panels:
    """The panels of a composed item image (PIL or an (H, W[, 3]) uint8 array)."""
    if not 1 <= n_question <= 3:
        raise ValueError(f"n_question must be 1, 2 or 3, got {n_question!r}")
    pil = image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image, dtype=np.uint8))
    qs, opts = crop_panels(pil.convert("RGB"), n_question)
    return Panels(tuple(qs), tuple(opts))


def load_panels(record: Record, image_root: Path | str) -> Panels:
    """The panels of a record's composed image under `image_root` (our rows: one image, its panel count)."""
    if record.n_question_panels is None or len(record.images) != 1:
        raise UserError(
            f"record {record.id!r}: pixel baselines need one composed image with n_question_panels "
            "(a row from our generator); this row has none"
        )
    path = record.image_paths(image_root)[0]
    if not path.is_file():
        raise UserError(f"record {record.id!r}: image file {path} does not exist")
    with Image.open(path) as im:
        return panels_of(im.convert("RGB"), record.n_question_panels)


def _grey(panel: Image.Image) -> np.ndarray:
    """The panel in grey levels 0-255 with `BORDER` pixels trimmed off each edge."""
    a = np.asarray(panel.convert("L"), dtype=np.uint8)
    if a.shape[0] > 2 * BORDER and a.shape[1] > 2 * BORDER:
        a = a[BORDER:-BORDER, BORDER:-BORDER]
    return a


def grey_square(panel: Image.Image, size: int = 64) -> np.ndarray:
    """The panel's drawing as ink in [0, 1], shape (size, size): margins trimmed, squared, resized."""
    a = _grey(panel)
    rows, cols = np.nonzero(a < INK_LEVEL)
    if rows.size == 0:
        return np.zeros((size, size), dtype=np.float32)
    a = a[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    h, w = a.shape
    side = max(h, w)
    square = np.full((side, side), 255, dtype=np.uint8)
    square[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = a
    small = Image.fromarray(square).resize((size, size), Image.Resampling.BILINEAR)
    return 1.0 - np.asarray(small, dtype=np.float32) / 255.0


def ink(panel: Image.Image) -> float:
    """The panel's mean ink (0 = blank white, 1 = all black)."""
    return float(1.0 - _grey(panel).mean() / 255.0)


Items = Sequence[Record | Panels]


def _panels(items: Items, image_root: Path | str | None) -> list[Panels]:
    out = []
    for it in items:
        if isinstance(it, Panels):
            out.append(it)
        elif image_root is None:
            raise ValueError("image_root is needed to load records' images; pass the CSV's folder")
        else:
            out.append(load_panels(it, image_root))
    return out


def random_choice(records: Sequence[object], seed: int = 0) -> list[str]:
    """A uniformly random letter per item (seeded)."""
    rng = np.random.default_rng(seed)
    return [LETTERS[int(k)] for k in rng.integers(len(LETTERS), size=len(records))]


def similarity_scores(p: Panels, size: int = 64) -> np.ndarray:
    """Per option: minus the mean absolute difference to the closest question panel."""
    qs = [grey_square(q, size) for q in p.question]
    return np.array([-min(float(np.abs(grey_square(o, size) - q).mean()) for q in qs) for o in p.options])


def oddness_scores(p: Panels, size: int = 32) -> np.ndarray:
    """Per option: distance of its features (pixels, ink) from the mean of the other three options'."""
    feats = np.stack([np.append(grey_square(o, size).ravel() / size, ink(o)) for o in p.options])
    return np.array(
        [np.linalg.norm(f - np.delete(feats, i, axis=0).mean(axis=0)) for i, f in enumerate(feats)]
    )


def _pick(items: Items, image_root: Path | str | None, score: Callable[[Panels], np.ndarray]) -> list[str]:
    """The letter of the highest-scoring option per item; ties (e.g. equal ink) are broken at random
    with a fixed seed, so a tie is chance, not always A."""
    rng = np.random.default_rng(0)
    letters = []
    for p in _panels(items, image_root):
        s = score(p)
        best = np.flatnonzero(np.isclose(s, s.max(), rtol=0, atol=1e-9))
        letters.append(LETTERS[int(best[rng.integers(len(best))])])
    return letters


def pixel_similarity(items: Items, *, image_root: Path | str | None = None, size: int = 64) -> list[str]:
    """The option most similar, pixel by pixel, to a question panel."""
    return _pick(items, image_root, lambda p: similarity_scores(p, size))


def odd_one_out(items: Items, *, image_root: Path | str | None = None, size: int = 32) -> list[str]:
    """The option farthest from the other three (the distractors are variations of one another)."""
    return _pick(items, image_root, lambda p: oddness_scores(p, size))


def least_similar(items: Items, *, image_root: Path | str | None = None, size: int = 64) -> list[str]:
    """The option least similar to every question panel (catches answers made unlike the question)."""
    return _pick(items, image_root, lambda p: -similarity_scores(p, size))


def medoid(items: Items, *, image_root: Path | str | None = None, size: int = 32) -> list[str]:
    """The option nearest the other three (catches distractors that are all edits of the answer)."""
    return _pick(items, image_root, lambda p: -oddness_scores(p, size))


def most_ink(items: Items, *, image_root: Path | str | None = None) -> list[str]:
    """The option with the most drawing."""
    return _pick(items, image_root, lambda p: np.array([ink(o) for o in p.options]))


def least_ink(items: Items, *, image_root: Path | str | None = None) -> list[str]:
    """The option with the least drawing."""
    return _pick(items, image_root, lambda p: -np.array([ink(o) for o in p.options]))


PIXEL_BASELINES: dict[str, Callable[..., list[str]]] = {
    "pixel_similarity": pixel_similarity,
    "least_similar": least_similar,
    "odd_one_out": odd_one_out,
    "medoid": medoid,
    "most_ink": most_ink,
    "least_ink": least_ink,
}
"""The image heuristics by name; each maps (items, image_root=...) to letters."""
