"""GLoW's figures: the best score against environment steps, one panel per game and one curve per
agent (the mean over seeds, a band from the lowest to the highest seed), on a log step axis so the
DRRN's far longer training budget fits beside the LLM agents' budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.ticker import FuncFormatter

from iclr26.core.records import pyplot, save_figure


def step_grid(curve: Sequence[Sequence[int]], grid: np.ndarray) -> np.ndarray:
    """The best score so far at each env-step count of `grid`, from (steps used, best) points; the
    score before the first point is the first point's (the start state's) score."""
    if not curve:
        return np.zeros(len(grid))
    steps = np.array([c[0] for c in curve], dtype=np.float64)
    best = np.maximum.accumulate(np.array([c[1] for c in curve], dtype=np.float64))
    idx = np.searchsorted(steps, grid, side="right") - 1
    out = best[np.clip(idx, 0, len(best) - 1)]
    return np.where(grid > steps[-1], best[-1], out)


def score_curves(runs: Sequence[Mapping[str, Any]], path: Path | str) -> str:
    """Best score against env steps per game; `runs` rows need agent, game, seed, curve, game_max_score."""
    if not runs:
        raise ValueError("score_curves: no runs to draw")
    path = Path(path)
    games = list(dict.fromkeys(r["game"] for r in runs))
    agents = list(dict.fromkeys(r["agent"] for r in runs))
    plt = pyplot()
    cols = min(len(games), 3)
    rows = -(-len(games) // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False, constrained_layout=True
    )
    for ax, game in zip(axes.flat, games, strict=False):
        mine = [r for r in runs if r["game"] == game]
        top = max(max((c[0] for c in r["curve"]), default=1) for r in mine)
        grid = np.unique(np.geomspace(1, max(top, 2), 200).astype(int))
        for k, agent in enumerate(agents):
            theirs = [r for r in mine if r["agent"] == agent]
            if not theirs:
                continue
            reach = max(max((c[0] for c in r["curve"]), default=1) for r in theirs)
            x = grid[grid <= reach]  # each agent only up to the steps it used (its own budget)
            ys = np.stack([step_grid(r["curve"], x) for r in theirs])
            ax.plot(x, ys.mean(0), color=f"C{k % 10}", label=agent, lw=2 if agent == "glow" else 1.3)
            ax.fill_between(x, ys.min(0), ys.max(0), color=f"C{k % 10}", alpha=0.15, lw=0)
        game_max = max(int(r["game_max_score"]) for r in mine)
        if game_max > 0:
            ax.axhline(game_max, color="0.5", ls=":", lw=1)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # plain labels, no mathtext
        ax.set_title(f"{game} (max {game_max})", fontsize=10)
        ax.set_xlabel("environment steps")
        ax.set_ylabel("best score so far")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(games) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 7), frameon=False)
    fig.suptitle("best score against environment steps (mean over seeds, band: lowest to highest seed)")
    return save_figure(fig, path.parent, path.stem)
