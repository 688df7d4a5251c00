"""`TerminalSession`: a tmux-backed terminal driven the way Terminal-Bench drives one.

A detached tmux session on its own server (`tmux -S <private socket>`, never the user's tmux,
config `-f` our own file) holds one pane of a fixed size (default 160x40, status line off, so
the visible pane is exactly width x height) running a shell in a working directory. The agent
types with `send_keys`, reads the screen with `capture` (the visible pane, or the whole history),
and `run(command, timeout_s)` types `command; tmux wait -S <channel>` and blocks on
`tmux wait <channel>`; past the timeout it raises `TerminalTimeout` and leaves the command
running, so the caller can `interrupt()` (C-c) and go on using the session.

`TerminalSession(cwd, sandbox=sb)` / `TerminalSession.in_sandbox(sb)` runs the pane's shell under
`Sandbox.command_line` (no network, read-only system, the sandbox's rlimits, an unprivileged uid;
see `iclr26.agents.sandbox`), keeping the pane as its controlling terminal so C-c works. The
sandboxed shell cannot reach the tmux server (its socket is in a private 0700 directory outside
the sandbox; giving it the socket would let it run commands outside through tmux), so there
`run` writes the command to a script in a folder the shell can read but not change (host-owned,
mounted read-only), sources it, appends `; echo $? > <dir>/<n>` (a folder the shell may write,
bound into its private /tmp) and polls that file. The host never writes into the shell's folder,
and reads its status files without following links, only regular files, at most 64 bytes: a link,
FIFO or directory planted there cannot make the host write, read elsewhere or hang.
Per-command CPU and memory limits then apply to every process
the shell starts; the wall-clock per command is `run`'s timeout (Sandbox.limits.timeout_s and the
episode budget govern `Sandbox.run` only).

When the shell exits (the agent typed `exit`) the pane stays (tmux `remain-on-exit`): `alive`
turns False, `capture()` still shows the last screen and `run` raises. `close()` kills the tmux
server and then every process left in the pane's session (for a sandboxed pane that includes
bwrap, whose pid namespace takes everything inside with it).
The server runs in the foreground (`tmux -D`) as a child of this process with a parent-death signal
(`setpriv --pdeathsig KILL`): if this process is SIGKILLed, the kernel kills the server, the pane's
bwrap dies with its parent and its pid namespace with it, so a killed run leaves no shell, service
or sandbox process behind (its folders are removed by the next run, `iclr26.agents.scratch`).
A client attached to the server (`tmux -S <socket> attach`, as the GRASS xterm does) can only type
into the pane: the server has no prefix key and no key bindings (`LOCKED_CLIENT`).
`run` assumes a bash-like shell and a command that does not end in a comment or read the rest
of the line from stdin (the same assumption Terminal-Bench makes).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from iclr26.agents.sandbox import SANDBOX_PATH, Sandbox, _which, read_untrusted
from iclr26.agents.scratch import scratch_dir
from iclr26.core import sysdeps
from iclr26.core.errors import UserError
from iclr26.core.validation import check_int

DEFAULT_SHELL: tuple[str, ...] = ("bash", "--noprofile", "--norc", "-i")
_SESSION = "main"  # the one session on our private server
_DONE_INSIDE = "/tmp/.iclr26-terminal"  # where a sandboxed shell writes its completion files
_SCRIPTS_INSIDE = "/tmp/.iclr26-terminal-commands"  # where it reads the commands `run` gives it (read-only)
_STATUS_BYTES = 64  # the most of a status file the host reads
_READY_S = 5.0  # how long `start` waits for the shell's first output (its prompt)
_TMUX_TIMEOUT_S = 10.0  # for tmux client commands other than `wait-for`


LOCKED_CLIENT = (
    "set -g prefix None\n"
    "set -g prefix2 None\n"
    "set -g mouse off\n"
    "unbind -a -T prefix\n"
    "unbind -a -T root\n"
    "unbind -a -T copy-mode\n"
    "unbind -a -T copy-mode-vi\n"
)
"""The server config that leaves an attached client (the xterm a GUI agent types into) no tmux command:
no prefix key, no key bindings in any table, no mouse, hence no `new-window`, command prompt or
`run-shell`, which would run on the host, outside the sandbox. Our own calls (`send-keys`,
`capture-pane`) go through the socket, which only we can reach."""


class TerminalTimeout(TimeoutError):
    """A `TerminalSession.run` command did not finish within its timeout; it is still running."""


class TerminalSession:
    """A detached tmux session of fixed size on a private tmux server, running a shell in `cwd`.

    Parameters
    ----------
    cwd : str or Path
        The shell's working directory (for a sandboxed shell: default the sandbox's work dir).
    command : sequence of str, optional
        The argv the pane runs (default `bash --noprofile --norc -i`); with `sandbox`, inside it.
    width, height : int, default 160, 40
        The pane's size in columns and rows.
    history_lines : int, default 50000
        Scrollback lines tmux keeps (what `capture(history=True)` can return).
    env : mapping, optional
        Extra environment variables for the shell, on top of a minimal PATH/HOME/LANG one
        (the caller's own environment is not passed on).
    sandbox : Sandbox, optional
        An open `Sandbox` whose bubblewrap command line the shell runs under.
    """

    def __init__(
        self,
        cwd: str | os.PathLike[str] | None = None,
        *,
        command: Sequence[str] | None = None,
        width: int = 160,
        height: int = 40,
        history_lines: int = 50_000,
        env: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        binds: Mapping[str | os.PathLike[str], str] | None = None,
        ro_binds: Mapping[str | os.PathLike[str], str] | None = None,
    ) -> None:
        check_int("width", width, 20, 1000)
        check_int("height", height, 5, 1000)
        check_int("history_lines", history_lines, 0, 10_000_000)
        if sandbox is not None and not isinstance(sandbox, Sandbox):
            raise TypeError(f"sandbox must be a Sandbox, got {type(sandbox).__name__}")
        if cwd is None:
            if sandbox is None:
                raise ValueError("cwd is required without a sandbox; pass the directory the shell starts in")
            cwd = sandbox.workdir
        self.cwd = Path(cwd).absolute()
        if not self.cwd.is_dir():
            raise UserError(f"TerminalSession cwd {str(self.cwd)!r} is not a directory; create it first")
        argv = list(DEFAULT_SHELL if command is None else command)
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError(f"command must be a non-empty sequence of str, got {command!r}")
        self.command = argv
        self.width, self.height, self.history_lines = width, height, history_lines
        self.sandbox = sandbox
        if (binds or ro_binds) and (sandbox is None or not sandbox.isolated):
            raise ValueError("binds need a sandbox with isolation")
        self.binds = dict(binds or {})
        self.ro_binds = dict(ro_binds or {})
        self.last_status: int | None = None  # the exit status of the last `run`, when known
        base = (
            sandbox.env
            if sandbox is not None
            else {"PATH": SANDBOX_PATH, "HOME": str(self.cwd), "LANG": "C.UTF-8"}
        )
        self._env = {**base, "HISTFILE": "", **dict(env or {})}
        sysdeps.require("tmux")
        self._tmux = shutil.which("tmux") or "tmux"
        self.name = f"iclr26-{secrets.token_hex(4)}"
        self._dir: Path | None = None  # private 0700 directory: the socket and the config
        self._done: Path | None = None  # a sandboxed shell's completion files, owned by the sandbox uid
        self._scripts: Path | None = None  # the commands `run` gives it: ours, read-only to it
        self._pane_pid: int | None = None
        self._server: subprocess.Popen[bytes] | None = None
        self._runs = 0

    @classmethod
    def in_sandbox(
        cls,
        sandbox: Sandbox,
        *,
        command: Sequence[str] | None = None,
        width: int = 160,
        height: int = 40,
        history_lines: int = 50_000,
        env: Mapping[str, str] | None = None,
        binds: Mapping[str | os.PathLike[str], str] | None = None,
        ro_binds: Mapping[str | os.PathLike[str], str] | None = None,
    ) -> TerminalSession:
        """A (not yet started) session whose shell runs inside the open `sandbox`, in its work dir.

        `binds` maps extra host directories to writable paths inside, `ro_binds` to read-only ones
        (as `Sandbox.command_line`)."""
        return cls(
            sandbox.workdir,
            command=command,
            width=width,
            height=height,
            history_lines=history_lines,
            env=env,
            sandbox=sandbox,
            binds=binds,
            ro_binds=ro_binds,
        )

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def socket(self) -> Path:
        """The tmux server's socket (`tmux -S <socket> ...` reaches this session)."""
        if self._dir is None:
            raise RuntimeError(
                "the TerminalSession is not started: use `with TerminalSession(...)` or .start()"
            )
        return self._dir / "tmux.sock"

    def start(self) -> TerminalSession:
        """Start the tmux server and the session; returns self."""
        if self._dir is not None:
            return self
        self._dir = scratch_dir("iclr26-tmux-")
        try:
            conf = self._dir / "tmux.conf"
            conf.write_text(
                f"set -g history-limit {self.history_lines}\n"
                "set -g status off\n"
                "set -g remain-on-exit on\n"
                f"set -g default-size {self.width}x{self.height}\n"
                "set -s escape-time 0\n" + LOCKED_CLIENT
            )
            argv = self.command
            if self.sandbox is not None:
                # The sandbox uid cannot enter self._dir (0700): its completion files go elsewhere.
                self._done = done = scratch_dir("iclr26-terminal-done-")
                self._scripts = scripts = scratch_dir("iclr26-terminal-commands-")
                os.chmod(scripts, 0o755)  # readable by the sandbox uid, writable by us only
                if os.geteuid() == 0:
                    os.chown(done, self.sandbox.uid, self.sandbox.gid)
                if self.sandbox.isolated:
                    binds = {**self.binds, done: _DONE_INSIDE}
                    argv = self.sandbox.command_line(
                        argv,
                        binds=binds,
                        ro_binds={**self.ro_binds, scripts: _SCRIPTS_INSIDE},
                        new_session=False,
                    )
                else:
                    argv = self.sandbox.command_line(argv, new_session=False)
            self._start_server(conf)
            size = ["-x", str(self.width), "-y", str(self.height)]
            start = [self._tmux, "-S", str(self.socket), "-f", str(conf), "new-session", "-d", "-s", _SESSION]
            self._call([*start, *size, "-c", str(self.cwd), "--", *argv])
            self._pane_pid = int(self.tmux("display-message", "-p", "-t", _SESSION, "#{pane_pid}").strip())
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Kill the tmux server and whatever is left of the pane's processes; remove the socket dir."""
        if self._dir is None:
            return
        try:
            if self.socket.exists():
                self._call([self._tmux, "-S", str(self.socket), "kill-server"], check=False)
            if self._pane_pid is not None:
                _kill_session(self._pane_pid)
            if self._server is not None:
                try:
                    self._server.wait(timeout=_TMUX_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    self._server.kill()
                    self._server.wait()
        finally:
            self._server = None
            shutil.rmtree(self._dir, ignore_errors=True)
            for folder in (self._done, self._scripts):  # rmtree removes links, never follows them
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)
            self._dir = self._done = self._scripts = None
            self._pane_pid = None

    def __enter__(self) -> TerminalSession:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        """The server runs and the pane's command has not exited."""
        if self._dir is None:
            return False
        argv = [self._tmux, "-S", str(self.socket), "display-message", "-p", "-t", _SESSION, "#{pane_dead}"]
        done = self._call(argv, check=False)
        return done.returncode == 0 and done.stdout.strip() == "0"

    @property
    def pane_pid(self) -> int:
        """The pid of the pane's first process (the shell, or for a sandboxed one its bwrap)."""
        if self._pane_pid is None:
            raise RuntimeError("the TerminalSession is not started")
        return self._pane_pid

    # -- driving ---------------------------------------------------------------------------------

    def tmux(self, *args: str, timeout_s: float = _TMUX_TIMEOUT_S) -> str:
        """Run one tmux command against this session's server; returns its stdout."""
        return self._call([self._tmux, "-S", str(self.socket), *args], timeout_s=timeout_s).stdout

    def send_keys(self, keys: str | Sequence[str], *, enter: bool = True, literal: bool = False) -> None:
        """Type `keys` (tmux key names such as "C-c" unless `literal`), then Enter when `enter`."""
        items = [keys] if isinstance(keys, str) else list(keys)
        if not all(isinstance(k, str) for k in items):
            raise TypeError(f"keys must be a str or a sequence of str, got {keys!r}")
        if items:
            self.tmux("send-keys", "-t", _SESSION, *(["-l"] if literal else []), *items)
        if enter:
            self.tmux("send-keys", "-t", _SESSION, "Enter")

    def interrupt(self) -> None:
        """Press C-c (SIGINT to the foreground job)."""
        self.send_keys("C-c", enter=False)

    def run(self, command: str, *, timeout_s: float = 30.0) -> str:
        """Type `command`, wait until the shell finished it, and return the visible pane.

        Raises `TerminalTimeout` after `timeout_s` seconds; the command keeps running.
        """
        if not isinstance(command, str):
            raise TypeError(f"command must be a str, got {type(command).__name__}")
        if not (isinstance(timeout_s, int | float) and timeout_s > 0):
            raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
        if not self.alive:
            raise RuntimeError(
                "the terminal's shell has exited; capture() shows its last screen, close() and start anew"
            )
        self._runs += 1
        body = command.rstrip()
        if self.sandbox is None:
            if "\n" in body:  # one compound command, so the suffix cannot land inside a heredoc
                body = "{ " + body + "\n}"
            sep = " " if body.endswith("&") and not body.endswith("&&") else "; "
            channel = f"{self.name}-{self._runs}"
            self.send_keys(f"{body}{sep}{shlex.quote(self._tmux)} wait -S {channel}", literal=True)
            try:
                self._call([self._tmux, "-S", str(self.socket), "wait-for", channel], timeout_s=timeout_s)
            except subprocess.TimeoutExpired:
                raise TerminalTimeout(self._timeout_message(command, timeout_s)) from None
        else:
            assert self._done is not None and self._scripts is not None
            marker = self._done / str(self._runs)
            # the command is sourced from a file: the shell keeps its state (cd, variables, jobs),
            # and a syntax error (an unclosed quote, a block of comments) returns status 2 instead of
            # leaving the shell waiting for more input
            name = f"cmd-{self._runs}.sh"
            _write_new(self._scripts / name, body + "\n")
            scripts = self._inside(self._scripts, _SCRIPTS_INSIDE)
            self.send_keys(f". {scripts}/{name}; echo $? > {self._done_inside()}/{self._runs}", literal=True)
            deadline = time.monotonic() + timeout_s
            self.last_status = None
            while not os.path.lexists(marker):  # whatever is there: `_read_status` checks what
                if time.monotonic() >= deadline:
                    raise TerminalTimeout(self._timeout_message(command, timeout_s))
                time.sleep(0.01)
            self.last_status = _read_status(marker)
        return self.capture()

    def execute(self, command: str, *, timeout_s: float = 30.0) -> str:
        """Run `command` on a cleared screen and history; return only what it printed.

        The echoed command line (however many rows it wraps to) and the next prompt are cut off;
        `last_status` holds the exit status for a sandboxed shell. Raises `TerminalTimeout` as `run`.
        """
        self.run("clear", timeout_s=_TMUX_TIMEOUT_S)
        self.tmux("clear-history", "-t", _SESSION)
        self.run(command, timeout_s=timeout_s)
        screen = self.tmux("capture-pane", "-p", "-J", "-t", _SESSION, "-S", "-")
        return _strip_echo(screen, self._suffix())

    def _suffix(self) -> str:
        """The text `run` appended to its last command (how the echoed command line ends)."""
        if self.sandbox is None:
            return f"wait -S {self.name}-{self._runs}"
        return f"echo $? > {self._done_inside()}/{self._runs}"

    def _done_inside(self) -> str:
        """The completion-file folder as the sandboxed shell sees it (bound, or the host path)."""
        assert self._done is not None
        return self._inside(self._done, _DONE_INSIDE)

    def _inside(self, host: Path, mount: str) -> str:
        """A folder of ours as the sandboxed shell sees it: at `mount` when isolated, else `host`."""
        assert self.sandbox is not None
        return mount if self.sandbox.isolated else str(host)

    def capture(self, *, history: bool = False) -> str:
        """The visible pane as text, or with `history` the whole scrollback plus the pane."""
        return self.tmux("capture-pane", "-p", "-t", _SESSION, *(["-S", "-"] if history else []))

    @property
    def size(self) -> tuple[int, int]:
        """The pane's (columns, rows)."""
        out = self.tmux("display-message", "-p", "-t", _SESSION, "#{pane_width} #{pane_height}").split()
        return int(out[0]), int(out[1])

    # -- internals -------------------------------------------------------------------------------

    def _wait_ready(self, wait_s: float = _READY_S) -> None:
        """Wait until the pane shows something (the prompt), so typed keys reach a ready shell.

        Keys typed before bash's line editor starts are echoed twice. A shell that shows nothing
        within `wait_s` is not an error; a session that ended is (with what its pane last showed).
        """
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not self.alive:
                shown = " | ".join(line for line in self.capture().splitlines() if line.strip())
                raise RuntimeError(
                    f"the terminal's command exited right after it started: {shown or 'no output'}"
                )
            if self.capture().strip():
                return
            time.sleep(0.01)

    def _timeout_message(self, command: str, timeout_s: float) -> str:
        shown = command if len(command) <= 80 else command[:77] + "..."
        return (
            f"terminal command {shown!r} did not finish within timeout_s={timeout_s:g}; it is still "
            "running: call interrupt() (C-c) or wait and capture() again"
        )

    def _start_server(self, conf: Path) -> None:
        """The tmux server in the foreground, killed by the kernel when this process dies."""
        setpriv = _which("setpriv", os.environ.get("PATH", SANDBOX_PATH), "util-linux")
        tmux = [self._tmux, "-D", "-S", str(self.socket), "-f", str(conf)]
        argv = [setpriv, "--pdeathsig", "KILL", "--", *tmux]
        self._server = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self._env,
            cwd=self.cwd,
            start_new_session=True,  # Ctrl-C at the caller's terminal reaches us, not the server
        )
        deadline = time.monotonic() + _TMUX_TIMEOUT_S
        while not self.socket.exists():
            if self._server.poll() is not None:
                raise RuntimeError(f"the tmux server exited at start (status {self._server.returncode})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the tmux server made no socket within {_TMUX_TIMEOUT_S} s")
            time.sleep(0.01)

    def _call(
        self, argv: list[str], *, check: bool = True, timeout_s: float = _TMUX_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """Run a tmux client with the session's environment (never the caller's)."""
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=self._env,
            cwd=self.cwd,
            timeout=timeout_s,
            check=False,
        )
        if check and done.returncode != 0:
            what = next((a for a in argv[3:] if not a.startswith("-") and a != str(self.cwd)), "command")
            raise RuntimeError(
                f"tmux {what} failed (exit {done.returncode}): {done.stderr.strip() or 'no message'}"
            )
        return done


def _write_new(path: Path, text: str) -> None:
    """Create `path` (never there before, never through a link) with `text`, readable by all."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def _read_status(marker: Path) -> int | None:
    """The exit status a sandboxed shell wrote (None: not yet written out, not a number, or not a
    regular file: the shell's folder is the agent's, so a link, FIFO or directory may be there)."""
    for _ in range(50):  # the file exists before `echo` has written to it
        data = read_untrusted(marker, _STATUS_BYTES)
        if data is None:
            return None
        text = data.decode("ascii", errors="replace").strip()
        if text:
            return int(text) if text.isdigit() else None
        time.sleep(0.01)
    return None


_PROMPT = re.compile(r"^\S*[$#]\s*$")


def _strip_echo(screen: str, suffix: str) -> str:
    """The lines after the echoed command (the last line holding `suffix`), without a trailing prompt.

    `screen` is captured with wrapped rows joined (`capture-pane -J`), so a long command is one line."""
    lines = screen.rstrip("\n").split("\n")
    at = max((i for i, line in enumerate(lines) if suffix in line), default=-1)
    out = lines[at + 1 :]
    while out and not out[-1].strip():
        out.pop()
    if out and _PROMPT.match(out[-1].strip()):
        out.pop()
    return "\n".join(out)


def _session_members(sid: int) -> list[int]:
    """Pids of the processes in session `sid` (from /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == sid and fields[0] != b"Z":
            pids.append(int(entry))
    return pids


def _kill_session(sid: int, wait_s: float = 3.0) -> None:
    """SIGKILL every process of session `sid` (a tmux pane) until none is left or `wait_s` passed."""
    deadline = time.monotonic() + wait_s
    while True:
        members = _session_members(sid)
        if not members or time.monotonic() >= deadline:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


__all__ = ["DEFAULT_SHELL", "TerminalSession", "TerminalTimeout"]
