"""Shell tasks: an instruction, files, a setup and a check command, run in a `Sandbox`.

The Terminal-Bench shape reduced to what runs without Docker: the agent's actions are ```bash
blocks run in the task's sandbox (no network, read-only system, limits); the task is solved when
its check command (the `run-tests.sh` role) exits 0 afterwards. The reference solution (the
`solution.sh` role) is what the oracle agent plays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from iclr26.agents.actions import Action, ActionParser, InvalidAction
from iclr26.agents.loop import Observation, StepOutcome
from iclr26.agents.sandbox import CommandResult, Sandbox, SandboxLimits
from iclr26.core.errors import UserError

SHELL_PARSER = ActionParser(code_languages=("bash", "sh", "shell", ""), controls=("DONE", "FAIL"))
CHECK_ENV = {"HOME": "/tmp", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
"""The check runs with a HOME of its own (the fresh private /tmp), not the agent's work dir, and no
user site-packages: a usercustomize or .pth the agent planted there does not run in it."""


@dataclass(frozen=True)
class ShellTask:
    """One shell task."""

    task_id: str
    instruction: str
    check: str  # exits 0 when the task is solved (run after the agent stops)
    solution: str  # the reference solution, a bash script
    files: Mapping[str, str] = field(default_factory=dict)  # written into the work dir first
    setup: str = ""  # run before the agent's first step

    def __post_init__(self) -> None:
        if not self.task_id or not self.check.strip() or not self.solution.strip():
            raise UserError(f"ShellTask {self.task_id!r} needs a task_id, a check and a solution")

    def oracle_replies(self) -> list[str]:
        """The reference solution in the agent's action format: one bash block, then DONE."""
        return [f"```bash\n{self.solution.strip()}\n```", "DONE"]


def format_result(r: CommandResult) -> str:
    """A command's result as the agent sees it."""
    head = f"[exit {r.exit_code}]" if r.exit_code is not None else "[no exit code]"
    if r.reason:
        head += f" [limit: {r.reason}]"
    return f"{head}\n{r.output}" if r.output else head


class ShellEnvironment:
    """A `ShellTask` in a fresh `Sandbox`: bash actions run there; `evaluate` runs the check."""

    def __init__(self, task: ShellTask, limits: SandboxLimits | None = None) -> None:
        self.task = task
        self.limits = limits or SandboxLimits(timeout_s=30.0, episode_s=300.0)
        self.sandbox: Sandbox | None = None

    def reset(self) -> Observation:
        """A fresh sandbox with the task's files and setup; the instruction as first observation."""
        self.close()
        self.sandbox = Sandbox(limits=self.limits).open()
        for name, content in self.task.files.items():
            self.sandbox.write_file(name, content)
        if self.task.setup:
            r = self.sandbox.run(self.task.setup)
            if not r.ok:
                raise RuntimeError(f"task {self.task.task_id}: setup failed: {format_result(r)}")
        return Observation(f"{self.task.instruction}\n\nYou are in {self.sandbox.workdir}.")

    def step(self, action: Action) -> StepOutcome:
        """Run a bash block."""
        if self.sandbox is None:
            raise RuntimeError("reset() first")
        if action.kind != "code":
            raise InvalidAction(f"this task takes ```bash blocks, DONE or FAIL; got a {action.kind} action")
        r = self.sandbox.run(action.content)
        return StepOutcome(format_result(r), info={"exit_code": r.exit_code, "reason": r.reason})

    def evaluate(self, answer: str | None) -> bool:
        """Whether the check command exits 0 in the final state (outside the agent's time budget)."""
        if self.sandbox is None:
            raise RuntimeError("reset() first")
        limits = dataclasses.replace(self.limits, episode_s=None)
        with Sandbox(self.sandbox.workdir, limits=limits, env=CHECK_ENV) as checker:
            return checker.run(self.task.check).ok

    def close(self) -> None:
        """Remove the sandbox."""
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
