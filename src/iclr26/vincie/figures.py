"""VINCIE's figures: one benchmark session turn by turn (instructions, the model's images and masks,
the truth, pass or fail), and success at turn k per method."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from iclr26.core.records import pyplot, save_figure


def session_figure(
    instructions: Sequence[str],
    truth: np.ndarray,
    images: Sequence[np.ndarray],
    masks_current: Sequence[np.ndarray | None],
    masks_next: Sequence[np.ndarray | None],
    passed: Sequence[bool],
    run_dir: Path | str,
    name: str = "session",
) -> str:
    """Columns: the source, then each turn; rows: truth, the model's image, its current and next
    masks. Titles carry the instruction and PASS/FAIL."""
    turns = len(images)
    plt = pyplot()
    fig, axes = plt.subplots(4, turns + 1, figsize=(2.0 * (turns + 1), 8.6), squeeze=False)
    labels = ("truth", "model", "current mask", "next mask")
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0, 0].imshow(truth[0], interpolation="nearest")
    axes[0, 0].set_title("source I₀", fontsize=8)
    axes[1, 0].imshow(truth[0], interpolation="nearest")
    for r, label in enumerate(labels):
        axes[r, 0].set_ylabel(label, fontsize=9)
    for k in range(turns):
        col = k + 1
        verdict = "PASS" if passed[k] else "FAIL"
        title = "\n".join(textwrap.wrap(f"{k + 1}. {instructions[k]}", 22)) + f"\n[{verdict}]"
        axes[0, col].set_title(title, fontsize=7, color="green" if passed[k] else "red")
        axes[0, col].imshow(truth[k + 1], interpolation="nearest")
        axes[1, col].imshow(np.clip(images[k], 0, 1), interpolation="nearest")
        for r, m in ((2, masks_current[k]), (3, masks_next[k])):
            if m is not None:
                axes[r, col].imshow(m, cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    for r in (2, 3):
        axes[r, 0].axis("off")
        axes[r, 0].text(
            0.5, 0.5, labels[r], ha="center", va="center", fontsize=9, transform=axes[r, 0].transAxes
        )
    return save_figure(fig, run_dir, name)


def success_figure(
    success: Mapping[str, Sequence[float]], run_dir: Path | str, name: str = "success_at_turn"
) -> str:
    """Cumulative success at turn k = 1..K, one line per method."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 3.8), constrained_layout=True)
    for method, values in success.items():
        ax.plot(range(1, len(values) + 1), [100 * v for v in values], marker="o", label=method)
    ax.set_xlabel("turn k")
    ax.set_ylabel("success at turn k (%)")
    ax.set_xticks(range(1, max(len(v) for v in success.values()) + 1))
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, run_dir, name)
