"""Attacks on the ScienceBoard desktop from an agent's keyboard and from another local user (issue 57,
items 2-4): the GRASS xterm's tmux client opens no host shell, and no display, bus or app port of
ours answers a process of another uid."""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
from pathlib import Path
from typing import Any

import pytest

import iclr26.scienceboard
from iclr26.agents.display import VirtualDisplay
from iclr26.agents.sandbox import Sandbox
from iclr26.agents.terminal import TerminalSession
from tests.waiting import wait_until

ROOT = os.geteuid() == 0
PACKAGE = Path(iclr26.scienceboard.__file__).parent
OTHER_UID = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
"""Run a command as nobody, another local user than the harness."""


def _as_other_user(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in env.items() if k != "XAUTHORITY"} | {"HOME": "/nonexistent"}
    return subprocess.run([*OTHER_UID, *argv], env=clean, capture_output=True, text=True, timeout=30)


@pytest.mark.debian("xvfb", "xdotool", "xterm", "tmux", "bubblewrap")
def test_the_grass_xterm_gives_the_agent_no_host_shell():
    """The agent types tmux's prefix key into the real xterm (ctrl+b c: a new window; ctrl+b :
    run-shell: a host command): no window opens, no host file appears, and what it types into the
    shell stays in the sandbox."""
    marker = Path(f"/tmp/iclr26-host-marker-{secrets.token_hex(4)}")
    typed = Path(f"/tmp/iclr26-typed-marker-{secrets.token_hex(4)}")
    try:
        _attack_the_xterm(marker, typed)
    finally:
        for leftover in (marker, typed):
            leftover.unlink(missing_ok=True)


def _attack_the_xterm(marker: Path, typed: Path) -> None:
    with (
        VirtualDisplay(800, 600) as screen,
        Sandbox() as box,
        TerminalSession.in_sandbox(box, width=80, height=24) as term,
    ):
        screen.launch(
            ["xterm", "-T", "grass-probe", "-e", "tmux", "-S", str(term.socket), "attach", "-t", "main"]
        )
        wid = screen.wait_for_window("grass-probe", timeout=15, map_unmapped=True)
        x, y, w, h = screen.window_geometry(wid)
        screen.click(x + w // 2, y + h // 2)  # focus: keys go to the xterm

        def typed_into_pane(line: str, expect: str) -> None:
            screen.type_text(line)
            screen.key("Return")
            wait_until(lambda: expect in term.capture(), timeout_s=15, what=f"{expect!r} in the pane")

        typed_into_pane("echo al$((40+2))", "al42")  # the keys reach the sandboxed shell
        screen.key("ctrl+b")
        screen.type_text("c")
        screen.key("ctrl+b")
        screen.type_text(f":run-shell 'touch {marker}'")
        screen.key("Return")
        typed_into_pane(f"touch {typed}; echo af$((1+1))", "af2")  # the keys above were handled first
        windows = term.tmux("list-windows", "-t", "main").splitlines()
        assert len(windows) == 1, windows
        assert not marker.exists()
        assert not typed.exists()  # the shell's /tmp is the sandbox's own


@pytest.mark.skipif(not ROOT, reason="switching to another uid (setpriv) needs root")
@pytest.mark.debian("xvfb", "xdotool")
def test_another_user_cannot_connect_to_the_display():
    """Xvfb asks for the display's cookie: our xdotool (XAUTHORITY set) connects, the same xdotool
    run as nobody without the cookie file is refused."""
    with VirtualDisplay(320, 200) as screen:
        probe = ["xdotool", "getmouselocation"]
        ours = subprocess.run(probe, env=screen.env, capture_output=True, text=True, timeout=30)
        assert ours.returncode == 0, ours.stderr
        theirs = _as_other_user(probe, screen.env)
        assert theirs.returncode != 0
        assert "open display" in theirs.stderr, theirs.stderr


def _tree(roots: set[int]) -> set[int]:
    """`roots` and all their descendants (a sandboxed app starts its own session inside bwrap)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo += children.get(pid, [])
    return out


def _listening(pids: set[int]) -> tuple[list[int], list[str]]:
    """The TCP ports (host network) and Unix socket paths that processes `pids` listen on."""
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes.add(target[8:-1])
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # LISTEN
                ports.append(int(f[1].rsplit(":", 1)[1], 16))
    paths = []
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        f = line.split()
        if len(f) >= 8 and f[3] == "00010000" and f[6] in inodes:  # __SO_ACCEPTCON: listening
            paths.append(f[7])
    return ports, paths


CONNECT = """
import socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\\0" + path[1:] if path.startswith("@") else path)
except OSError as e:
    print("refused", e)
else:
    print("connected")
"""


def _assert_nothing_answers_another_user(desk: Any) -> None:
    """No process of the desktop (Xvfb, the session bus, the apps and their sandboxes) listens on TCP in
    the host's network, and nobody's connects to each of their Unix sockets fail, but for the X
    display's, whose X connection is refused for want of the cookie."""
    assert desk.display is not None
    ours = _tree({p.pid for p in [desk.display._xvfb, desk._dbus, *desk.display._apps] if p})
    ports, paths = _listening(ours)
    assert ports == [], f"TCP listeners of ours in the host's network: {ports}"
    x_socket = f"/tmp/.X11-unix/X{desk.display.display.lstrip(':')}"
    for path in paths:
        if path.lstrip("@") == x_socket:
            continue  # the X server: reachable, asks for the cookie (below)
        done = _as_other_user(["/usr/bin/python3", "-c", CONNECT, path], os.environ.copy())
        assert done.stdout.startswith("refused"), (path, done.stdout, done.stderr)
    refused = _as_other_user(["xdotool", "getmouselocation"], desk.display.env)
    assert refused.returncode != 0 and "open display" in refused.stderr
    bus = desk.env["DBUS_SESSION_BUS_ADDRESS"].split("path=")[1].split(",")[0]
    assert bus in paths and any(p.endswith(".sock") for p in paths), paths  # the app's relay


@pytest.mark.skipif(not ROOT, reason="switching to another uid (setpriv) needs root")
@pytest.mark.debian(
    "xvfb", "xdotool", "openbox", "dbus", "at-spi2-core", "python3-pyatspi", "pymol", "bubblewrap"
)
def test_pymol_runs_contained_and_nothing_of_ours_answers_another_user(tmp_path, monkeypatch):
    """PyMOL's own command path (`system` through its XML-RPC `do`) writes only inside its sandbox; no
    process of the app carries the harness's secret; and no listener of the desktop or the app is
    reachable by nobody: no TCP port in the host's network, every Unix socket refused (the X display's
    is reachable but asks for the cookie)."""
    from iclr26.scienceboard.desktop import Desktop
    from iclr26.scienceboard.env import ScienceBoardEnv
    from iclr26.scienceboard.suite import built_tasks

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    task = {t.task_id: t for t in built_tasks()}["pymol-direct-color-gly"]
    host_marker = Path(f"/tmp/iclr26-pymol-marker-{secrets.token_hex(4)}")
    try:
        with Desktop() as desk:
            env = ScienceBoardEnv(task.task(), desk, tmp_path / "task", pause_s=0.2, settle_s=0.1)
            env.reset()
            try:
                inside = env.root / "inside-marker"
                env.pymol.server.do(f"system touch {host_marker}")
                env.pymol.server.do(f"system touch {inside}")
                wait_until(inside.exists, timeout_s=30, what="PyMOL's `system` ran in its work dir")
                assert not host_marker.exists()

                assert desk.display is not None and env.proc is not None
                app = _tree({env.proc.pid})
                environs = [Path(f"/proc/{p}/environ").read_bytes() for p in app]
                assert environs and not any(b"sk-test-secret" in e for e in environs)
                assert sum(b"XAUTHORITY=" in e for e in environs) >= 3  # bwrap, the relay, PyMOL
                uids = {Path(f"/proc/{p}/status").read_text().split("\nUid:")[1].split()[0] for p in app}
                assert "65534" in uids  # PyMOL and the relay; bwrap itself is root

                _assert_nothing_answers_another_user(desk)
            finally:
                env.close()
    finally:
        host_marker.unlink(missing_ok=True)


@pytest.mark.debian("xvfb", "xdotool", "openbox", "dbus", "at-spi2-core", "python3-pyatspi", "bubblewrap")
def test_an_app_writes_only_its_folders_and_sees_no_secret_or_host_home(tmp_path, monkeypatch):
    """Whatever an app runs (PyMOL's `system`, a shell escape of any app) runs in its sandbox, as an
    unprivileged uid: it writes its home and the task's folder, nothing else; it has none of the
    harness's environment; the host's home folders and this package are empty, the harness's own files
    closed; it reaches no outside network."""
    from iclr26.scienceboard.desktop import Desktop

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    secret = Path.home() / f".iclr26-secret-{secrets.token_hex(4)}"
    private = Path(f"/var/tmp/iclr26-private-{secrets.token_hex(4)}")  # the harness's own, mode 0600
    host_marker = Path(f"/tmp/iclr26-app-marker-{secrets.token_hex(4)}")
    home, task = tmp_path / "home", tmp_path / "task"
    task.mkdir()
    script = (
        f"touch {host_marker}; touch {task}/ok; env > $HOME/env.txt; ls -a {Path.home()} > $HOME/ls.txt;"
        f" ls -A {PACKAGE} >> $HOME/ls.txt; (exec 3<>/dev/tcp/1.1.1.1/53) 2> $HOME/net.txt;"
        f" id -u > $HOME/uid.txt; cat {private} > $HOME/private.txt 2>&1; touch $HOME/done"
    )
    try:
        secret.write_text("sk-file-secret")
        private.write_text("sk-private-secret")
        private.chmod(0o600)
        with Desktop() as desk:
            desk.launch(["/bin/bash", "-c", script], home=home, writable=[task])
            wait_until((home / "done").exists, timeout_s=30, what="the app's script finished")
        assert not host_marker.exists()
        assert (task / "ok").exists()
        env = (home / "env.txt").read_text()
        assert "sk-test-secret" not in env and "XAUTHORITY=" in env and "DISPLAY=" in env
        listed = (home / "ls.txt").read_text()
        assert secret.name not in listed and "suite.py" not in listed  # nor the reference solutions
        assert (home / "net.txt").read_text().strip()  # no route out: the connect failed
        if ROOT:  # the app runs as an unprivileged uid: the harness's own files stay closed
            assert (home / "uid.txt").read_text().strip() == "65534"
            assert "sk-private-secret" not in (home / "private.txt").read_text()
    finally:
        host_marker.unlink(missing_ok=True)
        secret.unlink(missing_ok=True)
        private.unlink(missing_ok=True)


@pytest.mark.skipif(not ROOT, reason="switching to another uid (setpriv) needs root")
@pytest.mark.debian(
    "xvfb", "xdotool", "openbox", "dbus", "at-spi2-core", "python3-pyatspi", "stellarium", "bubblewrap"
)
def test_stellarium_remote_control_answers_only_us(tmp_path):
    """Stellarium's RemoteControl (it runs scripts) serves on its sandbox's own loopback and asks for
    the task's password: our probe reads it through the relay, a request without the password gets 401,
    and nobody reaches it or any other socket of ours."""
    from iclr26.scienceboard.desktop import Desktop
    from iclr26.scienceboard.env import ScienceBoardEnv
    from iclr26.scienceboard.suite import built_tasks

    task = {t.task_id: t for t in built_tasks()}["stellarium-direct-sirius"]
    with Desktop() as desk:
        env = ScienceBoardEnv(task.task(), desk, tmp_path / "task", pause_s=0.2, settle_s=0.1)
        env.reset()
        try:
            assert "location" in env.stellarium.status()
            import httpx

            transport = httpx.HTTPTransport(uds=str(env._socket))
            with httpx.Client(transport=transport, timeout=10) as bare:  # the relay, without the password
                assert bare.get("http://127.0.0.1/api/main/status").status_code == 401
            _assert_nothing_answers_another_user(desk)
        finally:
            env.close()
