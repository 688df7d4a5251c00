"""The build-up figure of sci_refine (Eigen-1, arXiv 2509.21193): accuracy per row as bars (and, beside
them, how often a gold passage was retrieved), tokens per question as a line on a second axis, the
paper's accuracy as hollow markers."""

from __future__ import annotations

from pathlib import Path

from iclr26.core import Table
from iclr26.core.records import pyplot, save_figure


def buildup_figure(table: Table, path: Path) -> str:
    """Draw the build-up table (`system._buildup_table`) to `path`; return its file name."""
    plt = pyplot()
    cols = table.columns
    rows = [r[cols.index("row")] for r in table.rows]
    acc = [r[cols.index("accuracy %")] for r in table.rows]
    tokens = [r[cols.index("tokens / question")] for r in table.rows]
    paper = [r[cols.index("paper accuracy %")] for r in table.rows]
    found = [r[cols.index("evidence retrieved %")] for r in table.rows]
    fig, ax = plt.subplots(figsize=(1.2 * len(rows) + 3, 4.2))
    x = list(range(len(rows)))
    ax.bar([i - 0.2 for i in x], acc, width=0.4, color="#4c72b0", label="accuracy here")
    ax.bar(
        [i + 0.2 for i in x],
        [f if isinstance(f, int | float) else 0 for f in found],
        width=0.4,
        color="#55a868",
        label="gold passage retrieved (needs-retrieval questions)",
    )
    ax.scatter(
        x, paper, facecolors="none", edgecolors="black", zorder=3, label="paper accuracy (HLE Bio/Chem)"
    )
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_xticks(x, [r.replace("_", " ") for r in rows], rotation=20)
    twin = ax.twinx()
    twin.plot(x, tokens, color="#dd8452", marker="o", label="tokens / question")
    twin.set_ylabel("tokens per question")
    twin.set_ylim(0, max([*tokens, 1]) * 1.15)
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], loc="upper left", fontsize=8)
    ax.set_title("Build-up: accuracy (bars) and tokens (line) per row")
    fig.tight_layout()
    return save_figure(fig, path.parent, path.stem)
