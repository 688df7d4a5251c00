"""Issue 57, item 8: the Docker runner's containment. The compose file `docker compose` reads is
parsed back (no network, limits on every service, nothing of the host's environment, a `$` in a
path kept literal); the host-side client and the in-container wrapper are run for real on this
machine (endless output is bounded; a command past its timeout dies with its process group). With a
Docker engine and a local Debian image, an agent's own /tests cannot divert the verifier's copy.

Before the fix the compose file was formatted from a string (a path with `${HOME}` was interpolated
from the host's environment by compose; no network or resource limit), output was captured whole,
and a timed-out command was left running in the container."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import yaml

from iclr26.agents.sandbox import run_capped
from iclr26.core.errors import UserError
from iclr26.devops_gym.docker import (
    CLIENT,
    DockerEnvironment,
    DockerLimits,
    compose_env,
    docker_available,
    in_container,
)
from iclr26.devops_gym.task import load_task
from tests.waiting import wait_until

TASK_YAML = "instruction: Write ok to ./marker.\ncategory: build\n"
TESTS = "def test_marker():\n    assert open('/app/marker').read().strip() == 'ok'\n"
RUN_TESTS = "#!/bin/bash\ncd $TEST_DIR && python3 -m pytest -rA test_outputs.py\n"


def _task(folder: Path, files: dict[str, str]):
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text(TASK_YAML)
    (folder / "run-tests.sh").write_text(RUN_TESTS)
    (folder / "tests").mkdir()
    (folder / "tests" / "test_outputs.py").write_text(TESTS)
    for name, text in files.items():
        (folder / name).write_text(text)
    return load_task(folder)


def _compose(task, limits=None):
    env = DockerEnvironment(task, limits=limits or DockerLimits())
    try:
        return yaml.safe_load(env.compose_file().read_text()), env.compose_file().read_text()
    finally:
        env.down()


def test_a_dockerfile_task_runs_without_network_under_limits_and_a_dollar_stays_literal(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("ICLR26_TEST_SECRET", "sk-secret-value")
    task = _task(tmp_path / "t${HOME}x" / "toy", {"Dockerfile": "FROM debian:bookworm-slim\n"})
    spec, text = _compose(task, DockerLimits(cpus=1.5, memory_bytes=512 * 1024**2, pids=128))
    client = spec["services"][CLIENT]
    assert client["network_mode"] == "none"
    assert (client["cpus"], client["mem_limit"], client["pids_limit"]) == (1.5, 512 * 1024**2, 128)
    # compose reads `$$` as a literal `$`: the folder name is not interpolated from HOME
    assert client["build"]["context"] == str(task.path).replace("$", "$$")
    assert "${HOME}" not in text.replace("$${HOME}", "")
    env = compose_env(task, "p")
    assert "ICLR26_TEST_SECRET" not in env and "HOME" not in env
    assert "sk-secret-value" not in text and "sk-secret-value" not in env.values()


def test_a_tasks_compose_file_gets_internal_networks_limits_and_no_published_ports(tmp_path):
    compose = {
        "services": {
            "client": {"build": {"context": "."}, "ports": ["8080:80"], "environment": ["K=${SECRET}"]},
            "db": {"image": "postgres", "networks": ["back"]},
        },
        "networks": {"back": {}},
    }
    task = _task(tmp_path / "toy", {"docker-compose.yaml": yaml.safe_dump(compose)})
    spec, _ = _compose(task)
    assert all(n["internal"] is True for n in spec["networks"].values()) and "default" in spec["networks"]
    for service in spec["services"].values():
        assert "ports" not in service and service["pids_limit"] == DockerLimits().pids
    compose["services"]["db"]["network_mode"] = "host"
    (task.path / "docker-compose.yaml").write_text(yaml.safe_dump(compose))
    with pytest.raises(UserError, match="network_mode"):
        _compose(task)
    assert "network_mode" not in _compose(task, DockerLimits(network=True))[0]["services"]["client"]


def test_endless_output_is_bounded_and_a_sleeper_is_killed_at_its_timeout():
    start = time.monotonic()
    done = run_capped(["yes", "spam"], timeout_s=1.0, output_bytes=4096)
    assert done.timed_out and done.truncated and len(done.output) < 4096 + 200
    assert time.monotonic() - start < 5
    # the wrapper that every command runs under in the container, run here: `timeout -s KILL` takes
    # the command's whole process group, background jobs included, at the command's own timeout
    marker = f"iclr26-sleeper-{time.monotonic_ns()}"
    argv = in_container(f"(exec -a {marker} sleep 60) & sleep 60", 1.0, login=False)
    done = run_capped(argv, timeout_s=20.0, output_bytes=4096)
    assert not done.timed_out and done.exit_code == 137 and done.duration_s < 10

    def gone() -> bool:
        return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 1

    wait_until(gone, 5.0, "the background sleeper dies with the timed-out command")


needs_engine = pytest.mark.skipif(
    not docker_available()[0], reason=f"no Docker engine: {docker_available()[1]}"
)


@needs_engine
def test_an_agents_own_tests_folder_cannot_divert_the_verifier(tmp_path):
    image = subprocess.run(["docker", "image", "inspect", "debian:bookworm-slim"], capture_output=True)
    if image.returncode != 0:
        pytest.skip("no local debian:bookworm-slim image (and no registry)")
    dockerfile = "FROM debian:bookworm-slim\nRUN apt-get install -y python3-pytest || true\nWORKDIR /app\n"
    task = _task(tmp_path / "toy", {"Dockerfile": dockerfile})
    env = DockerEnvironment(task, command_timeout_s=5.0)
    try:
        env.reset()
        fake = "def test_marker():\n    pass\n"
        env.exec(f"mkdir -p /tests && printf '{fake}' > /tests/test_outputs.py && echo no > marker", 30)
        assert not env.run_tests().resolved
        assert env.exec("sleep 60", 2.0).timed_out
        assert env.exec("yes", 2.0).truncated
    finally:
        env.down()
