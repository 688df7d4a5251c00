"""SIGTERM and SIGINT mid-task (issue 57, item 12): a real `iclr26 run` of devops_gym (sandboxed
shells in tmux, run by a pool of workers), of scienceboard (Xvfb, a session bus, an app), and an
`iclr26 demo` tour of both, is signalled once its children run; it exits 143 (SIGTERM) or 130
(SIGINT), each results.json says `interrupted`, and no process it started is left. The command runs
under `tests.faults.reaper`, a child subreaper, so that a daemon it started (a tmux server) stays a
descendant we can find."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.devops_gym.conftest import DEBIAN
from tests.faults.reaper import descendants
from tests.scienceboard.test_apps import DESKTOP
from tests.scienceboard.test_system import APPS
from tests.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]


def _signal_mid_task(
    command: list[str], children: tuple[str, ...], signum: int, tmp_path: Path, runs: tuple[str, ...] = ("",)
) -> None:
    """Run `iclr26 *command --out DIR`, send `signum` once `children` run, check what it leaves; `runs`:
    the run folders under DIR whose results.json must say interrupted."""
    out, log = tmp_path / "run", tmp_path / "run.log"
    argv = [sys.executable, "-m", "iclr26", *command, "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}"}
    with log.open("w") as err:
        reaper = subprocess.Popen(
            [sys.executable, "-m", "tests.faults.reaper", *argv],
            cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
        )  # fmt: skip
    assert reaper.stdin is not None and reaper.stdout is not None
    try:
        run = int(reaper.stdout.readline().split()[1])

        def started() -> bool:
            names = {Path(c.split(" ", 1)[0]).name for c in descendants(reaper.pid).values()}
            return all(name in names for name in children)

        wait_until(started, 60, f"{' '.join(command)}: {', '.join(children)} running")
        os.kill(run, signum)
        code = int(reaper.stdout.readline().split()[1])
        assert code == 128 + signum, log.read_text()[-2000:]
        deadline = time.monotonic() + 5  # a server told to exit may take a moment
        while (left := descendants(reaper.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == {}
        for run_dir in runs:
            record = json.loads((out / run_dir / "results.json").read_text())
            assert record["status"] == "interrupted" and signal.Signals(signum).name in record["error"]
        assert f"re-run with --out {out}" in " ".join(log.read_text().split())
    finally:
        reaper.stdin.close()  # the reaper kills whatever is left, so a failure leaves nothing behind
        reaper.wait(timeout=30)
        reaper.stdout.close()


@pytest.mark.debian(*DEBIAN)
@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["SIGTERM", "SIGINT", "SIGHUP"]
)
def test_devops_gym_stops_its_sandboxes_and_tmux_servers(tmp_path, signum) -> None:
    _signal_mid_task(["run", "devops_gym", "--preset", "smoke"], ("bwrap", "tmux"), signum, tmp_path)


@pytest.mark.debian(*DESKTOP, *APPS)
def test_scienceboard_stops_its_display_bus_and_apps(tmp_path) -> None:
    command = ["run", "scienceboard", "--preset", "smoke"]
    _signal_mid_task(command, ("Xvfb", "dbus-daemon", "kalgebra"), signal.SIGTERM, tmp_path)


@pytest.mark.debian(*DEBIAN, *DESKTOP, *APPS)
def test_a_tour_stops_every_run_it_started(tmp_path) -> None:
    command = ["demo", "--preset", "smoke", "--only", "devops_gym,scienceboard", "--jobs", "2"]
    runs = ("devops_gym", "scienceboard")
    _signal_mid_task(command, ("tmux", "Xvfb"), signal.SIGTERM, tmp_path, runs)
