"""Figures for token reliability in sign-language translation ("Grounding or Guessing? Token
Reliability for Sign Language Translation", ICLR 2026, arXiv 2510.18439).

- `token_figure`: example translations with each hypothesis word drawn as a box coloured by its
  reliability r_t (red = 0, guessed from the text; green = 1, grounded in the video), hallucinated
  entities (words not in the reference) outlined in black, the reference above, one colour bar;
- `roc_figure`: ROC curves of hallucination detection (a sentence is hallucinated when CHAIR > 0),
  one panel per model, one line per signal (grounding, confidence, META, s_hid, ...) with its AUC;
- `degradation_figure`: the mean sentence score R (solid) and the share of hallucinated sentences
  (dashed, twin axis) against the strength of a video degradation, one panel per degradation kind.

Each takes the output `path` (a `.png`) and returns its file name, as `save_figure` does.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.core.records import pyplot, save_figure

CMAP = "RdYlGn"  # 0 = red (guessed) ... 1 = green (grounded)
ROW_CHARS = 72  # a row of word boxes wraps at this many monospace characters
CHAR_IN = 0.085  # width of one monospace character at FONT_SIZE, inches
LINE_IN = 0.30  # height of one text line / box row, inches
FONT_SIZE = 10
BOX_PAD = 0.6  # characters of padding inside a box, both sides together
BOX_GAP = 0.6  # characters between boxes
DEGRADATION_KEYS = ("degradation", "strength", "model", "reliability", "hallucinated")


@dataclass(frozen=True)
class TokenExample:
    """One translation to draw: the hypothesis `words` with their reliabilities r_t in [0, 1], the
    `reference` words, and per word whether it is a hallucinated entity (`flagged`, () = none)."""

    title: str  # e.g. "hallucinated (CHAIR 0.50), R = 0.21"
    words: tuple[str, ...]  # the hypothesis words
    reliability: tuple[float, ...]  # r_t per word, same length as words, in [0, 1]
    reference: tuple[str, ...]  # the reference translation words
    flagged: tuple[bool, ...] = ()  # per word: a hallucinated entity (not in the reference)

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", tuple(str(w) for w in self.words))
        object.__setattr__(self, "reliability", tuple(float(r) for r in self.reliability))
        object.__setattr__(self, "reference", tuple(str(w) for w in self.reference))
        object.__setattr__(self, "flagged", tuple(bool(f) for f in self.flagged))
        if len(self.words) != len(self.reliability):
            raise ValueError(
                f"example {self.title!r}: {len(self.words)} words but {len(self.reliability)} reliability "
                "values; give one r_t per word"
            )
        if self.flagged and len(self.flagged) != len(self.words):
            raise ValueError(
                f"example {self.title!r}: {len(self.words)} words but {len(self.flagged)} flagged values; "
                "give one per word or ()"
            )
        bad = [r for r in self.reliability if not (0.0 <= r <= 1.0)]  # NaN fails the comparison too
        if bad:
            raise ValueError(f"example {self.title!r}: reliability must be in [0, 1] (not NaN), got {bad[0]}")


@dataclass(frozen=True)
class RocCurve:
    """One ROC curve: false- and true-positive rates (same length, in [0, 1]) and its AUC (NaN = n/a)."""

    fpr: np.ndarray
    tpr: np.ndarray
    auc: float

    def __post_init__(self) -> None:
        fpr = np.asarray(self.fpr, dtype=float).ravel()
        tpr = np.asarray(self.tpr, dtype=float).ravel()
        if fpr.shape != tpr.shape or fpr.size == 0:
            raise ValueError(
                f"RocCurve: fpr and tpr need the same non-zero length, got {fpr.size} and {tpr.size}"
            )
        for name, v in (("fpr", fpr), ("tpr", tpr)):
            if not np.all((v >= 0.0) & (v <= 1.0)):
                raise ValueError(f"RocCurve: {name} must lie in [0, 1] (not NaN)")
        auc = float(self.auc)
        if not (math.isnan(auc) or 0.0 <= auc <= 1.0):
            raise ValueError(f"RocCurve: auc must be in [0, 1] or NaN, got {auc}")
        object.__setattr__(self, "fpr", fpr)
        object.__setattr__(self, "tpr", tpr)
        object.__setattr__(self, "auc", auc)


def _png(path: Path | str) -> Path:
    """The output path, checked to be a `.png` file name that `save_figure` accepts."""
    p = Path(path)
    if p.suffix != ".png":
        raise ValueError(f"figure path must end in .png, got {str(path)!r}")
    return p


def _save(fig: Any, path: Path) -> str:
    """Save `fig` at `path` (via `save_figure`) and return `path.name`."""
    return save_figure(fig, path.parent, path.stem)


def _fit(word: str, width: int = ROW_CHARS) -> str:
    """A word that fits one row: longer ones are cut with an ellipsis."""
    room = width - math.ceil(BOX_PAD)
    return word if len(word) <= room else word[: room - 1] + "…"


def _layout(words: Sequence[str]) -> list[tuple[int, float, float, str]]:
    """(row, x, width, shown text) per word, in characters: boxes fill rows left to right and wrap at
    `ROW_CHARS`."""
    out, row, x = [], 0, 0.0
    for w in words:
        shown = _fit(w)
        width = len(shown) + BOX_PAD
        if x > 0 and x + width > ROW_CHARS:
            row, x = row + 1, 0.0
        out.append((row, x, width, shown))
        x += width + BOX_GAP
    return out


def _text_colour(rgba: Sequence[float]) -> str:
    """Black or white text, whichever reads better on the box colour."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def token_figure(examples: Sequence[TokenExample], path: Path | str) -> str:
    """Tokens coloured by reliability: per example its title, the reference, then the hypothesis words
    as boxes coloured by r_t (red 0 = guessed, green 1 = grounded), hallucinated entities outlined in
    black; one shared colour bar. Saves a PNG at `path` and returns `path.name`."""
    if not examples:
        raise ValueError("token_figure: examples is empty; give at least one TokenExample")
    path = _png(path)
    plt = pyplot()
    from matplotlib.colors import Normalize

    cmap, norm = plt.get_cmap(CMAP), Normalize(0.0, 1.0)
    blocks = []  # (example, reference lines, box layout, rows)
    for ex in examples:
        ref = textwrap.wrap(" ".join(ex.reference), ROW_CHARS - len("reference: ")) or [""]
        boxes = _layout(ex.words)
        blocks.append((ex, ref, boxes, (boxes[-1][0] + 1) if boxes else 1))
    lines = sum(1 + len(ref) + rows + 0.8 for _, ref, _, rows in blocks)  # title + ref + boxes + gap
    cbar_in, width_in = 0.9, ROW_CHARS * CHAR_IN + 0.4
    height_in = lines * LINE_IN + cbar_in
    fig = plt.figure(figsize=(width_in, height_in))
    ax = fig.add_axes((0.02, cbar_in / height_in, 0.96, 1 - cbar_in / height_in))
    ax.set_xlim(-0.5, ROW_CHARS + 0.5)
    ax.set_ylim(lines, 0)
    ax.axis("off")
    text = {"family": "monospace", "fontsize": FONT_SIZE, "va": "center"}
    y = 0.5
    for ex, ref, boxes, rows in blocks:
        ax.text(0, y, ex.title, fontweight="bold", ha="left", **text)
        y += 1
        for k, line in enumerate(ref):
            ax.text(0, y, ("reference: " if k == 0 else " " * 11) + line, ha="left", color="0.35", **text)
            y += 1
        if not boxes:
            ax.text(0, y, "(empty hypothesis)", ha="left", color="0.5", style="italic", **text)
        flagged = ex.flagged or (False,) * len(ex.words)
        for (row, x, w, shown), r, hit in zip(boxes, ex.reliability, flagged, strict=True):
            colour = cmap(norm(r))
            yy = y + row
            ax.add_patch(
                plt.Rectangle(
                    (x, yy - 0.38),
                    w,
                    0.76,
                    fc=colour,
                    ec="black" if hit else "0.6",
                    lw=2.0 if hit else 0.5,
                )
            )
            ax.text(x + w / 2, yy, shown, ha="center", color=_text_colour(colour), **text)
        y += rows + 0.8
    cax = fig.add_axes((0.2, 0.45 * cbar_in / height_in, 0.6, 0.18 * cbar_in / height_in))
    bar = fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), cax=cax, orientation="horizontal")
    bar.set_label("token reliability r_t (0 = guessed, 1 = grounded); outlined = hallucinated entity")
    return _save(fig, path)


def roc_figure(curves: Mapping[str, Mapping[str, RocCurve]], path: Path | str) -> str:
    """ROC curves of hallucination detection: one panel per model (`curves[model][signal]`), one line
    per signal with its AUC in the legend, the chance diagonal dashed. Saves a PNG at `path` and returns
    `path.name`."""
    if not curves:
        raise ValueError("roc_figure: curves is empty; give {model: {signal: RocCurve}}")
    for model, signals in curves.items():
        if not signals:
            raise ValueError(f"roc_figure: model {model!r} has no curves; give {{signal: RocCurve}}")
        for signal, c in signals.items():
            if not isinstance(c, RocCurve):
                raise ValueError(
                    f"roc_figure: curves[{model!r}][{signal!r}] is {type(c).__name__}, not RocCurve"
                )
    path = _png(path)
    signals_seen = list(dict.fromkeys(s for sig in curves.values() for s in sig))
    colours = {s: f"C{k % 10}" for k, s in enumerate(signals_seen)}
    n = len(curves)
    cols = 2 if n == 4 else min(n, 3)  # 2 x 2 for the two datasets x two architectures
    rows = math.ceil(n / cols)
    plt = pyplot()
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.2 * cols, 4.2 * rows), squeeze=False, constrained_layout=True
    )
    for ax, (model, signals) in zip(axes.flat, curves.items(), strict=False):
        ax.plot([0, 1], [0, 1], ls="--", color="0.6", lw=1, label="chance")
        for signal, c in signals.items():
            auc = "n/a" if math.isnan(c.auc) else f"{c.auc:.3f}"
            lw = 2.2 if signal == "grounding" else 1.4
            ax.plot(c.fpr, c.tpr, color=colours[signal], lw=lw, label=f"{signal} (AUC {auc})")
        ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="false-positive rate", ylabel="true-positive rate")
        ax.set_title(model, fontsize=10)
        ax.set_aspect("equal")
        ax.legend(loc="lower right", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle("hallucination detection (CHAIR > 0)", fontsize=11)
    return _save(fig, path)


def _number(value: Any, i: int, key: str) -> float:
    """`value` as a float, or a ValueError naming the row and key."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"degradation_figure: row {i} has {key} {value!r}, not a number") from None


def _check_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    """Every row has the keys, a finite strength and scores in [0, 1]; no (kind, model, strength) twice."""
    if not rows:
        raise ValueError("degradation_figure: rows is empty; give one row per (degradation, model, strength)")
    seen = set()
    for i, row in enumerate(rows):
        missing = [k for k in DEGRADATION_KEYS if k not in row]
        if missing:
            raise ValueError(
                f"degradation_figure: row {i} is missing key {missing[0]!r} (needs {DEGRADATION_KEYS})"
            )
        if not math.isfinite(_number(row["strength"], i, "strength")):
            raise ValueError(
                f"degradation_figure: row {i} has strength {row['strength']}, not a finite number"
            )
        for k in ("reliability", "hallucinated"):
            if not 0.0 <= _number(row[k], i, k) <= 1.0:
                raise ValueError(f"degradation_figure: row {i} has {k} {row[k]}, must be in [0, 1] (not NaN)")
        key = (str(row["degradation"]), str(row["model"]), float(row["strength"]))
        if key in seen:
            raise ValueError(f"degradation_figure: row {i} repeats (degradation, model, strength) = {key}")
        seen.add(key)


def degradation_figure(rows: Sequence[Mapping[str, Any]], path: Path | str) -> str:
    """Reliability against degradation strength: one panel per `row["degradation"]`, x = `row["strength"]`,
    one colour per `row["model"]`: the mean sentence score R (`row["reliability"]`, solid) and, on a twin
    axis, the hallucinated share (`row["hallucinated"]`, dashed); the clean video (strength 0, or factor 1
    when strengths start at 1) marked dotted. Saves a PNG at `path` and returns `path.name`."""
    _check_rows(rows)
    path = _png(path)
    kinds = list(dict.fromkeys(str(r["degradation"]) for r in rows))
    models = list(dict.fromkeys(str(r["model"]) for r in rows))
    colours = {m: f"C{k % 10}" for k, m in enumerate(models)}
    plt = pyplot()
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(
        1, len(kinds), figsize=(4.4 * len(kinds), 3.6), squeeze=False, constrained_layout=True
    )
    for ax, kind in zip(axes.flat, kinds, strict=True):
        twin = ax.twinx()
        strengths = sorted({float(r["strength"]) for r in rows if str(r["degradation"]) == kind})
        clean = 0.0 if 0.0 in strengths else 1.0 if strengths[0] == 1.0 else None
        if clean is not None:
            ax.axvline(clean, color="0.6", ls=":", lw=1)
        for m in models:
            pts = sorted(
                (float(r["strength"]), float(r["reliability"]), float(r["hallucinated"]))
                for r in rows
                if str(r["degradation"]) == kind and str(r["model"]) == m
            )
            if not pts:
                continue
            x, rel, hal = (list(v) for v in zip(*pts, strict=True))
            ax.plot(x, rel, color=colours[m], ls="-", marker="o", ms=4)
            twin.plot(x, hal, color=colours[m], ls="--", marker="s", ms=3.5, alpha=0.85)
        ax.set(ylim=(-0.02, 1.02), xlabel=f"{kind} strength", ylabel="mean sentence score R (solid)")
        twin.set(ylim=(-0.02, 1.02), ylabel="hallucinated share (dashed)")
        ax.set_title(kind + ("" if clean is None else f" (clean = {clean:g})"), fontsize=10)
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colours[m], lw=2, label=m) for m in models]
    handles += [
        Line2D([], [], color="0.3", ls="-", label="reliability R"),
        Line2D([], [], color="0.3", ls="--", label="hallucinated share"),
    ]
    fig.legend(
        handles=handles, loc="outside lower center", ncol=min(len(handles), 6), fontsize=8, frameon=False
    )
    return _save(fig, path)
