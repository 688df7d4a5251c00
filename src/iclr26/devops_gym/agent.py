"""The agents: a shell-and-editor agent over `core.llm` in the mini-SWE-agent style, and the oracle
and null agents every table prints.

mini-SWE-agent's loop is the whole interface: each reply holds one ```bash block, which runs in the
task's terminal; the observation is its output (truncated, with the exit status); the agent edits
files with shell commands (cat <<EOF, sed, ...); it submits by replying DONE; a step limit and the
task's wall clock end it otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from iclr26.agents import LLMAgent, NullAgent, OracleAgent
from iclr26.core.llm import ChatModel
from iclr26.devops_gym.runner import SHELL_PARSER
from iclr26.devops_gym.suite.monitor import REPORT
from iclr26.devops_gym.task import SOLUTION, Task

SYSTEM_PROMPT = """You are a DevOps engineer working in a Linux terminal, in the repository the task names.
You act by running shell commands. Each reply has a short thought and then exactly one fenced
```bash block with one command (chain steps with && if needed); its output comes back to you.
Edit files with shell tools (cat <<'EOF' > file, sed -i, ...). There is no network.
When the task is complete, reply with the single word DONE and no code block."""

COMMAND_PREFILL = "```bash\n"
ORACLE_REPLY = f"```bash\nbash {SOLUTION}; rm -f {SOLUTION}\n```"
"""The oracle's one command: the task's reference solution (copied into the work dir for it alone)."""


def oracle_agent(tasks: Iterable[Task]) -> OracleAgent:
    """Runs each task's `solution.sh`, then says DONE."""
    return OracleAgent({t.task_id: [ORACLE_REPLY] for t in tasks})


def null_agent() -> NullAgent:
    """Says DONE at once: a valid suite gives it 0."""
    return NullAgent()


CONSTANT_LABEL = "healthy"
CONSTANT = f"constant (reports {CONSTANT_LABEL})"
"""The floor's name in every table."""


def constant_agent(tasks: Iterable[Task]) -> OracleAgent:
    """The floor: writes `healthy` to a monitoring task's report without looking (the label a reader
    must beat: two of the suite's eight services are healthy), says DONE at once on every other task.
    Each reply is fixed in advance, so it is `OracleAgent`'s replay with none of the solutions."""
    write = f"```bash\necho {CONSTANT_LABEL} > {REPORT}\n```"
    agent = OracleAgent({t.task_id: [write] if t.spec.category == "monitor" else ["DONE"] for t in tasks})
    agent.name = CONSTANT
    return agent


def shell_agent(
    model: ChatModel,
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    history_turns: int | None = 4,
    seed: int = 0,
    prefill_command: bool = False,
) -> LLMAgent:
    """The mini-SWE-agent-style agent over `model` (only the last `history_turns` exchanges are
    resent, so a small model's context holds). With `prefill_command` each reply starts inside a
    ```bash block and stops at its closing fence: a model too small to keep the format still acts
    (it can no longer say DONE, so it runs until its step limit)."""
    return LLMAgent(
        model,
        SYSTEM_PROMPT,
        SHELL_PARSER,
        max_tokens=max_tokens,
        temperature=temperature,
        seed=seed,
        history_turns=history_turns,
        name=f"shell agent ({model.name})",
        reply_prefix=COMMAND_PREFILL if prefill_command else "",
        stop=("```",) if prefill_command else None,
    )
