"""GLoW's dual-scale world memory (arXiv 2509.24116): the frontier F and the archive A.

- `Trajectory`: a complete path from the game's start, ranked by its running value
  v(τ) = max_t Σ_{j≤t} r_j (the best score reached along it, not the score it ends with);
- `Frontier`: the top-k (k = 5) trajectories by v(τ), the baseline of the global scale;
- `Archive`: the states worth returning to, filled by a novelty test, from which the select step
  of the Go-Explore loop picks where to restart.

Nothing here calls a model or a game: the agent (`iclr26.glow.agents`) fills both memories.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Transition:
    """One env step: the action taken, the observation it gave, its reward and the game score after it."""

    action: str
    observation: str
    reward: int
    score: int
    state: Any = None  # the GameState after the step (None when not kept), used to restore v(τ)'s argmax


@dataclass(eq=False)
class Trajectory:
    """A complete path from `start` (the game's initial state) through `transitions` to `final`.

    `origin` is how many leading transitions were inherited from the archive cell the rollout was
    restored to; `transitions[origin:]` is what the rollout itself played.
    """

    start: Any
    transitions: list[Transition] = field(default_factory=list)
    final: Any = None
    origin: int = 0
    start_score: int = 0  # the score of `start` (0 at a game's beginning)

    def __len__(self) -> int:
        return len(self.transitions)

    @property
    def actions(self) -> tuple[str, ...]:
        """The actions from `start`, in order (what `TextGame.replay` needs)."""
        return tuple(t.action for t in self.transitions)

    def _argmax(self) -> tuple[int, int]:
        """(v(τ), t*): the best running score and the number of steps to first reach it (0: at start)."""
        best, best_t, running = self.start_score, 0, self.start_score
        for t, tr in enumerate(self.transitions, start=1):
            running += tr.reward  # Σ_{j≤t} r_j
            if running > best:
                best, best_t = running, t
        return best, best_t

    @property
    def running_value(self) -> int:
        """v(τ) = max_t Σ_{j≤t} r_j, with the empty prefix (t = 0) counted, so v(τ) ≥ start_score."""
        return self._argmax()[0]

    @property
    def steps_to_value(self) -> int:
        """The number of steps t* after which v(τ) is first reached."""
        return self._argmax()[1]

    @property
    def best_state(self) -> Any:
        """The GameState at the argmax t* of v(τ) (`start` when no step raised the score)."""
        t = self.steps_to_value
        return self.start if t == 0 else self.transitions[t - 1].state

    def render(self, since: int = 0, max_steps: int = 30) -> str:
        """The actions from step `since` on, as `a > b (+5) > c`, cut to `max_steps` around the argmax."""
        steps = self.transitions[since:]
        t_star = max(self.steps_to_value - since, 0)
        end = max(min(len(steps), max_steps), min(t_star, len(steps)))
        shown = steps[max(0, end - max_steps) : end]
        parts = [t.action + (f" ({t.reward:+d})" if t.reward else "") for t in shown]
        head = "... > " if end - len(shown) > 0 else ""
        tail = " > ..." if end < len(steps) else ""
        return head + " > ".join(parts) + tail if parts else "(no steps)"


class Frontier:
    """F: the top-k complete trajectories by v(τ).

    Ranking: higher v(τ) first; ties go to the trajectory that reaches its value in fewer steps,
    then to the earlier insertion. A trajectory whose action sequence is already in F is not added.
    """

    def __init__(self, k: int = 5) -> None:
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int (the frontier size), got {k!r}")
        self.k = k
        self.version = 0  # bumped on every change, so callers can tell whether F moved
        self._items: list[tuple[int, Trajectory]] = []  # (insertion order, trajectory), kept ranked
        self._count = 0

    @staticmethod
    def _key(item: tuple[int, Trajectory]) -> tuple[int, int, int]:
        order, tau = item
        return (-tau.running_value, tau.steps_to_value, order)

    def add(self, tau: Trajectory) -> bool:
        """Offer a trajectory; True when it entered the top k."""
        if any(t.actions == tau.actions for _, t in self._items):
            return False
        item = (self._count, tau)
        self._count += 1
        ranked = sorted([*self._items, item], key=self._key)[: self.k]
        if all(order != item[0] for order, _ in ranked):
            return False
        self._items = ranked
        self.version += 1
        return True

    @property
    def best(self) -> Trajectory | None:
        """The top trajectory, or None while F is empty."""
        return self._items[0][1] if self._items else None

    def __iter__(self) -> Iterator[Trajectory]:
        return (t for _, t in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def render(self, max_steps: int = 30) -> str:
        """F as numbered lines for a prompt: value, steps to reach it, and the actions."""
        if not self._items:
            return "(no trajectories yet)"
        return "\n".join(
            f"{i}. best score {t.running_value} after {t.steps_to_value} steps: "
            f"{t.render(max_steps=max_steps)}"
            for i, t in enumerate(self, start=1)
        )


@dataclass
class Cell:
    """One archived state: where it is, its score, the steps to reach it and the path that did."""

    state: Any  # GameState
    score: int
    steps: int
    prefix: tuple[Transition, ...]
    observation: str  # what the game said on arriving (shown to align_LLM)
    key: str  # the world-state hash
    visits: int = 0  # times the select step restored to this cell


class Archive:
    """A: cells keyed by the world-state hash, filled by a novelty test.

    A state is novel, and (re)written to its cell, when
    1. its hash is unseen, or
    2. its hash is seen with a lower score, or
    3. its hash is seen at the same score but was reached in more steps.
    So each world state keeps the best-scoring, then shortest, path to it.
    """

    def __init__(self) -> None:
        self._cells: dict[str, Cell] = {}

    def is_novel(self, key: str, score: int, steps: int) -> bool:
        """The novelty test above, without changing the archive."""
        old = self._cells.get(key)
        return old is None or score > old.score or (score == old.score and steps < old.steps)

    def add(
        self,
        state: Any,
        score: int,
        steps: int,
        prefix: Sequence[Transition] = (),
        observation: str = "",
        key: str | None = None,
    ) -> bool:
        """Archive `state` if it passes the novelty test; True when it did. `key` defaults to `state.hash`."""
        key = state.hash if key is None else key
        if not self.is_novel(key, score, steps):
            return False
        visits = self._cells[key].visits if key in self._cells else 0
        self._cells[key] = Cell(state, score, steps, tuple(prefix), observation, key, visits)
        return True

    def cells(self) -> list[Cell]:
        """The cells, in the order their hashes were first seen."""
        return list(self._cells.values())

    def cell(self, key: str) -> Cell | None:
        """The cell of world-state hash `key`, or None."""
        return self._cells.get(key)

    def __len__(self) -> int:
        return len(self._cells)

    def __contains__(self, key: str) -> bool:
        return key in self._cells

    def sample_uniform(self, rng: random.Random | np.random.Generator) -> Cell:
        """A cell drawn uniformly (Go-Explore's select step without an LLM)."""
        if not self._cells:
            raise ValueError("the archive is empty: add the start state before sampling")
        cells = self.cells()
        return cells[choice_index(rng, len(cells))]


def choice_index(rng: random.Random | np.random.Generator, n: int) -> int:
    """A uniform index in [0, n) from either a `random.Random` or a numpy `Generator`."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(n))
    return rng.randrange(n)
