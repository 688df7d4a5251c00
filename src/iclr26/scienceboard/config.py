"""The `scienceboard` run's config: which tasks and domains, which agents, the observation mode, and
the model's budget (the model is the run's: `--llm`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from iclr26.core.config import ConfigError, run_llm_renames
from iclr26.core.validation import check_in, check_int, check_seconds

DOMAINS = ("algebra", "biochemistry", "gis", "astronomy", "documents")
"""The paper's domains, in its table's order (Lean's theorem proving is unsupported here)."""
BUILT_DOMAINS = DOMAINS
"""The domains with built-here tasks: all five."""
AGENTS = ("oracle", "null", "always_fail", "random_click", "llm")
"""oracle: the reference solutions (validates the task set); null: says DONE at once; always_fail: says
FAIL at once (a floor); random_click: clicks random points, then DONE (a floor); llm: the model."""
EXPERIMENTS = ("suite", "grounding", "command")
"""suite: the success table (the agents of `agents`); grounding: the oracle with pointer noise and the
grounding-only agent (`grounding.py`); command: the model in the command action space against the
pixel one (`command_space.py`)."""
OBSERVATIONS = ("a11y_tree", "screenshot", "screenshot_a11y_tree", "set_of_marks", "textual")
"""The paper's observation settings: the linearised accessibility tree; the screenshot; both; the
set-of-mark screenshot (numbered boxes on the tree's elements, with the tagged tree as text, and
`pyautogui.click(tag_N)` accepted); and the textual one, the terminal's text (GRASS GIS only)."""
TASK_ONLY = "task"
"""An observation of the task's instruction alone (no tree, no screen, no terminal): the command action
space's knowledge-only arm (`system.command_study`); not one of the paper's settings."""


@dataclass(frozen=True)
class ScienceBoardConfig:
    """Everything the run uses; the defaults are the README's bench."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm", "llm_path")

    experiment: str = "suite"
    """suite: every agent of `agents` on the selected tasks (the success table); grounding: on the tasks
    whose reference solution points, the oracle with Gaussian pointer noise of each `noise_px`, the
    scripted grounding-only agent and the floors; command: on the KAlgebra, PyMOL and GRASS tasks that end
    in a state (no ANSWER, no FAIL), the model in the command action space against the same model in the
    pixel space, the reference solution in the command space and the floors"""
    noise_px: tuple[int, ...] = (5, 10, 20)
    """grounding: the σ (pixels) of the Gaussian noise on the oracle's pointer actions, one arm each"""
    tasks: str = "builtin"
    """builtin: the built-here task set; else a folder (or file) of the authors' task files, loaded and
    mapped onto our apps (the mapping table; their tasks need the authors' data to run)"""
    domains: tuple[str, ...] = BUILT_DOMAINS
    """the domains to run: algebra (KAlgebra), biochemistry (PyMOL), gis (GRASS GIS), astronomy
    (Stellarium), documents (TeXstudio)"""
    per_domain: int = 0
    """tasks per domain, spread over the kinds (0: all)"""
    task_ids: tuple[str, ...] = ()
    """run only these built-here tasks (ids such as grass-infeasible-satellite; empty: every task the
    domains and per_domain select)"""
    agents: tuple[str, ...] = AGENTS
    """the agents to run, in order; the oracle and null rows validate the task set, always_fail and
    random_click are the floors the model agent is judged against"""
    llm_per_domain: int = 0
    """tasks per domain the model agent runs (0: the same as the others)"""
    llm_domains: tuple[str, ...] = ()
    """the domains the model agent runs (empty: all of `domains`)"""
    observation: str = "a11y_tree"
    """what the model sees: a11y_tree, screenshot, screenshot_a11y_tree, set_of_marks, textual (the
    terminal's text: GRASS only). Text-only models (SmolLM2) need a11y_tree"""
    max_tokens: int = 96
    """reply length of one model call, tokens"""
    prefill: bool = True
    """start each reply with "```python\npyautogui." (SmolLM2 otherwise chats or writes functions instead
    of acting; it then cannot say DONE or ANSWER and is scored when its steps run out); the paper
    preset turns it off"""
    history_turns: int = 3
    """earlier observation/reply pairs the model sees (the paper keeps 3)"""
    max_steps: int = 0
    """agent turns per task (0: the task file's `steps`, plus 2 for the closing DONE/ANSWER)"""
    task_timeout_s: float = 600.0
    """wall-clock limit of one task; past it the task ends as failed (`max_wall_time`) and its app is
    stopped before the next task starts"""
    a11y_chars: int = 5000
    """characters of the linearised accessibility tree shown per turn (the bench shows SmolLM2 800: it
    has 2,048 tokens of context; the paper preset 12,000)"""
    pause_s: float = 0.5
    """seconds after each input event (the paper's harness pauses 0.5 s)"""
    figures: bool = True
    """save one screenshot per app from the oracle's run, with its first click marked"""
    seed: int = 0
    """seeds the model's sampling"""

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ConfigError("tasks must be 'builtin' or a path to task files")
        for d in self.domains:
            check_in("domains", d, BUILT_DOMAINS)
        for a in self.agents:
            check_in("agents", a, AGENTS)
        for d in self.llm_domains:
            check_in("llm_domains", d, self.domains)
        if not self.domains or not self.agents:
            raise ConfigError("domains and agents must each name at least one")
        check_in("observation", self.observation, OBSERVATIONS)
        check_in("experiment", self.experiment, EXPERIMENTS)
        if not self.noise_px or len(set(self.noise_px)) != len(self.noise_px):
            raise ConfigError(f"noise_px must name distinct sigmas, got {self.noise_px!r}")
        for sigma in self.noise_px:
            check_int("noise_px", sigma, 1)
        for name in ("per_domain", "llm_per_domain", "max_steps", "seed"):
            check_int(name, getattr(self, name), 0)
        check_int("max_tokens", self.max_tokens, 16)
        check_int("history_turns", self.history_turns, 1)
        check_int("a11y_chars", self.a11y_chars, 200)
        check_seconds("task_timeout_s", self.task_timeout_s)
        if not isinstance(self.pause_s, int | float) or not 0 <= self.pause_s <= 5:
            raise ConfigError(f"pause_s must be a number of seconds in [0, 5], got {self.pause_s!r}")
