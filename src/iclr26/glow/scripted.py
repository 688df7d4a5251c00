"""GLoW's dual-scale structure without language (issue 60): a scripted policy in the LLM's place.

The policy is `noisy_walkthrough`: with probability p the next command of the game's walkthrough from
the current state (TextWorld's winning policy), else a uniformly random valid action. It is scripted,
not a language model: it isolates what the memory structure adds to a policy of known quality p.

Four players at the same env-step budget, each a Go-Explore variant or none:

- `no_memory`: the policy plays episodes from the start (reset every `episode_steps` steps);
- `go_explore`: uniform Go-Explore: restore a uniformly drawn archived cell, then `segment_steps` policy
  steps; every novel state is archived (the archive's novelty test);
- `frontier`: the global scale alone: select s_next from W_global, the frontier's critical states
  (below), then n rollouts of `segment_steps` steps from it, each updating F;
- `frontier_mar`: the global scale and MAR: as `frontier`, with W_local (multi-path advantages over the
  rollouts from s_next) steering the policy's random branch in the later rollouts.

W_global from frontier score deltas: each state of a frontier trajectory right after a step that raised
the score (Δ > 0) is critical, with value v = its score; s_next is the critical state of highest
v + c·sqrt(ln(1 + N) / (1 + n_s)) (N: selections so far, n_s: of this state, c: the largest Δ seen),
the UCB form of the paper's value and potential. While no step has scored, s_next is a uniform archive
draw (as in `go_explore`).

W_local from rollouts: for each step (s, a) of the rollouts T_s from s_next, G = the best score reached
later in that rollout minus the score before the step. A(s, a) = mean G of a at s minus the mean G of
all actions taken at s over T_s (the multi-path baseline); it is defined where the rollouts visited s
more than once. In the policy's random branch an action of A > 0 at s is taken (the largest), and
actions of A < 0 are left out of the uniform draw. Eq. (MAR) in the paper writes this as text.
"""

from __future__ import annotations

import functools
import math
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr26.glow.env import BudgetExhausted, GameState, TextGame
from iclr26.glow.explore import BaselineResult
from iclr26.glow.memory import Archive, Frontier, Trajectory, Transition

PLAYERS = ("frontier_mar", "frontier", "go_explore", "no_memory")
"""the structures compared, strongest first"""

Advantage = dict[tuple[str, str], float]
"""W_local: (world-state hash, action) -> advantage"""


def noisy_walkthrough(
    game: TextGame, p: float, rng: np.random.Generator, w_local: Advantage | None = None
) -> str:
    """The scripted policy: with probability `p` the walkthrough's next command from here, else a
    uniformly random valid action (with `w_local`: the best action of positive advantage at this
    state, else a uniform draw over the actions of no negative advantage). '' when nothing is valid."""
    if rng.random() < p:
        walk = game.walkthrough_from_here()
        if walk:
            return walk[0]
    valid = game.valid_actions()
    if not valid:
        return ""
    if w_local:
        key = game.state_hash()
        scored = {a: w_local[(key, a)] for a in valid if (key, a) in w_local}
        best = max(scored, key=lambda a: scored[a], default=None)
        if best is not None and scored[best] > 0:
            return best
        keep = [a for a in valid if scored.get(a, 0.0) >= 0] or valid
        return keep[int(rng.integers(len(keep)))]
    return valid[int(rng.integers(len(valid)))]


def multipath_advantage(rollouts: list[list[tuple[str, str, int]]], start_score: int) -> Advantage:
    """W_local from rollouts that share a start: each rollout is [(state hash, action, score after)].

    A(s, a) = mean G(s, a) − mean G(s, ·), G = the best score later in the rollout minus the score
    before the step; only states visited more than once over the rollouts get advantages."""
    returns: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for steps in rollouts:
        scores = [start_score, *(s for _, _, s in steps)]
        for t, (key, action, _) in enumerate(steps):
            returns[key].append((action, max(scores[t + 1 :]) - scores[t]))
    out: Advantage = {}
    for key, pairs in returns.items():
        if len(pairs) < 2:
            continue
        baseline = float(np.mean([g for _, g in pairs]))
        for action in {a for a, _ in pairs}:
            out[(key, action)] = float(np.mean([g for a, g in pairs if a == action])) - baseline
    return out


@dataclass
class _Run:
    """What one player has spent and reached."""

    game: TextGame
    budget: int
    curve: list[tuple[int, int]]
    best: int = 0

    def left(self) -> int:
        return max(self.budget - self.game.steps_used, 0)

    def step(self, action: str) -> tuple[int, bool]:
        """One env step (BudgetExhausted at the budget); (score after, done)."""
        if self.left() == 0:
            raise BudgetExhausted("budget")
        _, _, done, _ = self.game.step(action)
        self.best = max(self.best, self.game.score)
        self.curve.append((self.game.steps_used, self.best))
        return self.game.score, done


def _segment(
    run: _Run,
    steps: int,
    policy: Callable[[], str],
    on_step: Callable[[str, str, int], None],
) -> None:
    """Up to `steps` policy steps from the current state; `on_step(hash before, action, score after)`."""
    for _ in range(steps):
        key = run.game.state_hash()
        action = policy()
        if not action:
            return
        score, done = run.step(action)
        on_step(key, action, score)
        if done:
            return


def play(
    player: str,
    game: TextGame,
    p: float,
    budget: int,
    rng: np.random.Generator,
    segment_steps: int = 20,
    episode_steps: int = 50,
    n_rollouts: int = 3,
    k: int = 5,
) -> BaselineResult:
    """One run of `player` (one of PLAYERS) with the noisy-walkthrough policy at `p`, for `budget` env
    steps; the best-score curve."""
    if player not in PLAYERS:
        raise ValueError(f"player must be one of {PLAYERS}, got {player!r}")
    started = time.perf_counter()
    game.reset()
    run = _Run(game, budget, [], game.score)
    details: dict[str, int] = {}  # filled as the run goes (the budget ends it by an exception)
    try:
        if player == "no_memory":
            _no_memory(run, p, rng, episode_steps, details)
        elif player == "go_explore":
            _go_explore(run, p, rng, segment_steps, details)
        else:
            _frontier(run, p, rng, segment_steps, n_rollouts, k, player == "frontier_mar", details)
    except BudgetExhausted:
        pass
    return BaselineResult.finish(player, game, run.curve, game.steps_used, started, **details)


def _no_memory(run: _Run, p: float, rng: np.random.Generator, episode_steps: int, details: dict) -> None:
    details["episodes"] = 0
    while run.left():
        run.game.reset()
        details["episodes"] += 1
        used = run.game.steps_used
        _segment(run, episode_steps, lambda: noisy_walkthrough(run.game, p, rng), lambda *_: None)
        if run.game.steps_used == used:
            break


def _archive_step(run: _Run, archive: Archive, depth: list[int]) -> Callable[[str, str, int], None]:
    def on_step(key: str, action: str, score: int) -> None:
        depth[0] += 1
        archive.add(run.game.get_state(), score, depth[0])

    return on_step


def _go_explore(run: _Run, p: float, rng: np.random.Generator, segment_steps: int, details: dict) -> None:
    archive = Archive()
    archive.add(run.game.get_state(), run.game.score, 0)
    stalls = 0
    details["iterations"] = 0
    while run.left() and stalls < 100:
        cell = archive.sample_uniform(rng)
        run.game.set_state(cell.state)
        details["iterations"] += 1
        used = run.game.steps_used
        depth = [cell.steps]
        policy = lambda: noisy_walkthrough(run.game, p, rng)  # noqa: E731
        _segment(run, segment_steps, policy, _archive_step(run, archive, depth))
        details["cells"] = len(archive)
        stalls = stalls + 1 if run.game.steps_used == used else 0


def critical_states(frontier: Frontier) -> list[tuple[Transition, int]]:
    """W_global: the states of F's trajectories right after a step that raised the score, with that
    step's Δ (each state once, by its world-state hash)."""
    seen: dict[str, tuple[Transition, int]] = {}
    for tau in frontier:
        before = tau.start_score
        for tr in tau.transitions:
            delta = tr.score - before
            before = tr.score
            if delta > 0 and tr.state is not None and tr.state.hash not in seen:
                seen[tr.state.hash] = (tr, delta)
    return list(seen.values())


def select_ucb(critical: list[tuple[Transition, int]], visits: dict[str, int], total: int) -> Transition:
    """s_next = argmax over critical states of v + c·sqrt(ln(1 + N) / (1 + n_s)), c the largest Δ."""
    c = max(delta for _, delta in critical)

    def ucb(item: tuple[Transition, int]) -> float:
        tr, _ = item
        return tr.score + c * math.sqrt(math.log(1 + total) / (1 + visits.get(tr.state.hash, 0)))

    return max(critical, key=ucb)[0]


def _frontier(
    run: _Run,
    p: float,
    rng: np.random.Generator,
    segment_steps: int,
    n_rollouts: int,
    k: int,
    mar: bool,
    details: dict,
) -> None:
    game = run.game
    s0 = game.get_state()
    archive, frontier = Archive(), Frontier(k)
    archive.add(s0, game.score, 0)
    visits: dict[str, int] = {}
    selections, stalls = 0, 0
    details.update(selections=0, from_frontier=0)
    while run.left() and stalls < 100:
        critical = critical_states(frontier)
        if critical:
            tr = select_ucb(critical, visits, selections)
            state, prefix = tr.state, _prefix_of(frontier, tr)
            details["from_frontier"] += 1
        else:
            cell = archive.sample_uniform(rng)
            state, prefix = cell.state, list(cell.prefix)
        visits[state.hash] = visits.get(state.hash, 0) + 1
        selections += 1
        details["selections"] = selections
        used = game.steps_used
        rollouts: list[list[tuple[str, str, int]]] = []
        w_local: Advantage = {}
        for _ in range(n_rollouts):
            policy = functools.partial(noisy_walkthrough, game, p, rng, w_local if mar else None)
            rollouts.append(_rollout(run, state, prefix, s0, segment_steps, policy, archive, frontier))
            if mar:
                w_local = multipath_advantage(rollouts, state.score)
        details["cells"] = len(archive)
        stalls = stalls + 1 if game.steps_used == used else 0


def _rollout(
    run: _Run,
    state: GameState,
    prefix: list[Transition],
    s0: GameState,
    steps: int,
    policy: Callable[[], str],
    archive: Archive,
    frontier: Frontier,
) -> list[tuple[str, str, int]]:
    """One rollout of at most `steps` from `state` (reached by `prefix`): it updates A and F; its steps
    as (state hash, action, score after)."""
    game = run.game
    game.set_state(state)
    played: list[Transition] = []
    out: list[tuple[str, str, int]] = []

    def on_step(key: str, action: str, score: int) -> None:
        after = game.get_state()
        before = played[-1].score if played else state.score
        played.append(Transition(action, "", score - before, score, after))
        out.append((key, action, score))
        archive.add(after, score, len(prefix) + len(played), prefix + played)

    try:
        _segment(run, steps, policy, on_step)
    finally:  # the budget may end it: F still gets what it played
        frontier.add(
            Trajectory(s0, prefix + played, game.get_state(), origin=len(prefix), start_score=s0.score)
        )
    return out


def _prefix_of(frontier: Frontier, target: Transition) -> list[Transition]:
    """The transitions of a frontier trajectory up to and including `target`."""
    for tau in frontier:
        for i, tr in enumerate(tau.transitions):
            if tr is target:
                return list(tau.transitions[: i + 1])
    return []
