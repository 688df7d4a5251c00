"""The Docker runner, for the public DevOps-Gym tasks (Terminal-Bench v1 images) where an engine
exists: `docker compose up` the task's environment, run the agent's commands with `exec` in its
client container, copy the tests in after the agent stops, run `run-tests.sh`, `compose down`.

Containment (`DockerLimits`):
- the compose file `docker compose` reads is ours, written with PyYAML (never by string formatting)
  in a private folder: the task's own compose file (or Terminal-Bench's one-service default for a
  Dockerfile alone) with, on every service, no network (`network_mode: none` for one service; for
  several, every network `internal`, so services reach each other and nothing else) unless
  `DockerLimits.network`, and CPU, memory and process limits;
- `docker compose` runs with a minimal environment (PATH, the Docker client's own variables and
  Terminal-Bench's `T_BENCH_*`), so `${...}` in a compose file never takes a value from the host's
  environment (API keys), and every `$` we write is escaped as `$$`;
- each command runs under `timeout -s KILL` inside the container (its process group dies there, not
  only the client here), and the client is killed at the same time plus a grace; at most
  `output_bytes` of its output are kept (first and last halves);
- the tests enter only after the agent stopped: copied to a fresh random path, then renamed onto
  `/tests` after removing whatever the agent left there (a folder or a link of its own cannot divert
  the copy); they run with a fresh empty HOME, no rc files, no user site-packages and
  `-p no:cacheprovider`.
Not contained: processes the agent left running in the container still run while the tests do (as in
Terminal-Bench); a task's own compose file is trusted (its volumes, privileges, images).

There is no Docker daemon on the machines this package is developed on; `docker_available()` says
why, and the tests that need a daemon skip with that reason.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from iclr26.agents import Action, Agent, InvalidAction, Observation, StepOutcome, run_episode
from iclr26.agents.sandbox import Captured, run_capped
from iclr26.core.errors import UserError
from iclr26.core.validation import check_int
from iclr26.devops_gym.parser import ParseError, parse_pytest
from iclr26.devops_gym.runner import SHELL_PARSER, RunLimits, TestRun, TrialResult, trial_result, truncate
from iclr26.devops_gym.task import RUN_TESTS, SOLUTION, TESTS_DIR, Task

CLIENT = "client"
"""Terminal-Bench's name for the container the agent works in."""
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml")
TESTS_PATH = "/tests"
_GRACE_S = 10.0  # the client here is killed this long after the command's own timeout inside
_CLIENT_ENV = ("PATH", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY")
"""The host variables `docker compose` keeps (where the engine is); HOME becomes DOCKER_CONFIG."""
_VERIFIER_ENV = {
    "PYTHONNOUSERSITE": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTEST_ADDOPTS": "-p no:cacheprovider",
}


@dataclass(frozen=True)
class DockerLimits:
    """What a task's containers may use: no network unless asked, CPUs, memory, processes, output."""

    network: bool = False  # False: no network (one service), or internal networks only (several)
    cpus: float = 4.0  # CPUs per service (at most the machine's)
    memory_bytes: int = 8 * 1024**3  # memory per service
    pids: int = 4096  # processes and threads per service
    output_bytes: int = 1024 * 1024  # output of one command kept (its first and last halves)

    def __post_init__(self) -> None:
        if not isinstance(self.network, bool):
            raise TypeError(f"DockerLimits.network must be True or False, got {self.network!r}")
        if not (isinstance(self.cpus, int | float) and not isinstance(self.cpus, bool) and self.cpus > 0):
            raise ValueError(f"DockerLimits.cpus must be a positive number of CPUs, got {self.cpus!r}")
        check_int("DockerLimits.memory_bytes", self.memory_bytes, 64 * 1024**2, unit="bytes")
        check_int("DockerLimits.pids", self.pids, 16, unit="processes")
        check_int("DockerLimits.output_bytes", self.output_bytes, 1024, unit="bytes")


def escape(value: str) -> str:
    """`value` as a literal in a compose file: `$` doubled, so compose interpolates nothing in it."""
    return value.replace("$", "$$")


def compose_spec(task: Task, limits: DockerLimits = DockerLimits()) -> dict[str, Any]:
    """The compose project we run for `task`: its own compose file (or Terminal-Bench's default
    one-service file for a Dockerfile alone) with the network cut and the limits set on every service."""
    found = next((task.path / n for n in COMPOSE_FILES if (task.path / n).is_file()), None)
    if found is not None:
        try:
            spec = yaml.safe_load(found.read_text())
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            raise UserError(f"{found}: not valid YAML: {str(e).splitlines()[0]}") from None
        if not isinstance(spec, dict) or not isinstance(spec.get("services"), dict) or not spec["services"]:
            raise UserError(f"{found}: field 'services' must be a mapping of at least one service")
    elif (task.path / "Dockerfile").is_file():
        spec = {
            "services": {
                CLIENT: {
                    "build": {"context": escape(str(task.path))},
                    "command": ["sh", "-c", "sleep infinity"],
                }
            }
        }
    else:
        raise UserError(f"{task.task_id}: neither a docker-compose.yaml nor a Dockerfile")
    services = spec["services"]
    if CLIENT not in services:
        raise UserError(f"{found}: no {CLIENT!r} service (the container the agent works in)")
    for name, service in services.items():
        if not isinstance(service, dict):
            raise UserError(f"{found}: service {name!r} must be a mapping")
        cpus = min(limits.cpus, float(os.cpu_count() or 1))  # the engine refuses more than it has
        service.update(cpus=cpus, mem_limit=limits.memory_bytes, pids_limit=limits.pids)
        if not limits.network:
            service.pop("ports", None)  # nothing published on the host
            if len(services) == 1:
                service.pop("networks", None)
                service["network_mode"] = "none"
            elif service.get("network_mode") is not None:
                raise UserError(
                    f"{found}: service {name!r} sets network_mode; without DockerLimits.network only "
                    "internal networks are allowed"
                )
    if not limits.network and len(services) > 1:
        networks = spec.get("networks") or {}
        if not isinstance(networks, dict):
            raise UserError(f"{found}: field 'networks' must be a mapping")
        networks.setdefault("default", {})
        spec["networks"] = {k: {**(v or {}), "internal": True} for k, v in networks.items()}
    return spec


@cache
def compose_command() -> tuple[str, ...] | None:
    """How Compose is called here: `docker compose` (the v2 plugin), else `docker-compose` (v1, as
    Debian's docker-compose package has it), else None."""
    for argv in (("docker", "compose"), ("docker-compose",)):
        if shutil.which(argv[0]) is None:
            continue
        try:
            done = subprocess.run([*argv, "version"], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return argv
    return None


def docker_available() -> tuple[bool, str]:
    """(True, "") when Compose and a running daemon are reachable, else (False, why)."""
    if shutil.which("docker") is None:
        return False, "no docker command on PATH"
    if compose_command() is None:
        return False, "no `docker compose` (the Compose v2 plugin) and no `docker-compose`"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"docker info failed: {e}"
    if info.returncode != 0:
        return False, "no Docker daemon: " + (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
    return True, ""


def compose_env(task: Task, project: str) -> dict[str, str]:
    """The environment `docker compose` runs with: where the engine is, and Terminal-Bench's
    variables; nothing else of the host's (a `${SECRET}` in a compose file stays empty)."""
    env = {k: os.environ[k] for k in _CLIENT_ENV if k in os.environ}
    if "DOCKER_CONFIG" in os.environ:
        env["DOCKER_CONFIG"] = os.environ["DOCKER_CONFIG"]
    elif "HOME" in os.environ:
        env["DOCKER_CONFIG"] = str(Path(os.environ["HOME"]) / ".docker")
    env.update(
        T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME=f"{project}-client",
        T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME=f"{project}-client",
        T_BENCH_TASK_DOCKER_NAME_PREFIX=project,
        T_BENCH_TEST_DIR=TESTS_PATH,
        T_BENCH_CONTAINER_LOGS_PATH="/var/log/tbench",
        T_BENCH_CONTAINER_AGENT_LOGS_PATH="/agent-logs",
        T_BENCH_TASK_LOGS_PATH=str(Path(tempfile.gettempdir()) / f"{project}-logs"),
        T_BENCH_TASK_AGENT_LOGS_PATH=str(Path(tempfile.gettempdir()) / f"{project}-agent-logs"),
    )
    return env


def in_container(command: str, timeout_s: float, *, login: bool = True) -> list[str]:
    """argv (for `exec`) that runs `command` with bash inside the container under `timeout -s KILL`
    (its process group is killed there at `timeout_s`); bash without `timeout` in the image."""
    shell = "bash -lc" if login else "bash --noprofile --norc -c"
    wrapper = (
        f'if command -v timeout >/dev/null 2>&1; then exec timeout -s KILL "$0" {shell} "$1"; '
        f'else exec {shell} "$1"; fi'
    )
    return ["sh", "-c", wrapper, f"{max(1, round(timeout_s))}s", command]


@dataclass
class DockerEnvironment:
    """One task's compose project: `up`, `exec` commands in the client, `run_tests`, `down`."""

    task: Task
    project: str = field(default_factory=lambda: f"iclr26-{uuid.uuid4().hex[:10]}")
    timeout_s: float = 600.0
    test_run: TestRun | None = None

    expose_solution: bool = False
    command_timeout_s: float = 120.0
    limits: DockerLimits = field(default_factory=DockerLimits)
    output_chars: int = 10_000
    remove_images: bool = False  # `down` also removes the images compose built for the task
    _folder: Path | None = field(default=None, repr=False)

    def compose_file(self) -> Path:
        """Our compose file for the task (written once, in a private folder, with PyYAML)."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix=f"{self.project}-"))
        path = self._folder / "compose.yaml"
        if not path.exists():
            spec = compose_spec(self.task, self.limits)
            path.write_text(yaml.safe_dump(spec, sort_keys=False, width=100))
        return path

    def _compose(self) -> list[str]:
        directory = ["--project-directory", str(self.task.path)]  # the task's relative paths
        base = list(compose_command() or ("docker", "compose"))
        return [*base, "-p", self.project, *directory, "-f", str(self.compose_file())]

    def _container(self) -> str:
        """The client container's id."""
        return self._run(["ps", "-q", CLIENT], timeout_s=60.0).output.strip()

    def _copy_to_client(self, source: Path, target: str) -> None:
        """`docker cp` a host file or folder to `target` in the client container."""
        done = run_capped(
            ["docker", "cp", str(source), f"{self._container()}:{target}"],
            timeout_s=self.timeout_s,
            output_bytes=self.limits.output_bytes,
            env=compose_env(self.task, self.project),
        )
        if done.exit_code != 0:
            raise UserError(f"docker cp {source.name} failed: {done.output.strip()[-500:]}")

    def _run(self, args: list[str], *, timeout_s: float | None = None, check: bool = True) -> Captured:
        """`docker compose <args>` with our environment, bounded in time and output."""
        done = run_capped(
            [*self._compose(), *args],
            timeout_s=timeout_s or self.timeout_s,
            output_bytes=self.limits.output_bytes,
            env=compose_env(self.task, self.project),
        )
        if check and (done.exit_code != 0):
            what = "timed out" if done.timed_out else f"failed (exit {done.exit_code})"
            raise UserError(f"docker compose {args[0]} {what}: {done.output.strip()[-500:]}")
        return done

    def up(self) -> None:
        """Build and start the task's services."""
        ok, why = docker_available()
        if not ok:
            raise UserError(f"the Docker runner needs a Docker engine: {why}")
        self._run(["up", "-d", "--build"])

    def exec(self, command: str, timeout_s: float = 120.0, *, env: dict[str, str] | None = None) -> Captured:
        """Run `command` with bash in the client container: killed there at `timeout_s`, and the
        client here `_GRACE_S` later; the output bounded by `limits.output_bytes`."""
        flags = [f for k, v in (env or {}).items() for f in ("-e", f"{k}={v}")]
        argv = ["exec", "-T", *flags, CLIENT, *in_container(command, timeout_s, login=env is None)]
        done = self._run(argv, timeout_s=timeout_s + _GRACE_S, check=False)
        if done.exit_code == 137 and done.duration_s >= timeout_s:  # `timeout -s KILL` fired inside
            return Captured(None, done.output, True, done.truncated, done.duration_s)
        return done

    def run_tests(self) -> TestRun:
        """Copy tests/ and run-tests.sh into the client (only now, onto a `/tests` of ours), run them
        from a clean HOME and environment, parse pytest's output."""
        run = TestRun()
        fresh = f"/.iclr26-tests-{secrets.token_hex(8)}"
        staging = Path(tempfile.mkdtemp(prefix=f"{self.project}-tests-"))
        try:
            shutil.copytree(self.task.path / TESTS_DIR, staging / "tests", symlinks=True)
            shutil.copy2(self.task.path / RUN_TESTS, staging / "tests" / RUN_TESTS)
            self._copy_to_client(staging / "tests", fresh)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        # rm removes a link itself, never its target; mv -T refuses to move into a folder
        placed = self.exec(f"rm -rf {TESTS_PATH} && mv -T {fresh} {TESTS_PATH}", 60.0, env={})
        if placed.exit_code != 0:
            run.output = f"the tests could not be placed at {TESTS_PATH}: {placed.output.strip()[-300:]}"
            run.failure_mode = "parse_error"
            return run
        verify = f'HOME="$(mktemp -d)" && exec bash --noprofile --norc {TESTS_PATH}/{RUN_TESTS}'
        env = {"TEST_DIR": TESTS_PATH, "BASH_ENV": "", "ENV": "", **_VERIFIER_ENV}
        done = self.exec(verify, self.task.spec.max_test_timeout_sec, env=env)
        run.output = done.output
        if done.timed_out:
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
            workdir = self.exec("pwd", 30.0).output.strip()
            self._copy_to_client(self.task.path / SOLUTION, f"{workdir}/{SOLUTION}")
        return Observation(self.task.spec.instruction.strip())

    def step(self, action: Action) -> StepOutcome:
        """Run one bash block in the client container."""
        if action.kind != "code":
            raise InvalidAction(
                f"this task takes one ```bash block per turn, or DONE; got a {action.kind} action"
            )
        done = self.exec(action.content, self.command_timeout_s)
        out = truncate(done.output, self.output_chars)
        if done.timed_out:
            return StepOutcome(f"[timed out after {self.command_timeout_s:.0f} s and was killed]\n{out}")
        return StepOutcome(f"[exit {done.exit_code}]\n{out}", info={"exit_code": done.exit_code})

    def evaluate(self, answer: str | None) -> bool:
        """The task's tests, copied in after the agent stopped."""
        self.test_run = self.run_tests()
        return self.test_run.resolved

    def close(self) -> None:
        self.down()

    def down(self) -> None:
        """Stop and remove the task's containers and volumes, and our compose file."""
        if self._folder is None:
            return
        try:
            rmi = ["--rmi", "local"] if self.remove_images else []
            self._run(["down", "-v", "--remove-orphans", *rmi], check=False)
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def run_docker_trial(task: Task, agent: Agent, limits: RunLimits, *, oracle: bool = False) -> TrialResult:
    """`agent` on `task` in its Docker environment, then the task's tests (as `runner.run_trial`)."""
    env = DockerEnvironment(
        task,
        expose_solution=oracle,
        command_timeout_s=limits.command_timeout_s,
        output_chars=limits.output_chars,
    )
    episode = run_episode(task.task_id, env, agent, SHELL_PARSER, limits.budget(task))
    return trial_result(task, agent, env.test_run, episode, setup_s=0.0, command_timeouts=0)


def docker_tasks(root: Path) -> list[Path]:
    """Task folders under `root` that only Docker can run (no `workspace/`)."""
    from iclr26.devops_gym.task import load_tasks

    return [t.path for t in load_tasks(root) if t.needs_docker]
