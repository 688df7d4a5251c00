"""Two runs into one `--out` (issue 57, item 11): the second, a real `iclr26 run` process started
while the first holds the folder, stops with one line naming the first's pid and exit 2, and touches
nothing; once the first has finished, the folder is free again and a resume runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}"}


def _cli(out: Path) -> list[str]:
    return [sys.executable, "-m", "iclr26", "run", "glow", "--preset", "smoke", "--out", str(out),
            "--set", "agents=oracle,null"]  # fmt: skip


def _status(out: Path) -> str | None:
    try:
        return json.loads((out / "results.json").read_text())["status"]
    except (OSError, ValueError, KeyError):
        return None


def test_a_second_run_into_the_same_folder_stops_and_names_the_first(tmp_path) -> None:
    out = tmp_path / "run"
    first = subprocess.Popen(_cli(out), cwd=REPO, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: _status(out) == "running", 60, "the first run started")
        os.kill(first.pid, signal.SIGSTOP)  # hold it mid-run, its folder taken
        before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
        second = subprocess.run(_cli(out), cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120)
        lines = second.stdout.strip().splitlines()
        assert second.returncode == 2, second.stdout + second.stderr
        assert len(lines) == 1 and lines[0].startswith("error: ")
        assert f"{out} is in use by process {first.pid}" in lines[0]
        assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before  # nothing touched
    finally:
        os.kill(first.pid, signal.SIGCONT)
        first.wait(timeout=120)
    assert first.returncode == 0 and _status(out) == "complete", first.stderr.read().decode()[-2000:]
    again = subprocess.run(_cli(out), cwd=REPO, env=ENV, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and _status(out) == "complete", again.stdout[-2000:]
