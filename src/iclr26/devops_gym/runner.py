"""The local runner: one Terminal-Bench task in a fresh sandboxed work dir, driven through tmux.

`run_trial(task, agent, limits)` does what Terminal-Bench's harness does, without Docker:
1. a fresh `Sandbox` work dir (no network, rlimits, and of the host only the system and the
   toolchains, read-only: not the task folder, its tests or `solution.sh`, nor other runs) holding
   a copy of the task's `workspace/`; the agent's terminal is a `TerminalSession` (tmux, 160x40)
   whose shell runs inside it. A monitored service (`services/`) is started in that shell before
   the agent's first turn;
2. the agent acts one bash command per turn (`execute`: per-command timeout, output truncated),
   until it submits, its steps or tokens run out, or the task's `max_agent_timeout_sec` passes;
3. only then are `run-tests.sh` and `tests/` copied into a host folder the agent cannot change,
   mounted read-only at `/run/tests` (`$TEST_DIR`), and run in a *separate* tmux session in the same
   work dir, with the task's `max_test_timeout_sec`; `run_tests_in_same_shell: true` runs them in the
   agent's shell (where that folder was mounted, empty, from the start). The verifier starts from a
   clean environment (`env -i`: a fresh empty HOME, no user site-packages, no rc files, no
   PYTEST_ADDOPTS of the agent's), so files the agent planted in its work dir or HOME
   (usercustomize, .pth, pytest plugins, dotfiles) do not run in it. Its output goes to a folder of
   its own, read by the host without following links, at most `TEST_OUTPUT_BYTES`. The host never
   writes into, or changes owners in, a folder the agent can change;
4. pytest's summary decides: resolved iff every parsed test passed (`parser.resolved`).

The failure modes are Terminal-Bench's: `agent_timeout`, `test_timeout`, `parse_error`,
`context_length_exceeded` and `agent_error`; `none` when the tests ran and were read.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iclr26.agents import Agent, Budget, Episode, Observation, StepOutcome, run_episode
from iclr26.agents.actions import Action, ActionParser, InvalidAction
from iclr26.agents.sandbox import Sandbox, SandboxLimits, read_untrusted, readable_by_all
from iclr26.agents.scratch import scratch_dir
from iclr26.agents.terminal import TerminalSession, TerminalTimeout
from iclr26.core.validation import check_int, check_seconds
from iclr26.devops_gym.parser import ParseError, TestStatus, parse_pytest, resolved
from iclr26.devops_gym.task import RUN_TESTS, SOLUTION, TESTS_DIR, Task, TaskError
from iclr26.devops_gym.toolchains import toolchain_binds, toolchain_env

FAILURE_MODES: tuple[str, ...] = (
    "none",
    "agent_timeout",
    "test_timeout",
    "parse_error",
    "context_length_exceeded",
    "agent_error",
)
TESTS_INSIDE = "/run/tests"  # Terminal-Bench mounts /tests; our read-only root only takes mounts on its tmpfs
OUTPUT_INSIDE = "/run/test-output"  # where the verifier writes its output (its own folder)
TEST_OUTPUT_BYTES = 8 * 1024 * 1024  # the most of the verifier's output the host reads (its end)
VERIFIER_ENV = {
    "PYTHONNOUSERSITE": "1",  # no usercustomize or .pth from a user site-packages
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTEST_ADDOPTS": "-p no:cacheprovider",
}
"""Set for the verifier on top of the sandbox's PATH/LANG/TMPDIR and the toolchains' variables."""
SHELL_PARSER = ActionParser(code_languages=("bash", "sh", "shell", ""), controls=("DONE",))
"""One ```bash block per turn, or DONE (mini-SWE-agent's submit)."""
_SERVICE_DIR = ".service"
_MiB = 1024 * 1024


@dataclass(frozen=True)
class RunLimits:
    """The runner's limits; the agent's wall clock is the task's `max_agent_timeout_sec`."""

    command_timeout_s: float = 120.0
    """wall clock of one agent command; past it the command gets C-c and the agent is told"""
    max_steps: int = 30
    """agent turns (mini-SWE-agent's step limit)"""
    max_tokens: int | None = None
    """prompt + completion tokens per task (None: no limit)"""
    output_chars: int = 10_000
    """command output shown to the agent: the first and last halves are kept"""
    agent_timeout_s: float | None = None
    """overrides every task's max_agent_timeout_sec (None: the task's own)"""
    max_processes: int = 2048
    """processes and threads in the sandbox (the JVM starts many threads)"""
    open_files: int = 1024
    """open files per process"""

    def __post_init__(self) -> None:
        check_seconds("command_timeout_s", self.command_timeout_s)
        check_int("max_steps", self.max_steps, 1)
        check_int("max_tokens", self.max_tokens, 1, optional=True)
        check_int("output_chars", self.output_chars, 200)
        check_seconds("agent_timeout_s", self.agent_timeout_s, optional=True)
        check_int("max_processes", self.max_processes, 64)
        check_int("open_files", self.open_files, 64)

    def agent_wall_s(self, task: Task) -> float:
        """The agent's wall clock on `task`: `agent_timeout_s`, else the task's `max_agent_timeout_sec`."""
        return self.agent_timeout_s or task.spec.max_agent_timeout_sec

    def budget(self, task: Task) -> Budget:
        """The episode budget on `task`: steps, tokens and the agent's wall clock."""
        return Budget(
            max_steps=self.max_steps, max_tokens=self.max_tokens, max_wall_s=self.agent_wall_s(task)
        )

    def sandbox_limits(self) -> SandboxLimits:
        """Per-process limits for a task's sandbox. No address-space or CPU-second cap: the JVM and
        Go reserve large address ranges, and a monitored CPU spike must run; the wall clocks bound both."""
        return SandboxLimits(
            timeout_s=self.command_timeout_s,
            episode_s=None,
            cpu_s=None,
            memory_bytes=None,
            max_processes=self.max_processes,
            open_files=self.open_files,
            tmpfs_bytes=512 * _MiB,
        )


@dataclass
class TestRun:
    """The verifier's run: parsed statuses, the raw output, and how it ended."""

    __test__ = False

    results: dict[str, str] = field(default_factory=dict)
    output: str = ""
    failure_mode: str = "none"
    wall_s: float = 0.0

    @property
    def resolved(self) -> bool:
        return self.failure_mode == "none" and resolved({k: TestStatus(v) for k, v in self.results.items()})


def truncate(text: str, limit: int) -> str:
    """`text` with its middle cut to fit `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def _private_folder(name: str, mode: int) -> Path:
    """A fresh host folder of ours (`mkdtemp`), with `mode`."""
    folder = scratch_dir(f"iclr26-{name}-")
    os.chmod(folder, mode)
    return folder


def _copy_in(src: Path, dst: Path, uid: int, gid: int) -> None:
    """Copy `src` (a file or folder) to `dst` on the host and give it to the sandbox uid."""
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dst)
    if os.geteuid() == 0:
        for root, dirs, files in os.walk(dst):
            for name in (*dirs, *files):
                os.lchown(os.path.join(root, name), uid, gid)
        os.lchown(dst, uid, gid)


class TaskEnvironment:
    """A task's sandbox and terminal as an `iclr26.agents.Environment`; `evaluate` runs the tests.

    `expose_solution` copies `solution.sh` into the work dir (the oracle's runs only)."""

    def __init__(
        self,
        task: Task,
        limits: RunLimits = RunLimits(),
        *,
        expose_solution: bool = False,
        agent_timeout_s: float | None = None,
    ) -> None:
        if task.needs_docker:
            raise TaskError(f"{task.task_id} has no workspace/ and needs Docker: use the Docker runner")
        if expose_solution and not task.has_solution:
            raise TaskError(f"{task.task_id}: no {SOLUTION} for the oracle")
        self.task = task
        self.limits = limits
        self.expose_solution = expose_solution
        self.agent_timeout_s = agent_timeout_s
        self.sandbox: Sandbox | None = None
        self.terminal: TerminalSession | None = None
        self.test_run: TestRun | None = None
        self.command_timeouts = 0
        self.setup_s = 0.0
        self.deadline: float | None = None  # the agent's wall clock ends here (commands are cut to it)
        self._tests: Path | None = None  # host folder of the tests, ours; read-only inside
        self._output: Path | None = None  # host folder the verifier writes its output to
        self._output_name = ""

    def reset(self) -> Observation:
        """Fresh work dir with the workspace, the service started, the instruction as first observation."""
        self.close()
        started = time.perf_counter()
        self.sandbox = sb = Sandbox(
            limits=self.limits.sandbox_limits(), env=toolchain_env(), ro_binds=toolchain_binds()
        ).open()
        self._tests, self._output = _private_folder("tests", 0o755), _private_folder("test-output", 0o700)
        if os.geteuid() == 0:
            os.lchown(self._output, sb.uid, sb.gid)
        if self.task.workspace is not None:
            _copy_in(self.task.workspace, sb.workdir, sb.uid, sb.gid)
        if self.expose_solution:
            _copy_in(self.task.path / SOLUTION, sb.workdir / SOLUTION, sb.uid, sb.gid)
        if self.task.service is not None:
            _copy_in(self.task.service.parent, sb.workdir / _SERVICE_DIR, sb.uid, sb.gid)
        # a same-shell task's verifier runs in this shell: its folders are mounted now, the tests'
        # read-only and still empty (the tests enter only after the agent stopped)
        mounts: dict[str, Any] = {}
        if self.task.spec.run_tests_in_same_shell:
            mounts = {"binds": {self._output: OUTPUT_INSIDE}, "ro_binds": {self._tests: TESTS_INSIDE}}
        self.terminal = TerminalSession.in_sandbox(sb, **mounts).start()
        if self.task.service is not None:
            # the service starts from the agent's own shell (same pid namespace, so ps sees it);
            # its files are removed once it runs: the agent observes processes, not source
            start = f"bash {_SERVICE_DIR}/start.sh > /dev/null 2>&1; rm -rf {_SERVICE_DIR}"
            self.terminal.run(start, timeout_s=30.0)
        self.terminal.run("clear", timeout_s=10.0)
        self.terminal.tmux("clear-history")
        self.setup_s = time.perf_counter() - started
        if self.agent_timeout_s is not None:
            self.deadline = time.perf_counter() + self.agent_timeout_s
        return Observation(f"{self.task.spec.instruction.strip()}\n\nYour shell is in {sb.workdir}.")

    def step(self, action: Action) -> StepOutcome:
        """Run one bash block in the agent's terminal."""
        if self.terminal is None:
            raise RuntimeError("reset() first")
        if action.kind != "code":
            raise InvalidAction(
                f"this task takes one ```bash block per turn, or DONE; got a {action.kind} action"
            )
        timeout = self.limits.command_timeout_s
        if self.deadline is not None:
            timeout = max(0.1, min(timeout, self.deadline - time.perf_counter()))
        try:
            out = self.terminal.execute(action.content, timeout_s=timeout)
            status = self.terminal.last_status
            head = f"[exit {status}]" if status is not None else "[exit status unknown]"
        except TerminalTimeout:
            self.command_timeouts += 1
            self.terminal.interrupt()
            time.sleep(0.2)
            out = self.terminal.capture()
            status, head = None, f"[timed out after {timeout:.0f} s and was interrupted (C-c)]"
        text = f"{head}\n{truncate(out, self.limits.output_chars)}" if out else head
        return StepOutcome(text, info={"exit_code": status})

    def evaluate(self, answer: str | None) -> bool:
        """Copy the tests in (only now), run them in a separate session, parse pytest's summary."""
        if self.sandbox is None or self.terminal is None:
            raise RuntimeError("reset() first")
        self.test_run = self.run_tests()
        return self.test_run.resolved

    def run_tests(self) -> TestRun:
        """`run-tests.sh` with `$TEST_DIR`, in its own session (or the agent's, if the task says so),
        from a clean environment; its output read back from a folder of its own."""
        assert self.sandbox is not None and self.terminal is not None
        assert self._tests is not None and self._output is not None
        sb, spec = self.sandbox, self.task.spec
        started = time.perf_counter()
        same_shell = spec.run_tests_in_same_shell
        if not same_shell:
            self.terminal.close()  # the agent's shell and everything it left running stop here
        # a folder only the host can change (root-owned, read-only inside): no owner changes needed
        shutil.copytree(self.task.path / TESTS_DIR, self._tests, symlinks=True, dirs_exist_ok=True)
        shutil.copy2(self.task.path / RUN_TESTS, self._tests / RUN_TESTS)
        readable_by_all(self._tests)
        run = TestRun()
        try:
            if same_shell:
                self.terminal.run(self._verifier_command(), timeout_s=spec.max_test_timeout_sec)
            else:
                mounts = {"binds": {self._output: OUTPUT_INSIDE}, "ro_binds": {self._tests: TESTS_INSIDE}}
                with TerminalSession.in_sandbox(sb, **mounts) as session:
                    session.run(self._verifier_command(), timeout_s=spec.max_test_timeout_sec)
        except TerminalTimeout:
            run.failure_mode = "test_timeout"
        data = read_untrusted(self._output / self._output_name, TEST_OUTPUT_BYTES)
        run.output = data.decode(errors="replace") if data is not None else ""
        if run.failure_mode == "none":
            try:
                run.results = {k: v.value for k, v in parse_pytest(run.output).items()}
            except ParseError:
                run.failure_mode = "parse_error"
        run.wall_s = time.perf_counter() - started
        return run

    def _verifier_command(self) -> str:
        """The shell line that runs `run-tests.sh` in the work dir from a clean environment: `env -i`,
        a fresh empty HOME, no rc files, no user site-packages."""
        assert self.sandbox is not None
        # a name the agent cannot foresee: a same-shell agent may write the output folder beforehand
        self._output_name = f"output-{secrets.token_hex(8)}.txt"
        env = {k: v for k, v in self.sandbox.env.items() if k != "HOME"}
        env.update(TEST_DIR=TESTS_INSIDE, **VERIFIER_ENV)
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        workdir = shlex.quote(str(self.sandbox.workdir))
        return (
            f'cd {workdir} && home="$(mktemp -d /tmp/iclr26-verifier-home-XXXXXXXX)" && '
            f'env -i {assigns} HOME="$home" bash --noprofile --norc {TESTS_INSIDE}/{RUN_TESTS} '
            f"> {OUTPUT_INSIDE}/{self._output_name} 2>&1"
        )

    def close(self) -> None:
        if self.terminal is not None:
            self.terminal.close()
            self.terminal = None
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        for folder in (self._tests, self._output):  # rmtree removes links, never follows them
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        self._tests = self._output = None


@dataclass
class TrialResult:
    """One agent on one task: the verdict, why it ended, and what it cost."""

    task_id: str
    category: str
    difficulty: str
    agent: str
    resolved: bool
    failure_mode: str
    tests: dict[str, str]
    steps: int
    prompt_tokens: int
    completion_tokens: int
    agent_s: float
    test_s: float
    setup_s: float
    stop_reason: str
    command_timeouts: int
    episode: dict[str, Any] = field(default_factory=dict, repr=False)


def _failure_mode(episode: Episode, test_run: TestRun | None) -> str:
    """Terminal-Bench's name for how the trial ended (the agent's failure first)."""
    error = str(episode.meta.get("error", ""))
    if episode.stop_reason == "max_wall_time":
        return "agent_timeout"
    if episode.stop_reason == "error":
        low = error.lower()
        too_long = "context" in low and any(w in low for w in ("length", "window", "size", "exceed"))
        return "context_length_exceeded" if too_long else "agent_error"
    return test_run.failure_mode if test_run is not None else "agent_error"


def run_trial(
    task: Task, agent: Agent, limits: RunLimits = RunLimits(), *, oracle: bool = False
) -> TrialResult:
    """`agent` on `task` in a fresh sandbox, then the task's tests; never raises for the agent's faults."""
    env = TaskEnvironment(task, limits, expose_solution=oracle, agent_timeout_s=limits.agent_wall_s(task))
    episode = run_episode(task.task_id, env, agent, SHELL_PARSER, limits.budget(task))
    return trial_result(task, agent, env.test_run, episode, env.setup_s, env.command_timeouts)


def trial_result(
    task: Task,
    agent: Agent,
    test_run: TestRun | None,
    episode: Episode,
    setup_s: float,
    command_timeouts: int,
) -> TrialResult:
    """The record of one finished trial (any runner)."""
    return TrialResult(
        task_id=task.task_id,
        category=task.spec.category,
        difficulty=task.spec.difficulty,
        agent=agent.name,
        resolved=bool(episode.success),
        failure_mode=_failure_mode(episode, test_run),
        tests=dict(test_run.results) if test_run else {},
        steps=len(episode.steps),
        prompt_tokens=episode.prompt_tokens,
        completion_tokens=episode.completion_tokens,
        agent_s=round(episode.wall_s - (test_run.wall_s if test_run else 0.0), 3),
        test_s=round(test_run.wall_s, 3) if test_run else 0.0,
        setup_s=round(setup_s, 3),
        stop_reason=episode.stop_reason,
        command_timeouts=command_timeouts,
        episode=episode.to_json(),
    )
