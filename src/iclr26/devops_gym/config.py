"""The `devops_gym` run's config: which tasks (the built-here suite or a Terminal-Bench folder),
which agents, the runner's limits and the LLM agent's budget (its model is the run's: `--llm`; the
tasks run at once are the run's too: `--jobs`, `--parallel`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from iclr26.core.config import ConfigError, run_llm_renames
from iclr26.core.validation import check_in, check_int, check_seconds
from iclr26.devops_gym.task import CATEGORIES

AGENTS = ("oracle", "null", "constant", "observer", "llm")
"""oracle: runs each task's solution.sh (must resolve every task); null: says DONE at once (must
resolve none); constant: the floor, reports `healthy` on a monitoring task without looking and does
nothing elsewhere; observer: the scripted monitor (no model), samples /proc and names the anomaly
by thresholds, on the monitoring tasks only; llm: the mini-SWE-agent-style shell agent over a chat
model"""
DEFAULT_AGENTS = ("oracle", "null", "constant", "llm")
"""The agents a run has unless `agents` says otherwise (the scripted monitor is asked for by name)."""
LANGUAGES = ("java", "go", "python")


@dataclass(frozen=True)
class DevOpsConfig:
    """Everything the run uses; the defaults are the README's bench (every task, every agent)."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm", "llm_path") | {
        "jobs": "tasks run at once are the run's: iclr26 run devops_gym --jobs N",
        "backend": "where tasks run is the run's: iclr26 run devops_gym --parallel process|threads|ray",
    }

    tasks: str = "builtin"
    """builtin (the suite written into the run folder's tasks/), or a folder of Terminal-Bench tasks"""
    categories: tuple[str, ...] = CATEGORIES
    """which categories to run: build, monitor, issue_resolving, test_generation, end_to_end"""
    languages: tuple[str, ...] = LANGUAGES
    """built-here tasks in these languages (monitoring services are python)"""
    task_ids: tuple[str, ...] = ()
    """run only these tasks (`category/name`, as in the table); empty: every selected task"""
    per_category: int = 0
    """at most this many tasks per category, in task-id order (0: all)"""
    agents: tuple[str, ...] = DEFAULT_AGENTS
    """agents to run (oracle, null, constant, observer, llm); oracle and null are printed in every table"""
    llm_tasks: int = 0
    """tasks the llm agent runs, spread over the categories (0: all selected tasks)"""
    max_steps: int = 10
    """the llm agent's turns per task (mini-SWE-agent's step limit)"""
    max_tokens: int = 256
    """the llm agent's reply length, tokens"""
    history_turns: int = 4
    """exchanges resent to the model each turn (0: the whole conversation)"""
    named_command: bool = False
    """the capability ladder's rung: the llm agent's instruction names the command that solves the
    task (`bash solution.sh`, the reference copied into its work dir), so a row above 0 says the
    model can act in the format, and one still at 0 that it cannot even do that"""
    prefill_command: bool = True
    """start each llm reply inside a ```bash block (SmolLM2-135M does not keep the format otherwise;
    the paper preset turns it off, as mini-SWE-agent does not prefill)"""
    command_timeout_s: float = 120.0
    """wall clock of one agent command; then C-c"""
    agent_timeout_s: float = 0.0
    """wall clock of one agent's whole attempt (0: each task's max_agent_timeout_sec)"""
    output_chars: int = 4000
    """command output shown to the agent per turn (the middle is cut)"""
    runner: str = "local"
    """local (a bubblewrap sandbox and tmux per task; tasks with a workspace/) or docker (compose up /
    exec / down: the public tasks' images; needs a Docker engine)"""
    seed: int = 0
    """seeds the monitoring faults' onset times and the llm's sampling"""

    def __post_init__(self) -> None:
        for c in self.categories:
            check_in("categories", c, CATEGORIES)
        for lang in self.languages:
            check_in("languages", lang, LANGUAGES)
        for a in self.agents:
            check_in("agents", a, AGENTS)
        if not self.categories or not self.agents:
            raise ConfigError("categories and agents must each name at least one")
        check_in("runner", self.runner, ("local", "docker"))
        for name in ("named_command", "prefill_command"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false, got {getattr(self, name)!r}")
        for name in ("per_category", "llm_tasks", "history_turns", "seed"):
            check_int(name, getattr(self, name), 0)
        check_int("max_steps", self.max_steps, 1)
        check_int("max_tokens", self.max_tokens, 16)
        check_int("output_chars", self.output_chars, 200)
        check_seconds("command_timeout_s", self.command_timeout_s)
        if self.agent_timeout_s:
            check_seconds("agent_timeout_s", self.agent_timeout_s)
