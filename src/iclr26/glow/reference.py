"""The suite's reference agents and the no-op floor, played through `iclr26.agents`' step loop.

A text game fits `agents.run_episode` when an agent plays one episode, one command per turn, with no
reset or restore: the oracle, the null agent and the no-op floor do. (GLoW, ReAct, Reflexion, random
play and Go-Explore drive the game themselves, resetting it or restoring saved states, so they stay
players: `agents.GLoWPlayer`, `explore.random_agent`, ...)

- `GameEnvironment`: an `agents.Environment` over a `TextGame`. `reset` shows the game's opening text,
  each action is one game command (one env step; the game's budget ends the episode), and `evaluate`
  is the best score reached over the game's max (1.0: solved).
- `COMMANDS`: the parser. A reply is a game command, or DONE on its own line (stop playing).
- `oracle(game)`: `agents.OracleAgent` with the game's walkthrough (must reach every game's max score);
  `NULL`: `agents.NullAgent` saying `NULL_COMMAND` for the whole budget (must reach none); `NOOP`:
  `agents.NullAgent` saying DONE at once, the no-op floor (no env step: the start state's score).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from iclr26.agents import Action, Agent, Budget, NullAgent, OracleAgent, ParseError, StepOutcome, run_episode
from iclr26.glow.env import BudgetExhausted, TextGame
from iclr26.glow.explore import BaselineResult

NULL_COMMAND = "look"
"""the null agent's only command: it spends env steps without acting on the world"""


@dataclass(frozen=True)
class CommandParser:
    """A reply is one game command; DONE on its own line ends the episode."""

    def formats(self) -> str:
        """What the parser accepts (shown to the agent on a failure)."""
        return "Reply with one game command, or DONE on its own line to stop."

    def parse(self, text: str) -> Action:
        """The command in `text` (its first non-empty line), or the DONE control action."""
        line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
        if not line:
            raise ParseError(f"the reply is empty. {self.formats()}")
        if line == "DONE":
            return Action("done")
        return Action("code", line, "text")


COMMANDS = CommandParser()


class GameEnvironment:
    """`agents.Environment` over a `TextGame` (the game is opened and closed by its owner)."""

    def __init__(self, game: TextGame) -> None:
        self.game = game
        self.curve: list[tuple[int, int]] = []  # (env steps used, best score so far), one per step
        self.best = 0

    def reset(self) -> str:
        """Reset the game; its opening text."""
        obs = self.game.reset()
        self.best = self.game.score
        return obs

    def step(self, action: Action) -> StepOutcome:
        """Send the command; the episode ends with the game or its env-step budget."""
        try:
            obs, _, done, _ = self.game.step(str(action.content))
        except BudgetExhausted:
            return StepOutcome("The env-step budget is spent.", done=True)
        self.best = max(self.best, self.game.score)
        self.curve.append((self.game.steps_used, self.best))
        return StepOutcome(obs, done=done or self.game.budget_left == 0)

    def evaluate(self, answer: str | None) -> float:
        """The best score reached over the game's max score (0 when the max is unknown)."""
        return self.best / self.game.max_score if self.game.max_score > 0 else 0.0

    def close(self) -> None:
        """Nothing: the game's owner closes it."""


def oracle(game: TextGame) -> OracleAgent:
    """The game's walkthrough, one command per turn, then DONE."""
    walkthrough = game.walkthrough()
    return OracleAgent({game.name: walkthrough or ["DONE"]})


NULL = NullAgent(NULL_COMMAND)
NOOP = NullAgent()  # says DONE at once


def play(name: str, agent: Agent, game: TextGame, budget_steps: int) -> BaselineResult:
    """One episode of `agent` on `game` through `agents.run_episode`, at most `budget_steps` turns."""
    start = time.perf_counter()
    env = GameEnvironment(game)
    episode = run_episode(game.name, env, agent, COMMANDS, Budget(max_steps=max(budget_steps, 1)))
    stopped = {"stop_reason": episode.stop_reason, "turns": len(episode.steps)}
    return BaselineResult.finish(name, game, env.curve, game.steps_used, start, **stopped)
