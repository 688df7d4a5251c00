"""The Docker runner, for the public DevOps-Gym tasks (Terminal-Bench v1 images) where an engine
exists: `docker compose up` the task's environment, run the agent's commands with `exec` in its
client container, copy the tests in after the agent stops, run `run-tests.sh`, `compose down`.

There is no Docker daemon on the machines this package is developed on; `docker_available()` says
why, and the tests that need a daemon skip with that reason.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from iclr26.agents import Action, Agent, InvalidAction, Observation, StepOutcome, run_episode
from iclr26.core.errors import UserError
from iclr26.devops_gym.parser import ParseError, parse_pytest
from iclr26.devops_gym.runner import SHELL_PARSER, RunLimits, TestRun, TrialResult, trial_result, truncate
from iclr26.devops_gym.task import RUN_TESTS, SOLUTION, TESTS_DIR, Task

CLIENT = "client"
"""Terminal-Bench's name for the container the agent works in."""
DEFAULT_COMPOSE = """services:
  client:
    build:
      context: {context}
    command: ["sh", "-c", "sleep infinity"]
"""


def docker_available() -> tuple[bool, str]:
    """(True, "") when `docker compose` and a running daemon are reachable, else (False, why)."""
    if shutil.which("docker") is None:
        return False, "no docker command on PATH"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"docker info failed: {e}"
    if info.returncode != 0:
        return False, "no Docker daemon: " + (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
    return True, ""


@dataclass
class DockerEnvironment:
    """One task's compose project: `up`, `exec` commands in the client, `run_tests`, `down`."""

    task: Task
    project: str = field(default_factory=lambda: f"iclr26-{uuid.uuid4().hex[:10]}")
    timeout_s: float = 600.0
    test_run: TestRun | None = None

    expose_solution: bool = False
    command_timeout_s: float = 120.0

    def _compose(self) -> list[str]:
        files = [self.task.path / n for n in ("docker-compose.yaml", "docker-compose.yml")]
        found = next((f for f in files if f.is_file()), None)
        if found is None:  # a Dockerfile alone: Terminal-Bench's default one-service compose file
            if not (self.task.path / "Dockerfile").is_file():
                raise UserError(f"{self.task.task_id}: neither a docker-compose.yaml nor a Dockerfile")
            found = Path(tempfile.gettempdir()) / f"{self.project}-compose.yaml"
            found.write_text(DEFAULT_COMPOSE.format(context=self.task.path))
        return ["docker", "compose", "-p", self.project, "-f", str(found)]

    def _container(self) -> str:
        return subprocess.run(
            [*self._compose(), "ps", "-q", CLIENT], capture_output=True, text=True, check=True
        ).stdout.strip()

    def up(self) -> None:
        """Build and start the task's services."""
        ok, why = docker_available()
        if not ok:
            raise UserError(f"the Docker runner needs a Docker engine: {why}")
        subprocess.run([*self._compose(), "up", "-d", "--build"], check=True, timeout=self.timeout_s)

    def exec(self, command: str, timeout_s: float = 120.0) -> tuple[int, str]:
        """Run `command` with bash in the client container: (exit status, output)."""
        proc = subprocess.run(
            [*self._compose(), "exec", "-T", CLIENT, "bash", "-lc", command],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        return proc.returncode, truncate(proc.stdout + proc.stderr, 10_000)

    def run_tests(self) -> TestRun:
        """Copy tests/ and run-tests.sh into the client (only now), run them, parse pytest's output."""
        run = TestRun()
        container = self._container()
        subprocess.run(["docker", "cp", str(self.task.path / TESTS_DIR), f"{container}:/tests"], check=True)
        subprocess.run(
            ["docker", "cp", str(self.task.path / RUN_TESTS), f"{container}:/tests/{RUN_TESTS}"], check=True
        )
        try:
            _, run.output = self.exec(
                f"TEST_DIR=/tests bash /tests/{RUN_TESTS}", self.task.spec.max_test_timeout_sec
            )
        except subprocess.TimeoutExpired:
            run.failure_mode = "test_timeout"
            return run
        try:
            run.results = {k: v.value for k, v in parse_pytest(run.output).items()}
        except ParseError:
            run.failure_mode = "parse_error"
        return run

    # -- as an `iclr26.agents.Environment`, so the same agents run here ----------------------------

    def reset(self) -> Observation:
        """Start the services (and, for the oracle, copy `solution.sh` into the client's work dir);
        the instruction is the first observation."""
        self.up()
        if self.expose_solution:
            _, workdir = self.exec("pwd")
            target = f"{self._container()}:{workdir.strip()}/{SOLUTION}"
            subprocess.run(["docker", "cp", str(self.task.path / SOLUTION), target], check=True)
        return Observation(self.task.spec.instruction.strip())

    def step(self, action: Action) -> StepOutcome:
        """Run one bash block in the client container."""
        if action.kind != "code":
            raise InvalidAction(
                f"this task takes one ```bash block per turn, or DONE; got a {action.kind} action"
            )
        try:
            status, out = self.exec(action.content, self.command_timeout_s)
        except subprocess.TimeoutExpired:
            return StepOutcome("[timed out]")
        return StepOutcome(f"[exit {status}]\n{out}", info={"exit_code": status})

    def evaluate(self, answer: str | None) -> bool:
        """The task's tests, copied in after the agent stopped."""
        self.test_run = self.run_tests()
        return self.test_run.resolved

    def close(self) -> None:
        self.down()

    def down(self) -> None:
        """Stop and remove the task's containers and volumes."""
        subprocess.run(
            [*self._compose(), "down", "-v", "--remove-orphans"], check=False, timeout=self.timeout_s
        )


def run_docker_trial(task: Task, agent: Agent, limits: RunLimits, *, oracle: bool = False) -> TrialResult:
    """`agent` on `task` in its Docker environment, then the task's tests (as `runner.run_trial`)."""
    env = DockerEnvironment(task, expose_solution=oracle, command_timeout_s=limits.command_timeout_s)
    episode = run_episode(task.task_id, env, agent, SHELL_PARSER, limits.budget(task))
    return trial_result(task, agent, env.test_run, episode, setup_s=0.0, command_timeouts=0)


def docker_tasks(root: Path) -> list[Path]:
    """Task folders under `root` that only Docker can run (no `workspace/`)."""
    from iclr26.devops_gym.task import load_tasks

    return [t.path for t in load_tasks(root) if t.needs_docker]
