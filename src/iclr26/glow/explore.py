"""Non-LLM exploration baselines for GLoW (arXiv 2509.24116, "3. Baselines" of issue 25).

- `random_agent`: a uniformly random valid action each step, with a reset every `episode_steps` steps
  or when the game ends.
- `go_explore`: Go-Explore without an LLM (Ecoffet et al. 2021, "First return, then explore"): an
  archive of cells keyed by the world-state hash; each iteration selects a cell uniformly, restores it
  with `set_state` ("first return") and takes `explore_steps` random valid actions ("then explore"),
  adding every novel state it meets to the archive.

Both count environment steps (calls to `game.step`) against `budget_steps` and record one curve point
per step: (env steps used so far, best score reached so far). Restores and resets are not steps.

The two reference agents that check a suite (the oracle plays the walkthrough, the null agent only
looks) and the no-op floor play through `iclr26.agents`' step loop: `glow.reference`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from iclr26.core.validation import check_int
from iclr26.glow.env import BudgetExhausted, TextGame
from iclr26.glow.memory import Archive


@dataclass
class BaselineResult:
    """What one baseline run reached, per environment step."""

    agent: str
    """the agent's name (`random`, `go_explore`, `drrn`, `oracle`, `null`)"""
    game: str
    """the game's name"""
    game_max_score: int
    """the game's maximum score (for normalising)"""
    curve: list[tuple[int, int]]
    """one point per env step: (env steps used so far, best score reached so far)"""
    steps_used: int
    """env steps the agent took (never more than its budget)"""
    seconds: float
    """wall time of the run"""
    details: dict[str, Any] = field(default_factory=dict)
    """agent-specific counters (episodes, archive cells, ...)"""

    @classmethod
    def finish(
        cls,
        agent: str,
        game: TextGame,
        curve: list[tuple[int, int]],
        steps_used: int,
        started: float,
        **details: Any,
    ) -> BaselineResult:
        """The result of a run of `agent` on `game` that began at `time.perf_counter()` = `started`."""
        return cls(
            agent=agent,
            game=game.name,
            game_max_score=game.max_score,
            curve=curve,
            steps_used=steps_used,
            seconds=time.perf_counter() - started,
            details=details,
        )

    @property
    def max_score(self) -> int:
        """The best score reached during the run (0 if no step was taken), as `agents.RunResult`."""
        return self.curve[-1][1] if self.curve else 0

    @property
    def normalised_score(self) -> float:
        """max_score / the game's max score (nan when the max is unknown)."""
        return self.max_score / self.game_max_score if self.game_max_score > 0 else float("nan")


def as_rng(rng: np.random.Generator | int) -> np.random.Generator:
    """A NumPy generator from `rng` (a generator is used as is, an int seeds a new one)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, int) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy Generator or a non-negative int seed, got {rng!r}")


def _steps_left(game: TextGame, budget_steps: int, used: int) -> int:
    left = budget_steps - used
    if game.budget_left is not None:
        left = min(left, game.budget_left)
    return max(left, 0)


def random_steps(
    game: TextGame,
    steps: int,
    rng: np.random.Generator,
    budget_steps: int,
    used: int,
    best: int,
    curve: list[tuple[int, int]],
    on_step: Callable[[int], None] | None = None,
) -> tuple[int, int]:
    """Up to `steps` uniformly random valid actions from the current state, stopping at the budget, a
    state with no valid action or the game's end; each step appends (used, best) to `curve`, and
    `on_step(k)` runs after the k-th step when the game goes on. Returns the new (used, best)."""
    for k in range(1, steps + 1):
        if _steps_left(game, budget_steps, used) == 0:
            break
        actions = game.valid_actions()
        if not actions:
            break
        _, _, done, _ = game.step(actions[int(rng.integers(len(actions)))])
        used += 1
        best = max(best, game.score)
        curve.append((used, best))
        if done:
            break
        if on_step is not None:
            on_step(k)
    return used, best


def random_agent(
    game: TextGame, budget_steps: int, rng: np.random.Generator | int, episode_steps: int = 100
) -> BaselineResult:
    """Play uniformly random valid actions for `budget_steps` env steps, resetting every
    `episode_steps` steps or when the game ends; return the best-score curve."""
    check_int("budget_steps", budget_steps, 0, unit="env steps")
    check_int("episode_steps", episode_steps, 1, unit="env steps")
    rng = as_rng(rng)
    start = time.perf_counter()
    curve: list[tuple[int, int]] = []
    best, used, episodes = 0, 0, 0
    try:
        while _steps_left(game, budget_steps, used) > 0:
            game.reset()
            episodes += 1
            best = max(best, game.score)
            before = used
            used, best = random_steps(game, episode_steps, rng, budget_steps, used, best, curve)
            if used == before:  # no valid action right after a reset: nothing more can happen
                break
    except BudgetExhausted:
        pass
    return BaselineResult.finish("random", game, curve, used, start, episodes=episodes)


_MAX_STALLS = 1000
"""consecutive Go-Explore iterations without a step (no valid action in the cells) before giving up"""


def go_explore(
    game: TextGame,
    budget_steps: int,
    rng: np.random.Generator | int,
    explore_steps: int = 10,
    archive: Archive | None = None,
) -> BaselineResult:
    """Go-Explore without an LLM: select an archived cell uniformly, restore it with `set_state`, take
    `explore_steps` random valid actions, archive the novel states met; stop at `budget_steps`."""
    check_int("budget_steps", budget_steps, 0, unit="env steps")
    check_int("explore_steps", explore_steps, 1, unit="env steps")
    rng = as_rng(rng)
    archive = Archive() if archive is None else archive
    start = time.perf_counter()
    curve: list[tuple[int, int]] = []
    used, iterations, added, stalls = 0, 0, 0, 0
    game.reset()
    best = game.score
    added += archive.add(game.get_state(), game.score, 0)
    try:
        while _steps_left(game, budget_steps, used) > 0:
            cell = archive.sample_uniform(rng)  # uniform selection
            cell.visits += 1
            game.set_state(cell.state)  # first return
            iterations += 1
            before = used

            def archive_step(k: int, start: int = cell.steps) -> None:  # archive the novel states met
                nonlocal added
                added += archive.add(game.get_state(), game.score, start + k)

            used, best = random_steps(game, explore_steps, rng, budget_steps, used, best, curve, archive_step)
            stalls = stalls + 1 if used == before else 0
            if stalls >= _MAX_STALLS:  # every selected cell has had no valid action
                break
    except BudgetExhausted:
        pass
    return BaselineResult.finish(
        "go_explore", game, curve, used, start, iterations=iterations, cells=len(archive), cells_added=added
    )
