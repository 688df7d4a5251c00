"""Issue 57, item 8: the Docker runner's containment. The compose file `docker compose` reads is
parsed back (no network, limits on every service, nothing of the host's environment, a `$` in a
path kept literal); the host-side client and the in-container wrapper are run for real on this
machine (endless output is bounded; a command past its timeout dies with its process group). With a
Docker engine and a local Debian image, an agent's own /tests cannot divert the verifier's copy.

Before the fix the compose file was formatted from a string (a path with `${HOME}` was interpolated
from the host's environment by compose; no network or resource limit), output was captured whole,
and a timed-out command was left running in the container."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
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


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Iterator[None]:
    """A Docker engine: the running one, else one of our own that this module starts (as root, with
    Debian's dockerd) on a private socket and data folder, and stops after; skips only where neither
    can be had, naming why."""
    ok, why = docker_available()
    if ok:
        yield
        return
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        pytest.skip(f"no Docker engine ({why}) and none can be started here (needs root and dockerd)")
    root = tmp_path_factory.mktemp("dockerd")
    sock = root / "docker.sock"
    log = (root / "dockerd.log").open("wb")
    daemon = subprocess.Popen(
        ["dockerd", f"--data-root={root / 'data'}", f"--exec-root={root / 'exec'}", f"-H=unix://{sock}",
         f"--pidfile={root / 'pid'}", "--bridge=none", "--iptables=false"],
        stdout=log, stderr=log, start_new_session=True,
    )  # fmt: skip
    old = os.environ.get("DOCKER_HOST")
    os.environ["DOCKER_HOST"] = f"unix://{sock}"
    try:
        deadline = time.monotonic() + 60
        while not (ok := docker_available())[0] and daemon.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if not ok[0]:
            pytest.skip(f"our dockerd did not come up: {(root / 'dockerd.log').read_text()[-300:]}")
        yield
    finally:
        daemon.terminate()
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
        log.close()
        if old is None:
            os.environ.pop("DOCKER_HOST", None)
        else:
            os.environ["DOCKER_HOST"] = old


BASE_IMAGE = "iclr26-test-base:2"  # a new tag whenever BASE_TOOLS changes
BASE_TOOLS = (
    "bash",
    "sh",
    "timeout",
    "sleep",
    "yes",
    "cat",
    "ls",
    "ln",
    "mkdir",
    "rm",
    "mv",
    "mktemp",
    "env",
)


@pytest.fixture(scope="module")
def base_image(engine, tmp_path_factory) -> str:
    """A tiny local image of this machine's bash and coreutils (no registry here): `docker import` of
    the tools, their libraries and the loader."""
    if subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True).returncode == 0:
        return BASE_IMAGE
    files: set[str] = set()
    for tool in BASE_TOOLS:
        path = shutil.which(tool, path="/usr/bin:/bin")
        assert path is not None, tool
        files.add(path)
        ldd = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        files.update(re.findall(r"(/\S+\.so[.\d]*)", ldd))
    archive = tmp_path_factory.mktemp("image") / "base.tar"
    with tarfile.open(archive, "w") as tar:
        for name, target in (
            ("bin", "usr/bin"),
            ("sbin", "usr/sbin"),
            ("lib", "usr/lib"),
            ("lib64", "usr/lib64"),
        ):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        for folder in ("tmp", "app", "etc"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755
            tar.addfile(info)
        for path in sorted(files):  # the real file, under its folder's real path (/lib -> usr/lib)
            inside = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
            tar.add(os.path.realpath(path), arcname=inside.lstrip("/"))
    subprocess.run(["docker", "import", str(archive), BASE_IMAGE], check=True, capture_output=True)
    return BASE_IMAGE


# a pytest-style summary from bash alone (the tiny image has no Python): what the parser reads
CHECK = """#!/bin/bash
if [ "$(cat /app/marker 2>/dev/null)" = ok ]; then s=PASSED; else s=FAILED; fi
printf '=== short test summary info ===\\n%s test_outputs.py::test_marker\\n' "$s"
"""
SHELL_RUN_TESTS = "#!/bin/bash\nbash $TEST_DIR/check.sh\n"


def test_in_a_container_no_network_limits_bounded_output_killed_commands_and_our_own_tests(
    tmp_path, base_image
):
    task = _task(tmp_path / "toy", {"Dockerfile": f"FROM {base_image}\nWORKDIR /app\n"})
    (task.path / "run-tests.sh").write_text(SHELL_RUN_TESTS)
    (task.path / "tests" / "check.sh").write_text(CHECK)
    limits = DockerLimits(cpus=1.0, memory_bytes=256 * 1024**2, pids=64, output_bytes=4096)
    env = DockerEnvironment(task, limits=limits, remove_images=True)
    try:
        env.reset()
        assert env.exec("ls /sys/class/net", 30).output.split() == ["lo"]  # no network but loopback
        host = json.loads(subprocess.run(["docker", "inspect", env._container()], capture_output=True).stdout)
        config = host[0]["HostConfig"]
        assert (config["NanoCpus"], config["Memory"], config["PidsLimit"]) == (10**9, 256 * 1024**2, 64)
        start = time.monotonic()
        endless = env.exec("yes spam", 2.0)
        assert endless.timed_out and endless.truncated and len(endless.output) < 4096 + 200
        sleeper = env.exec("(exec -a iclr26-sleeper sleep 300) & sleep 300", 2.0)
        assert sleeper.timed_out and time.monotonic() - start < 30

        def gone() -> bool:
            top = subprocess.run(["docker", "top", env._container()], capture_output=True, text=True)
            return "iclr26-sleeper" not in top.stdout and "sleep 300" not in top.stdout

        wait_until(gone, 10.0, "the timed-out command and its background job die in the container")
        # the agent's own /tests (a folder, then a link to a folder of its own) with a check that
        # always passes: the verifier runs ours, which fails the unsolved task
        fake = "printf '=== short test summary info ===\\nPASSED test_outputs.py::test_marker\\n'"
        for where, link in (("/tests", ""), ("/app/mine", " && rm -rf /tests && ln -s /app/mine /tests")):
            setup = (
                f"mkdir -p {where} && echo {shlex.quote(fake)} > {where}/check.sh && echo no > marker{link}"
            )
            assert env.exec(setup, 30).exit_code == 0
            run = env.run_tests()
            assert run.failure_mode == "none" and run.results == {"test_marker": "FAILED"}, run
        assert env.exec("echo ok > marker", 30).exit_code == 0
        assert env.run_tests().resolved  # the verifier does run, and passes the solved task
    finally:
        env.down()
