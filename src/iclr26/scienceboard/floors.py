"""ScienceBoard's floors: the trivial agents a reader needs beside any row of the success table.

- always-FAIL (`always_fail`): says FAIL at the first step. It passes exactly the infeasible tasks,
  whose right ending is FAIL: over the 39 built-here tasks that is 5 (12.8% of tasks, 13.2% as the
  mean of the domain rates), close to the paper's best agent (15.79%).
- random clicks (`RandomClicks`): clicks the task's step budget of points drawn uniformly over the
  screen, then says DONE; what acting without reading the screen scores.

There is no constant-label floor: no built-here task is a monitoring or labelling one (the answer
tasks want a number or a name of their own, not a label from a small set).
"""

from __future__ import annotations

import random

from iclr26.agents import AgentReply, NullAgent, Observation
from iclr26.core.seeding import derive_seed

ALWAYS_FAIL = "always-FAIL (floor)"
RANDOM_CLICKS = "random clicks (floor)"


def always_fail() -> NullAgent:
    """The always-FAIL floor: `NullAgent`'s one reply, FAIL instead of DONE."""
    agent = NullAgent("FAIL")
    agent.name = ALWAYS_FAIL
    return agent


class RandomClicks:
    """The random-click floor: `clicks` clicks at points drawn uniformly over a `width` × `height`
    screen (seeded per task by `seed` and the task's id), then DONE."""

    name = RANDOM_CLICKS

    def __init__(self, seed: int, clicks: int, width: int = 1280, height: int = 800) -> None:
        self.seed, self.clicks, self.width, self.height = seed, clicks, width, height
        self._rng = random.Random(seed)
        self._left = clicks

    def reset(self, task_id: str, instruction: str) -> None:
        """A fresh stream for this task: the same clicks on every rerun."""
        self._rng = random.Random(derive_seed(self.seed, "random_clicks", task_id))
        self._left = self.clicks

    def act(self, observation: Observation) -> AgentReply:
        """The next random click, then DONE."""
        if self._left <= 0:
            return AgentReply("DONE")
        self._left -= 1
        x, y = self._rng.randrange(self.width), self._rng.randrange(self.height)
        return AgentReply(f"```python\npyautogui.click({x}, {y})\n```")
