"""A SIGKILLed run leaves nothing behind: its terminal's server, shell and sandbox die with it, and
the next process removes its scratch folders (`iclr26.agents.scratch`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from iclr26.agents import scratch
from tests.agents.procs import all_dead

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from iclr26.agents.sandbox import Sandbox, SandboxLimits
    from iclr26.agents.terminal import TerminalSession
    sb = Sandbox(limits=SandboxLimits(timeout_s=30, max_processes=64)).open()
    term = TerminalSession.in_sandbox(sb).start()
    term.run("(setsid sleep 600 &) ; nohup sleep 601 >/dev/null 2>&1 &", timeout_s=10)
    print(json.dumps({"workdir": str(sb.workdir), "server": term._server.pid, "pane": term.pane_pid,
                      "socket_dir": str(term.socket.parent)}), flush=True)
    time.sleep(600)
    """
)


def _sleepers() -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd[:2] in ([b"sleep", b"600"], [b"sleep", b"601"]):
                found.add(int(entry))
    return found


@pytest.mark.debian("tmux", "bubblewrap")
def test_a_killed_run_leaves_no_process_and_its_folders_are_swept():
    before = _sleepers()
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        shown = json.loads(child.stdout.readline())
        started = _sleepers() - before
        assert started, "the sandboxed shell's background sleeps did not start"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert not all_dead({shown["server"], shown["pane"], *started}, within=5.0)
    workdir, sockets = Path(shown["workdir"]), Path(shown["socket_dir"])
    assert workdir.is_dir() and sockets.is_dir()  # SIGKILL left its folders
    assert workdir.parents[1] == scratch.scratch_root() and workdir.parent.name == str(child.pid)
    removed = scratch.sweep()
    assert workdir.parent in removed and not workdir.exists() and not sockets.exists()


def test_the_sweep_keeps_live_processes_folders_and_ignores_other_names(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    live = root / str(os.getppid())
    dead = root / "999999999"  # above pid_max: no such process
    other = root / "notes"
    for folder in (live, dead, other):
        folder.mkdir()
        (folder / "f").write_text("x")
    assert scratch.sweep(root) == [dead]
    assert live.is_dir() and other.is_dir() and not dead.exists()


def test_a_scratch_root_someone_else_may_write_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(scratch.tempfile, "gettempdir", lambda: str(tmp_path))
    root = tmp_path / f"iclr26-{os.geteuid()}"
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    with pytest.raises(RuntimeError, match="only it may write"):
        scratch.scratch_root()
    root.rmdir()
    root.symlink_to(tmp_path)
    with pytest.raises(RuntimeError, match="not a folder"):
        scratch.scratch_root()


SWEEPER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from iclr26.agents import scratch
    sys.stdin.readline()  # start together
    print(len(scratch.sweep(Path(sys.argv[1]))))
    """
)


def test_processes_that_sweep_at_once_remove_each_dead_folder_once(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    dead = [root / str(999_999_000 + i) for i in range(60)]
    for folder in dead:
        (folder / "a" / "b").mkdir(parents=True)
        (folder / "a" / "b" / "f").write_text("x")
    claimed_by_killed_sweep = root / ".999999998-999999997"  # a sweeper killed mid-removal
    (claimed_by_killed_sweep / "c").mkdir(parents=True)
    sweepers = [
        subprocess.Popen(
            [sys.executable, "-c", SWEEPER, str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in sweepers:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = [proc.communicate(timeout=60) for proc in sweepers]
    assert all(proc.returncode == 0 for proc in sweepers), [err for _, err in outputs]
    assert sum(int(out) for out, _ in outputs) == len(dead) + 1
    assert list(root.iterdir()) == []
