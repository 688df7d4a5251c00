"""Attacks on the ScienceBoard desktop from an agent's keyboard and from another local user (issue 57,
items 2-4): the GRASS xterm's tmux client opens no host shell, and no display, bus or app port of
ours answers a process of another uid."""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path

import pytest

from iclr26.agents.display import VirtualDisplay
from iclr26.agents.sandbox import Sandbox
from iclr26.agents.terminal import TerminalSession
from tests.waiting import wait_until

ROOT = os.geteuid() == 0
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
