"""Shared parts of the agent systems (devops_gym, scienceboard, liveweb_ie, glow, ...).

- `episode`: the `Episode` record (observations, replies, actions, tokens, timings) as JSONL, and
  an HTML viewer;
- `loop`: `run_episode` / `run_suite` with step, token and wall-time budgets that stop with a
  named reason; `LLMAgent` over any `iclr26.core.llm.ChatModel`;
- `actions`: parsers for fenced code blocks, JSON against a schema, and DONE / FAIL / ANSWER;
- `baselines`: oracle and null agents, and `check_suite` (a suite is valid only when the oracle
  passes every task and the null agent none);
- `sandbox`: `Sandbox` for shell work (bubblewrap, rlimits, timeouts, output caps);
- `terminal`: a tmux-backed `TerminalSession`, as Terminal-Bench drives a shell;
- `shell`: shell tasks (instruction, files, check, reference solution) in a sandbox;
- `display`: an Xvfb `VirtualDisplay` with screenshots and xdotool input;
- `browser`: headless Chromium through Playwright, and a local HTTP server for generated sites.

The Debian packages these need are declared in `iclr26.core.sysdeps` and installed by `make deps`.
Heavy modules (display, browser) are imported from their own module, not here.
"""

from iclr26.agents.actions import Action, ActionParser, InvalidAction, ParseError
from iclr26.agents.baselines import NULL, ORACLE, NullAgent, OracleAgent, SuiteCheck, check_suite, suite_rows
from iclr26.agents.episode import (
    Episode,
    ModelCall,
    Step,
    read_episodes,
    render_html,
    write_episodes,
    write_html,
)
from iclr26.agents.loop import (
    Agent,
    AgentReply,
    Budget,
    Environment,
    LLMAgent,
    Observation,
    StepOutcome,
    run_episode,
    run_suite,
)

__all__ = [
    "NULL",
    "ORACLE",
    "Action",
    "ActionParser",
    "Agent",
    "AgentReply",
    "Budget",
    "Environment",
    "Episode",
    "InvalidAction",
    "LLMAgent",
    "ModelCall",
    "NullAgent",
    "Observation",
    "OracleAgent",
    "ParseError",
    "Step",
    "StepOutcome",
    "SuiteCheck",
    "check_suite",
    "read_episodes",
    "render_html",
    "run_episode",
    "run_suite",
    "suite_rows",
    "write_episodes",
    "write_html",
]
