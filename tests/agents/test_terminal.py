"""TerminalSession: tmux-driven shell, fixed size, `run` with a named timeout, clean shutdown."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from iclr26.agents.sandbox import Sandbox, SandboxLimits
from iclr26.agents.terminal import TerminalSession, TerminalTimeout
from iclr26.core.errors import UserError
from tests.agents.procs import alive

pytestmark = pytest.mark.debian("tmux")


def _lines(screen: str) -> list[str]:
    return [line.rstrip() for line in screen.splitlines()]


def _has_session(socket_path: str) -> int:
    return subprocess.run(
        ["tmux", "-S", socket_path, "has-session"], capture_output=True, check=False
    ).returncode


def test_echo_hello_shows_in_the_capture(tmp_path):
    with TerminalSession(tmp_path) as term:
        screen = term.run("echo hello")
        assert "hello" in _lines(screen)  # the output line itself, not only the typed command
        assert str(tmp_path) in _lines(term.run("pwd"))


def test_the_pane_is_160_by_40_by_default_and_sizes_are_honoured(tmp_path):
    with TerminalSession(tmp_path) as term:
        assert term.size == (160, 40)
        assert len(term.capture().split("\n")) >= 40
        long = "x" * 150
        assert long in _lines(term.run(f"echo {long}"))  # fits in one 160-column row
    with TerminalSession(tmp_path, width=100, height=30) as term:
        assert term.size == (100, 30)


def test_run_times_out_by_name_and_the_session_stays_usable(tmp_path):
    with TerminalSession(tmp_path) as term:
        start = time.monotonic()
        with pytest.raises(TerminalTimeout, match="'sleep 30' did not finish within timeout_s=1"):
            term.run("sleep 30", timeout_s=1)
        assert time.monotonic() - start < 3
        assert isinstance(TerminalTimeout("x"), TimeoutError)
        term.interrupt()
        assert "after-timeout" in _lines(term.run("echo after-timeout", timeout_s=5))


def test_send_keys_types_and_presses_enter(tmp_path):
    with TerminalSession(tmp_path) as term:
        term.send_keys("echo via-keys")
        term.run("true")
        assert "via-keys" in _lines(term.capture())
        term.send_keys("echo never-run", enter=False)
        term.send_keys("C-u", enter=False)  # a key name: erase the line before Enter
        term.run("true")
        assert "never-run" not in _lines(term.capture())


def test_capture_with_history_returns_the_scrollback(tmp_path):
    with TerminalSession(tmp_path) as term:
        term.run("seq 1 200")
        visible = _lines(term.capture())
        assert "200" in visible and "1" not in visible
        full = _lines(term.capture(history=True))
        assert full.index("1") < full.index("200")


def test_the_shell_does_not_inherit_the_callers_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR26_TEST_SECRET", "s3cret")
    with TerminalSession(tmp_path, env={"GIVEN": "yes"}) as term:
        screen = _lines(term.run("echo secret=${ICLR26_TEST_SECRET:-unset} given=$GIVEN"))
        assert "secret=unset given=yes" in screen


def test_close_kills_the_server_and_the_shell(tmp_path):
    term = TerminalSession(tmp_path).start()
    socket_path, pid = str(term.socket), term.pane_pid
    term.run("sleep 100 &")
    assert _has_session(socket_path) == 0 and alive(pid)
    term.close()
    assert _has_session(socket_path) != 0  # no server answers on that socket any more
    assert not alive(pid)
    assert not os.path.exists(socket_path)
    assert not term.alive
    term.close()  # idempotent


def test_an_exited_shell_is_reported(tmp_path):
    with TerminalSession(tmp_path) as term:
        term.send_keys("exit")
        deadline = time.monotonic() + 5
        while term.alive and time.monotonic() < deadline:
            time.sleep(0.02)
        with pytest.raises(RuntimeError, match="shell has exited"):
            term.run("echo too late")


def test_arguments_are_validated(tmp_path):
    with pytest.raises(ValueError, match="width must be an int"):
        TerminalSession(tmp_path, width=5)
    with pytest.raises(ValueError, match="height must be an int"):
        TerminalSession(tmp_path, height=0)
    with pytest.raises(UserError, match="is not a directory"):
        TerminalSession(tmp_path / "missing")
    with pytest.raises(ValueError, match="cwd is required"):
        TerminalSession()


@pytest.mark.debian("bubblewrap")
def test_a_sandboxed_terminal_has_no_network_and_writes_only_its_workdir():
    limits = SandboxLimits(timeout_s=10, max_processes=64, tmpfs_bytes=8 * 1024 * 1024)
    with Sandbox(limits=limits) as sb, TerminalSession.in_sandbox(sb) as term:
        assert term.cwd == sb.workdir and term.size == (160, 40)
        screen = _lines(term.run("echo hi > note.txt; touch /etc/x; exec 3<>/dev/tcp/1.1.1.1/80; id -u"))
        assert sb.read_file("note.txt") == "hi\n"
        assert any("Read-only file system" in line for line in screen)
        assert any("Network is unreachable" in line for line in screen)
        if os.geteuid() == 0:
            assert str(sb.uid) in screen and "0" not in screen
        with pytest.raises(TerminalTimeout):
            term.run("sleep 30", timeout_s=1)
        term.interrupt()
        assert "still-usable" in _lines(term.run("echo still-usable", timeout_s=5))
        pid = term.pane_pid
        socket_path = str(term.socket)
    assert not alive(pid)  # bwrap, and with it the sandbox's pid namespace, is gone
    assert _has_session(socket_path) != 0


@pytest.mark.debian("bubblewrap")
def test_execute_returns_only_the_commands_output_and_its_status(tmp_path):
    with Sandbox(limits=SandboxLimits(timeout_s=30)) as sb, TerminalSession.in_sandbox(sb) as term:
        assert term.execute("echo one; echo two") == "one\ntwo" and term.last_status == 0
        assert "No such file" in term.execute("ls /nonexistent") and term.last_status == 2
        long = "y" * 300  # wraps over two rows of the 160-column pane: still one line back
        assert term.execute(f"echo {long}") == long
        heredoc = "cat > note.txt <<'EOF'\nline $HOME\nEOF\ncat note.txt"  # a heredoc survives the wrapping
        assert term.execute(heredoc) == "line $HOME" and term.last_status == 0
        term.execute("false")
        assert term.last_status == 1


@pytest.mark.debian("bubblewrap")
def test_a_command_that_does_not_parse_returns_instead_of_waiting_for_more_input(tmp_path):
    with Sandbox(limits=SandboxLimits(timeout_s=30)) as sb, TerminalSession.in_sandbox(sb) as term:
        term.execute('echo "unclosed', timeout_s=5)  # typed, this would leave bash at its > prompt
        assert term.last_status == 2
        term.execute("# only a comment\n# and another", timeout_s=5)
        assert term.last_status == 0
        term.execute("cd /tmp && export MARK=kept")  # sourced: the shell keeps its state
        assert term.execute("pwd; echo $MARK") == "/tmp\nkept"
