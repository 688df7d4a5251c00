"""The README's two figures: one example item per task with its answer marked, and accuracy by
quadrant for every model against the human and random lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from iclr26.core.records import pyplot, save_figure
from iclr26.spatial_dise.items import LETTERS, WIDTH, font, option_box
from iclr26.spatial_dise.records import Record


def marked(image: Image.Image, answer: str) -> Image.Image:
    """The item image with a green frame around the answer's option."""
    out = image.convert("RGB").copy()
    left, top, right, bottom = option_box(LETTERS.index(answer))
    ImageDraw.Draw(out).rectangle([left - 3, top - 3, right + 2, bottom + 30], outline=(0, 170, 60), width=4)
    return out


def example_sheet(records: Sequence[Record], root: Path | str, path: Path | str, *, columns: int = 2) -> Path:
    """A sheet of the first item of each task (question, options, the answer framed), as PNG."""
    root = Path(root)
    first: dict[str, Record] = {}
    for r in records:
        first.setdefault(r.category, r)
    tiles = []
    for r in first.values():
        item = marked(Image.open(root / r.image), r.answer)
        tile = Image.new("RGB", (WIDTH, item.height + 34), "white")
        tile.paste(item, (0, 34))
        caption = f"{r.category} · {r.dise_category} · {r.difficulty} · answer {r.answer}"
        ImageDraw.Draw(tile).text((10, 8), caption, fill="black", font=font(18))
        tiles.append(tile.resize((tile.width // 2, tile.height // 2), Image.Resampling.LANCZOS))
    rows = (len(tiles) + columns - 1) // columns
    w, h = tiles[0].size
    sheet = Image.new("RGB", (columns * w + (columns + 1) * 8, rows * h + (rows + 1) * 8), (235, 235, 235))
    for k, tile in enumerate(tiles):
        sheet.paste(tile, (8 + (k % columns) * (w + 8), 8 + (k // columns) * (h + 8)))
    path = Path(path)
    sheet.save(path)
    return path


def quadrant_chart(
    accuracy: Mapping[str, Mapping[str, float]],
    quadrants: Sequence[str],
    run_dir: Path | str,
    *,
    human: Mapping[str, float],
    random_line: float,
    name: str = "accuracy_by_quadrant",
) -> str:
    """Grouped bars (one group per quadrant, one bar per model), the human anchors as black ticks and
    random chance as a dashed line; `accuracy[model][quadrant]` in %."""
    plt = pyplot()
    models = list(accuracy)
    fig, ax = plt.subplots(figsize=(9, 5.0))
    width = 0.8 / max(1, len(models))
    x = np.arange(len(quadrants))
    for k, m in enumerate(models):
        values = [accuracy[m].get(q, np.nan) for q in quadrants]
        ax.bar(x - 0.4 + width * (k + 0.5), values, width, label=m)
    for i, q in enumerate(quadrants):
        if q in human:
            ax.hlines(
                human[q],
                i - 0.45,
                i + 0.45,
                colors="black",
                linewidth=2.5,
                label="human (paper)" if i == min(j for j, p in enumerate(quadrants) if p in human) else None,
            )
    ax.axhline(random_line, color="grey", linestyle="--", linewidth=1.2, label=f"random ({random_line:.1f}%)")
    ax.set_xticks(x, [q.replace("-", "-\n") for q in quadrants])
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.17), frameon=False)
    ax.set_title("Spatial-DISE bench: accuracy by quadrant")
    fig.tight_layout()
    return save_figure(fig, run_dir, name)
