"""Issue 57, item 1, attacked through the real sandbox and tmux: the sandboxed shell owns the folder
its exit statuses go to, so it can plant links, FIFOs and folders there. Before the fix the host, as
root, wrote the next command's script into that folder through whatever link it found (any file on
the host), and read statuses through links (any file) or blocked on a FIFO. Now the scripts live in a
folder the shell can only read, and status files are read only when they are regular files."""

from __future__ import annotations

import contextlib
import time

import pytest

from iclr26.agents.sandbox import Sandbox, SandboxLimits
from iclr26.agents.terminal import TerminalSession, TerminalTimeout

pytestmark = pytest.mark.debian("tmux", "bubblewrap")


def test_links_fifos_and_folders_in_the_shells_folders_cannot_steer_the_host(tmp_path):
    pwned, secret = tmp_path / "pwned", tmp_path / "secret"
    secret.write_text("42\n")  # a host file the sandbox cannot see; the host must not read it either
    with Sandbox(limits=SandboxLimits(timeout_s=30)) as sb, TerminalSession.in_sandbox(sb) as term:
        # the old attack: links named like the next scripts, pointing at a host path
        plant = "; ".join(f"ln -s {pwned} /tmp/.iclr26-terminal/cmd-{n}.sh" for n in range(2, 8))
        term.run(plant, timeout_s=10)
        assert term.last_status == 0  # the shell may write its own folder...
        term.run("touch /tmp/.iclr26-terminal-commands/x", timeout_s=10)
        assert term.last_status != 0  # ...but not the one its commands come from
        assert "done" in term.run("echo done", timeout_s=10)
        assert not pwned.exists()  # no script was written through a link
        # the next status file is a link to a host file holding a number: not read through the link
        n = term._runs + 1
        term.send_keys(f"ln -s {secret} /tmp/.iclr26-terminal/{n + 1}", literal=True)
        term.run("true", timeout_s=10)
        term.run("true", timeout_s=10)
        assert term.last_status is None
        # a FIFO and a folder where the next statuses go: the host neither blocks nor fails
        n = term._runs
        term.run(f"mkfifo /tmp/.iclr26-terminal/{n + 2}; mkdir /tmp/.iclr26-terminal/{n + 3}", timeout_s=10)
        start = time.monotonic()
        # the shell may block on its own FIFO, or die of SIGPIPE writing to it once the host let go:
        # either is the agent's doing; the host must only come back, within the run's timeout
        with contextlib.suppress(TerminalTimeout, RuntimeError):
            for _ in range(2):
                term.run("true", timeout_s=3)
                assert term.last_status is None
        assert time.monotonic() - start < 8
        assert not pwned.exists()
