"""`Sandbox`: run an agent's shell commands with no network, a read-only system and hard limits.

`Sandbox.run(command)` passes the agent's command to `bash -c` inside a fresh bubblewrap (`bwrap`)
sandbox and returns a `CommandResult` (exit code, output, `timed_out`, `truncated`, duration and
the `reason`: the limit that fired). The host side never evaluates model output: the command is
one argv element of `bash -c`, and only that bash, inside the sandbox, parses it.

The sandbox (bubblewrap installed and `isolate=True`, the default):
- network: `--unshare-net`, an empty network namespace with only its own loopback, so outside
  addresses are unreachable and so are servers listening on the host's 127.0.0.1;
- file system: only the system, read-only: `/usr`, `/etc` and the `/bin`, `/sbin`, `/lib*` links
  or folders (`SYSTEM_DIRS`), plus the `ro_binds` the caller names (a toolchain, say); nothing
  else of the host (`/root`, `/home`, `/work`, `/var`, other runs, a task's tests) exists inside.
  A fresh `/dev` (itself remounted read-only) and `/proc`, private size-limited tmpfs on `/tmp`,
  `/var/tmp`, `/dev/shm` and `/run`, and the work dir bind-mounted writable *at its own host
  path*, which is also the working directory and `$HOME`. Paths therefore read the same on both
  sides; a work dir under `/tmp` sits in the private `/tmp`;
- processes: `--unshare-pid` (its own pid namespace: killing it kills every process in it),
  `--die-with-parent`, `--new-session` (no access to the caller's terminal), new IPC and UTS
  namespaces, and `--disable-userns` (no nested user namespaces);
- user: `--unshare-user`. When the caller is root the command first drops to an unprivileged
  uid (`user`, default 65534 = nobody) with `setpriv --no-new-privs`, because the kernel never
  applies RLIMIT_NPROC to uid 0; the work dir is handed to that uid (chown) and files written
  through `write_file` are too. Each command starts from a fresh sandbox: only the work dir
  carries state from one command to the next, and background processes die with the command.

Each limit of `SandboxLimits` and how it is enforced:
- `timeout_s`: wall clock per command. On expiry the sandbox's process group gets SIGKILL; bwrap
  dies and, through `--die-with-parent` and the pid namespace, so does every process inside.
  `reason="timeout"`.
- `episode_s`: the total wall time of all commands of this `Sandbox`. Each command may run at
  most the budget that is left; a command cut by the budget, and every command after it (these
  do not start), get `reason="episode_timeout"`.
- `cpu_s`: RLIMIT_CPU per process, soft `cpu_s` (SIGXCPU) and hard `cpu_s + 1` (SIGKILL).
  `reason="cpu"`.
- `memory_bytes`: RLIMIT_AS (address space) per process, rounded down to KiB; allocations beyond
  it fail (MemoryError, "cannot allocate"). `reason="memory"`.
- `max_processes`: RLIMIT_NPROC, set inside the sandbox's own user namespace, where the kernel
  counts only that sandbox's processes, for an unprivileged uid (see `user` above). A fork bomb
  hits it and keeps failing to fork until the timeout. `reason="processes"`.
- `file_size_bytes`: RLIMIT_FSIZE, rounded down to KiB: a write past it gets SIGXFSZ/EFBIG, so
  `head -c 10G /dev/zero > f` leaves a file of exactly the limit. `reason="file_size"`.
- `open_files`: RLIMIT_NOFILE per process. `reason="open_files"`.
- `tmpfs_bytes`: the size of each private tmpfs (`/tmp`, `/dev/shm`, `/run`), which live in RAM.
- `output_bytes`: stdout and stderr (merged, in order) keep their first and last `output_bytes/2`
  bytes; the middle is replaced by a marker that says how many bytes were cut.
The rlimits are set by `ulimit` in a small bash prologue inside the sandbox, after its user
namespace exists, so they are hard limits that the command cannot raise. The resource `reason`s
are read from the exit status (128 + SIGXCPU / SIGXFSZ) and from the messages that bash, Python
and libc print when a limit fires; they are labels for the agent, not a security boundary.

`isolate=False` (chosen explicitly; bubblewrap missing never silently weakens the sandbox, it
raises `MissingSystemPackage`) runs the same prologue with the rlimits, timeouts, output cap and,
under root, the uid drop, but with no namespaces: the network and the whole file system are the
host's (as far as the uid may write), RLIMIT_NPROC counts every process of that uid on the host,
and a process that calls `setsid` escapes the kill on timeout.

What is NOT contained, even with bubblewrap:
- memory and CPU are limited per process, not per sandbox: `max_processes` processes may each
  use `memory_bytes` of address space and `cpu_s` of CPU (the wall timeout still bounds them);
  there are no cgroups here, hence no total memory cap and no I/O or CPU-share limits;
- RLIMIT_FSIZE caps each file, not the disk: many files may still fill the disk behind the work dir;
- what is mounted (the system folders, `ro_binds`) stays readable: `/etc` is the host's, less
  what the sandbox uid may not read (`/etc/shadow`);
- Unix sockets with a path are not network: a world-writable socket outside `/run` and `/tmp`
  could still be reached;
- the file helpers resolve symlinks when called; a sandboxed process running at that moment (a
  terminal's shell) could swap a path component between that check and the open;
- RLIMIT_AS counts reserved address space, not memory in use: runtimes that reserve large ranges
  up front (the JVM's heap, Go, Node, sanitizers) need a larger `memory_bytes` or None;
- kernel exploits are out of scope: this is a namespace sandbox, not a virtual machine.
Not thread-safe: one `Sandbox` runs one command at a time.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import resource
import selectors
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal

from iclr26.agents.scratch import scratch_dir
from iclr26.core import sysdeps
from iclr26.core.errors import UserError
from iclr26.core.validation import check_int, check_seconds

Reason = Literal["timeout", "episode_timeout", "cpu", "memory", "file_size", "processes", "open_files"]

SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SYSTEM_DIRS: tuple[str, ...] = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The host folders a sandbox sees (read-only, those that exist; a link such as Debian's /bin ->
usr/bin is recreated as the same link)."""
NOBODY = 65534  # the uid a root caller's commands run as unless `user=` says otherwise
_KIB = 1024
_MIB = 1024 * 1024
_DRAIN_S = 0.5  # how long to keep reading after the command exited or was killed
_SCAN_OVERLAP = 128  # bytes of the previous chunk re-scanned so a message split across reads is seen

# Messages printed when a limit fires (bash, Python, libc strerror, C++ runtimes), in priority order.
# bash's reports of a child killed by SIGXCPU/SIGXFSZ count even when the command then succeeds;
# the others (which a program may also print for other reasons) only when the command failed.
_BASH_SIGNAL_REPORTS: dict[Reason, re.Pattern[bytes]] = {
    "cpu": re.compile(rb"CPU time limit exceeded"),
    "file_size": re.compile(rb"File size limit exceeded"),
}
_SIGNS: tuple[tuple[Reason, re.Pattern[bytes]], ...] = (
    ("file_size", re.compile(rb"File too large")),
    (
        "memory",
        re.compile(
            rb"MemoryError|[Cc]annot allocate memory|x(?:m|re)alloc: cannot allocate"
            rb"|bad_alloc|[Oo]ut of memory"
        ),
    ),
    (
        "processes",
        re.compile(
            rb"fork: (?:retry: )?Resource temporarily unavailable|[Cc]an(?:'|no)t fork"
            rb"|BlockingIOError: \[Errno 11\]"
        ),
    ),
    ("open_files", re.compile(rb"Too many open files")),
)
_EXIT_REASONS: dict[int, Reason] = {128 + signal.SIGXCPU: "cpu", 128 + signal.SIGXFSZ: "file_size"}


class PathEscapeError(UserError, ValueError):
    """A path given to a `Sandbox` file helper points outside its work dir."""


@dataclass(frozen=True)
class SandboxLimits:
    """The limits every command of a `Sandbox` runs under; None switches a resource limit off."""

    timeout_s: float = 60.0  # wall clock per command, seconds
    episode_s: float | None = 1800.0  # wall clock of all commands of one Sandbox together, seconds
    cpu_s: int | None = 60  # CPU seconds per process (RLIMIT_CPU)
    memory_bytes: int | None = 4 * 1024 * _MIB  # address space per process (RLIMIT_AS)
    max_processes: int | None = 256  # processes in the sandbox (RLIMIT_NPROC in its user namespace)
    file_size_bytes: int | None = 1024 * _MIB  # largest file a command may write (RLIMIT_FSIZE)
    open_files: int | None = 1024  # open file descriptors per process (RLIMIT_NOFILE)
    tmpfs_bytes: int = 256 * _MIB  # size of each private tmpfs: /tmp, /dev/shm, /run (RAM)
    output_bytes: int = 64 * _KIB  # output kept per command: first and last half, the middle is cut

    def __post_init__(self) -> None:
        check_seconds("SandboxLimits.timeout_s", self.timeout_s)
        check_seconds("SandboxLimits.episode_s", self.episode_s, optional=True)
        check_int("SandboxLimits.cpu_s", self.cpu_s, 1, unit="seconds", optional=True)
        check_int("SandboxLimits.memory_bytes", self.memory_bytes, 16 * _MIB, unit="bytes", optional=True)
        check_int("SandboxLimits.max_processes", self.max_processes, 8, unit="processes", optional=True)
        check_int("SandboxLimits.file_size_bytes", self.file_size_bytes, _KIB, unit="bytes", optional=True)
        check_int("SandboxLimits.open_files", self.open_files, 16, unit="descriptors", optional=True)
        check_int("SandboxLimits.tmpfs_bytes", self.tmpfs_bytes, _MIB, unit="bytes")
        check_int("SandboxLimits.output_bytes", self.output_bytes, 64, unit="bytes")


@dataclass(frozen=True)
class CommandResult:
    """What one sandboxed command did; `reason` names the limit that fired, None when none did."""

    command: str
    exit_code: int | None  # the shell's status (128 + n: killed by signal n); None: stopped by a timeout
    output: str  # stdout and stderr merged, truncated to SandboxLimits.output_bytes with a marker
    timed_out: bool  # killed by the per-command timeout or the episode budget (or never started)
    truncated: bool  # the middle of the output was cut
    duration_s: float  # wall clock
    reason: Reason | None = None  # a resource limit that was hit, else the timeout that stopped it

    @property
    def ok(self) -> bool:
        """The command exited with status 0 and no limit fired."""
        return self.exit_code == 0 and self.reason is None


class _OutputCapture:
    """Keeps the head and tail of a byte stream and notes which limit messages passed through."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.reports: set[Reason] = set()  # bash said a child was killed by SIGXCPU / SIGXFSZ
        self.signs: set[Reason] = set()  # other limit messages
        self._overlap = b""

    def feed(self, data: bytes) -> None:
        """Add one chunk of output."""
        self.total += len(data)
        window = self._overlap + data
        for reason, pattern in _BASH_SIGNAL_REPORTS.items():
            if reason not in self.reports and pattern.search(window):
                self.reports.add(reason)
        for reason, pattern in _SIGNS:
            if reason not in self.signs and pattern.search(window):
                self.signs.add(reason)
        self._overlap = window[-_SCAN_OVERLAP:]
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit + 65536:
                del self.tail[: -self.tail_limit]

    def text(self) -> tuple[str, bool]:
        """The kept output with a marker where bytes were cut, and whether any were."""
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        if cut <= 0:
            return (bytes(self.head) + bytes(self.tail)).decode(errors="replace"), False
        marker = (
            f"\n[... {cut} bytes of output cut: {self.total} bytes in all, "
            f"kept the first {len(self.head)} and the last {len(tail)} ...]\n"
        )
        return bytes(self.head).decode(errors="replace") + marker + tail.decode(errors="replace"), True


class Sandbox:
    """A work dir plus a bubblewrap sandbox and `SandboxLimits` in which `run` executes commands.

    Parameters
    ----------
    workdir : str or Path, optional
        Use this existing directory (never removed). Default: a fresh temporary directory, created
        by `open()`/`with` and removed by `close()` unless `keep=True`.
    limits : SandboxLimits, optional
        Per-command and per-episode limits (defaults: `SandboxLimits()`).
    isolate : bool, default True
        True: bubblewrap namespaces (no network, read-only system); raises `MissingSystemPackage`
        when bubblewrap is missing. False: rlimits, timeouts and the uid drop only (see module doc).
    keep : bool, default False
        Keep the temporary work dir after `close()`.
    user : int, optional
        The host uid commands run as. Root callers: default 65534 (nobody), never 0. Others: only
        their own uid.
    env : mapping, optional
        Extra environment variables for the commands (on top of PATH, HOME, LANG, TMPDIR).
    ro_binds : mapping, optional
        Host folders every command sees read-only, host path -> absolute path inside (besides
        `SYSTEM_DIRS`); only with isolation.
    drop_inside : bool, default False
        Root callers only: bwrap runs as root with no user namespace, and the command drops to
        `user` inside it (setpriv: no capabilities, no new privileges). Bind sources are then opened
        as root, so sockets and files in folders only root may enter can be bound in, while the
        command runs as a real unprivileged uid (a desktop app reaching the desktop's buses).
    caller_uid : bool, default False
        Run as the caller's uid even when that is root (no drop to `user`), for programs that must
        be admitted by a service which accepts only the caller's uid (the desktop's accessibility bus
        admits root and its owner). Inside the sandbox that uid has no capabilities, but it owns the
        caller's files (readable where mounted) and the kernel exempts root from `max_processes`.
    """

    def __init__(
        self,
        workdir: str | os.PathLike[str] | None = None,
        limits: SandboxLimits | None = None,
        *,
        isolate: bool = True,
        keep: bool = False,
        user: int | None = None,
        env: Mapping[str, str] | None = None,
        ro_binds: Mapping[str | os.PathLike[str], str] | None = None,
        caller_uid: bool = False,
        drop_inside: bool = False,
    ) -> None:
        if limits is not None and not isinstance(limits, SandboxLimits):
            raise TypeError(f"limits must be a SandboxLimits, got {type(limits).__name__}")
        if not isinstance(isolate, bool):
            raise TypeError(f"isolate must be True or False, got {isolate!r}")
        self.limits = limits if limits is not None else SandboxLimits()
        self.isolated = isolate
        self.keep = keep
        self._given = Path(workdir).absolute() if workdir is not None else None
        if caller_uid and user is not None:
            raise ValueError("caller_uid=True runs as the caller; leave user unset")
        if drop_inside and (caller_uid or not isolate or not _root()):
            raise ValueError("drop_inside needs a root caller, isolation, and not caller_uid")
        self._drop_inside = drop_inside
        self.uid, self.gid = (os.geteuid(), os.getegid()) if caller_uid else _sandbox_user(user)
        self._extra_env = _check_env(env)
        if ro_binds and not isolate:
            raise ValueError("ro_binds need isolation; this Sandbox has isolate=False")
        self.ro_binds = dict(ro_binds or {})
        host_path = os.environ.get("PATH", SANDBOX_PATH)
        if isolate:
            sysdeps.require("bubblewrap")
            self._bwrap: str | None = _which("bwrap", host_path, "bubblewrap")
        else:
            self._bwrap = None
        drop = _root() and not caller_uid and not drop_inside  # drop_inside: setpriv inside bwrap
        self._setpriv = _which("setpriv", host_path, "util-linux") if drop else None
        self._bash = _which("bash", SANDBOX_PATH, "bash")
        self._workdir: Path | None = None
        self._created = False
        self.spent_s = 0.0  # wall time used by this Sandbox's commands so far

    # -- lifecycle -------------------------------------------------------------------------------

    def open(self) -> Sandbox:
        """Create (or adopt) the work dir and check that a sandbox starts here; returns self."""
        if self._workdir is not None:
            return self
        if self._given is not None:
            if not self._given.is_dir():
                raise UserError(
                    f"Sandbox workdir {str(self._given)!r} is not a directory; create it or pass None"
                )
            path = self._given.resolve()
        else:
            path = scratch_dir("iclr26-sandbox-").resolve()
            self._created = True
        try:
            if not self._drop_inside:  # else bwrap, as root, opens it
                self._check_reachable(path)
            if _root():
                _chown_tree(path, self.uid, self.gid)
            self._workdir = path
            self._probe()
        except BaseException:
            self._workdir = None
            if self._created:
                _rmtree(path)
                self._created = False
            raise
        return self

    def close(self) -> None:
        """Remove the temporary work dir (unless `keep`); a given work dir stays."""
        if self._workdir is not None and self._created and not self.keep:
            _rmtree(self._workdir)
        self._workdir = None
        self._created = False

    def __enter__(self) -> Sandbox:
        return self.open()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def workdir(self) -> Path:
        """The work dir on the host; inside the sandbox it has the same path."""
        if self._workdir is None:
            raise RuntimeError("the Sandbox is not open: use `with Sandbox() as sb:` or call sb.open() first")
        return self._workdir

    @property
    def remaining_s(self) -> float | None:
        """Seconds left of the episode budget (None: no budget)."""
        if self.limits.episode_s is None:
            return None
        return max(0.0, self.limits.episode_s - self.spent_s)

    @property
    def env(self) -> dict[str, str]:
        """The environment commands start with."""
        return {
            "PATH": SANDBOX_PATH,
            "HOME": str(self.workdir),
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            **self._extra_env,
        }

    # -- commands --------------------------------------------------------------------------------

    def command_line(
        self,
        argv: Sequence[str],
        *,
        binds: Mapping[str | os.PathLike[str], str] | None = None,
        ro_binds: Mapping[str | os.PathLike[str], str] | None = None,
        new_session: bool = True,
        hide: Sequence[str] = (),
        clear_env: Mapping[str, str] | None = None,
        inner_uid: int | None = None,
    ) -> list[str]:
        """The host argv that runs `argv` inside this sandbox with its rlimits (no timeout: the caller's).

        `binds` maps extra host directories to (writable) paths inside, `ro_binds` to read-only ones
        (on top of the Sandbox's own); only with isolation.
        `new_session=False` keeps the caller's terminal as the controlling tty (for a tmux pane).
        `hide`: host folders covered by an empty tmpfs inside (binds into them still show).
        `clear_env`: the whole environment inside (bwrap --clearenv), whatever the caller's is.
        `inner_uid`: the uid and gid the command sees inside (mapped to the sandbox's own outside), for
        programs that act differently as root (xterm, as root, sets groups a user namespace refuses).
        """
        argv = list(argv)
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError(f"argv must be a non-empty sequence of str, got {argv!r}")
        workdir = str(self.workdir)
        prefix: list[str] = []
        if self._setpriv is not None:
            prefix = [self._setpriv, f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups"]
            prefix += ["--no-new-privs", "--"]
        if self._bwrap is None:
            if binds or ro_binds or hide or clear_env is not None or inner_uid is not None:
                raise ValueError("binds, hide and clear_env need isolation; this Sandbox has isolate=False")
            return [*prefix, self._bash, "--noprofile", "--norc", "-c", self._prologue(), "sandbox", *argv]
        tmpfs = str(self.limits.tmpfs_bytes)
        users = [] if self._drop_inside else ["--unshare-user", "--disable-userns"]
        box = [self._bwrap, *users, "--unshare-net", "--unshare-pid"]
        box += ["--unshare-ipc", "--unshare-uts", "--hostname", "sandbox", "--unshare-cgroup-try"]
        box += ["--die-with-parent", *(["--new-session"] if new_session else [])]
        # as root (drop_inside), bwrap makes its tmpfs 0755: /tmp and /dev/shm must be open to the uid
        sticky = ["--perms", "1777"] if self._drop_inside else []
        box += [*_system_mounts(), "--dev", "/dev", "--size", tmpfs, *sticky, "--tmpfs", "/dev/shm"]
        box += ["--remount-ro", "/dev", "--proc", "/proc"]
        box += ["--size", tmpfs, *sticky, "--tmpfs", "/tmp", "--size", tmpfs, "--tmpfs", "/run"]
        box += ["--size", tmpfs, *sticky, "--tmpfs", "/var/tmp"]
        if inner_uid is not None:
            check_int("inner_uid", inner_uid, 1, 2**31 - 2)
            box += ["--uid", str(inner_uid), "--gid", str(inner_uid)]
        for folder in hide:
            if not isinstance(folder, str) or not folder.startswith("/"):
                raise ValueError(f"hide takes absolute paths, got {folder!r}")
            box += ["--size", tmpfs, "--tmpfs", folder]
        if clear_env is not None:
            box.append("--clearenv")
            for key, value in _check_env(clear_env).items():
                box += ["--setenv", key, value]
        box += [*self._parents(workdir), "--bind", workdir, workdir]
        mounts = [("--bind", b) for b in (binds or {}).items()]
        mounts += [("--ro-bind", b) for b in {**self.ro_binds, **(ro_binds or {})}.items()]
        for flag, (host, inside) in mounts:
            if not isinstance(inside, str) or not inside.startswith("/"):
                raise ValueError(f"binds values must be absolute paths inside the sandbox, got {inside!r}")
            box += [*self._parents(inside), flag, str(Path(host).resolve()), inside]
        box += ["--chdir", workdir, "--"]
        if self._drop_inside:
            setpriv = _which("setpriv", SANDBOX_PATH, "util-linux")
            box += [setpriv, f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--no-new-privs"]
            box += ["--inh-caps=-all", "--bounding-set=-all", "--"]
        return [*prefix, *box, self._bash, "--noprofile", "--norc", "-c", self._prologue(), "sandbox", *argv]

    def _parents(self, inside: str) -> list[str]:
        """With `drop_inside`: the bwrap options that create the folders above a mount point in the
        private tmpfs mounts traversable (bwrap, as root, makes them 0700, closed to the command's uid)."""
        if not self._drop_inside:
            return []
        out = []
        for parent in reversed(Path(inside).parents):
            if any(parent.is_relative_to(top) and parent != Path(top) for top in PRIVATE_TMPFS):
                out += ["--perms", "0755", "--dir", str(parent)]
        return out

    def hand_over(self, path: str | os.PathLike[str]) -> None:
        """Give the folder `path` and everything in it to the sandbox's uid (root callers; links
        themselves, never their targets), so the command may write there."""
        if _root():
            _chown_tree(Path(path), self.uid, self.gid)

    def run(self, command: str, *, timeout_s: float | None = None) -> CommandResult:
        """Run `bash -c command` in the sandbox under its limits; `timeout_s` overrides limits.timeout_s."""
        if not isinstance(command, str):
            raise TypeError(f"command must be a str (a bash command line), got {type(command).__name__}")
        if timeout_s is not None:
            check_seconds("timeout_s", timeout_s)
        limit = self.limits.timeout_s if timeout_s is None else float(timeout_s)
        remaining = self.remaining_s
        if remaining is not None and remaining <= 0:
            note = f"[sandbox: the episode budget of {self.limits.episode_s:g} s is spent; command not run]"
            return CommandResult(command, None, note, True, False, 0.0, "episode_timeout")
        budget_binds = remaining is not None and remaining < limit
        allowed = min(limit, remaining) if remaining is not None else limit
        argv = self.command_line([self._bash, "-c", command])
        code, killed, capture, duration = _spawn_captured(
            argv, allowed, self.limits.output_bytes, env=self.env, cwd=self.workdir
        )
        self.spent_s += duration
        output, truncated = capture.text()
        reason = _reason(code, killed, capture, budget_binds)
        return CommandResult(command, code, output, killed, truncated, duration, reason)

    # -- files -----------------------------------------------------------------------------------

    def path(self, path: str | os.PathLike[str]) -> Path:
        """The host path of `path` (relative to the work dir, or absolute inside it); raises on escapes."""
        root = self.workdir
        raw = Path(path)
        candidate = raw if raw.is_absolute() else root / raw
        resolved = Path(os.path.realpath(candidate))
        if resolved != root and not resolved.is_relative_to(root):
            raise PathEscapeError(
                f"path {str(path)!r} resolves to {str(resolved)!r}, outside the sandbox work dir "
                f"{str(root)!r}; give a path relative to the work dir (no '..' or symlinks out, no "
                "absolute path elsewhere)"
            )
        return resolved

    def write_file(self, path: str | os.PathLike[str], content: str | bytes) -> Path:
        """Write `content` to `path` inside the work dir (parents created); returns the host path."""
        if not isinstance(content, str | bytes):
            raise TypeError(f"content must be str or bytes, got {type(content).__name__}")
        target = self.path(path)
        if target == self.workdir:
            raise PathEscapeError(f"path {str(path)!r} is the work dir itself; name a file inside it")
        made = [p for p in reversed(target.parents) if p.is_relative_to(self.workdir) and not p.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if _root():
            for p in [*made, target]:
                os.chown(p, self.uid, self.gid, follow_symlinks=False)
        return target

    def read_bytes(self, path: str | os.PathLike[str]) -> bytes:
        """The bytes of the file at `path` inside the work dir."""
        fd = os.open(self.path(path), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def read_file(self, path: str | os.PathLike[str]) -> str:
        """The text (UTF-8, undecodable bytes replaced) of the file at `path` inside the work dir."""
        return self.read_bytes(path).decode(errors="replace")

    # -- internals -------------------------------------------------------------------------------

    def _prologue(self) -> str:
        """The bash line that sets the rlimits (hard, so they cannot be raised) and execs "$@"."""
        lim = self.limits
        steps = ["ulimit -c 0"]
        if lim.cpu_s is not None:
            soft = _clamp(resource.RLIMIT_CPU, lim.cpu_s)
            steps += [f"ulimit -S -t {soft}", f"ulimit -H -t {_clamp(resource.RLIMIT_CPU, soft + 1)}"]
        if lim.memory_bytes is not None:
            steps.append(f"ulimit -v {_clamp(resource.RLIMIT_AS, lim.memory_bytes) // _KIB}")
        if lim.file_size_bytes is not None:
            steps.append(f"ulimit -f {_clamp(resource.RLIMIT_FSIZE, lim.file_size_bytes) // _KIB}")
        if lim.open_files is not None:
            steps.append(f"ulimit -n {_clamp(resource.RLIMIT_NOFILE, lim.open_files)}")
        if lim.max_processes is not None:
            steps.append(f"ulimit -u {_clamp(resource.RLIMIT_NPROC, lim.max_processes)}")
        return " && ".join([*steps, 'exec "$@"'])

    def _check_reachable(self, path: Path) -> None:
        """The sandbox uid must be able to reach `path` (bwrap opens it as that uid)."""
        if not _root():
            if not os.access(path, os.W_OK | os.X_OK):
                raise UserError(
                    f"Sandbox workdir {str(path)!r} is not writable by you; pick another directory"
                )
            return
        for parent in path.parents:
            st = parent.stat()
            mode = st.st_mode
            if mode & stat.S_IXOTH or (st.st_uid == self.uid and mode & stat.S_IXUSR):
                continue
            if st.st_gid == self.gid and mode & stat.S_IXGRP:
                continue
            raise UserError(
                f"Sandbox workdir {str(path)!r} is unreachable for the sandbox uid {self.uid}: "
                f"{str(parent)!r} has mode {stat.filemode(mode)}; use a directory under /tmp (the "
                f"default) or `chmod o+x {parent}`"
            )

    def _probe(self) -> None:
        """Start one empty sandbox so a host that cannot run one fails here, with bwrap's reason."""
        if self._bwrap is None:
            return
        done = subprocess.run(
            self.command_line(["true"]),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.workdir,
            timeout=30,
            check=False,
        )
        if done.returncode != 0:
            why = " ".join((done.stderr or done.stdout).split()) or f"exit status {done.returncode}"
            raise UserError(
                f"bubblewrap cannot start a sandbox on this host ({why}); it needs unprivileged user "
                "namespaces (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1, "
                "no AppArmor userns restriction), or pass isolate=False for rlimits only"
            )


@dataclass(frozen=True)
class Captured:
    """What `run_capped` saw: exit status (None when killed at the timeout), kept output, flags."""

    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool
    duration_s: float


def run_capped(
    argv: Sequence[str],
    *,
    timeout_s: float,
    output_bytes: int,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Captured:
    """Run `argv` on the host in its own process group, stdout and stderr merged, keeping the first
    and last `output_bytes/2` bytes (`Sandbox.run`'s capture); at `timeout_s` the whole group gets
    SIGKILL. For host-side clients of an agent's environment (`docker exec`), whose output and
    lifetime the agent decides."""
    check_seconds("timeout_s", timeout_s)
    check_int("output_bytes", output_bytes, 64, unit="bytes")
    code, killed, capture, duration = _spawn_captured(
        argv, timeout_s, output_bytes, env=None if env is None else dict(env), cwd=cwd
    )
    output, truncated = capture.text()
    return Captured(code, output, killed, truncated, duration)


def _spawn_captured(
    argv: Sequence[str],
    timeout_s: float,
    output_bytes: int,
    *,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
) -> tuple[int | None, bool, _OutputCapture, float]:
    """Run `argv` in its own process group with stdout and stderr merged into a bounded capture;
    SIGKILL the group at `timeout_s`. (exit status or None when killed, killed, capture, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=None if env is None else dict(env),
        cwd=cwd,
        start_new_session=True,
        close_fds=True,
    )
    capture = _OutputCapture(output_bytes)
    try:
        killed = _pump(proc, capture, deadline=start + timeout_s)
    finally:
        _kill_group(proc)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    code = None if killed else _shell_status(proc.returncode)
    return code, killed, capture, time.monotonic() - start


PRIVATE_TMPFS = ("/tmp", "/run", "/dev/shm", "/var/tmp")
"""The folders each sandbox gets as a private tmpfs."""


def _system_mounts() -> list[str]:
    """bwrap arguments that show `SYSTEM_DIRS` read-only (a top-level link as the same link)."""
    out: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            out += ["--ro-bind", path, path]
    return out


def read_untrusted(path: str | os.PathLike[str], max_bytes: int) -> bytes | None:
    """The last `max_bytes` of the regular file at `path`, opened without following a link and
    without blocking; None when it is absent, a link, a FIFO, a folder or another non-file. For
    files in a folder an agent may change, which the host reads."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # a link (ELOOP), or gone
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > max_bytes:
            os.lseek(fd, st.st_size - max_bytes, os.SEEK_SET)
        chunks, left = [], max_bytes
        while left > 0:
            data = os.read(fd, min(left, 1 << 20))
            if not data:
                break
            chunks.append(data)
            left -= len(data)
        return b"".join(chunks)
    finally:
        os.close(fd)


def readable_by_all(root: str | os.PathLike[str]) -> None:
    """a+rX on `root` and everything below it, one entry at a time, links skipped (`chmod -R`
    follows a link named on its command line). For a tree in a folder no one else can change."""
    for top, _dirs, files in os.walk(root):
        for path in [top, *(os.path.join(top, name) for name in files)]:
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode) or (stat.S_ISREG(mode) and mode & 0o111):
                os.chmod(path, stat.S_IMODE(mode) | 0o555)
            elif stat.S_ISREG(mode):
                os.chmod(path, stat.S_IMODE(mode) | 0o444)


def _pump(proc: subprocess.Popen[bytes], capture: _OutputCapture, *, deadline: float) -> bool:
    """Read `proc`'s output into `capture` until it ends; SIGKILL its group at `deadline`. True if killed."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    killed = False
    stop_at: float | None = None  # once the command exited or was killed: stop reading by then
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if stop_at is None and proc.poll() is not None:
                stop_at = now + _DRAIN_S
            if not killed and stop_at is None and now >= deadline:
                _kill_group(proc)
                killed = True
                stop_at = now + _DRAIN_S
            if stop_at is not None and now >= stop_at:
                return killed
            wake = min(deadline if stop_at is None else stop_at, now + 0.05)
            if sel.select(max(0.0, wake - now)):
                data = os.read(fd, 65536)
                if not data:
                    return killed
                capture.feed(data)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command's process group (with bwrap: the sandbox, through its pid namespace)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _shell_status(returncode: int) -> int:
    """Popen's return code as a shell reports it: 128 + n for death by signal n."""
    return 128 - returncode if returncode < 0 else returncode


def _reason(code: int | None, killed: bool, capture: _OutputCapture, budget_binds: bool) -> Reason | None:
    """The limit that fired: by exit status, bash's signal report, other messages on failure, or time."""
    if code is not None and code in _EXIT_REASONS:
        return _EXIT_REASONS[code]
    for reason in _BASH_SIGNAL_REPORTS:
        if reason in capture.reports:
            return reason
    if killed or code != 0:
        for reason, _ in _SIGNS:
            if reason in capture.signs:
                return reason
    if killed:
        return "episode_timeout" if budget_binds else "timeout"
    return None


def _clamp(which: int, value: int) -> int:
    """`value`, lowered to this process's hard limit (which the sandbox inherits and cannot exceed)."""
    hard = resource.getrlimit(which)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def _root() -> bool:
    return os.geteuid() == 0


def _sandbox_user(user: int | None) -> tuple[int, int]:
    """The (uid, gid) commands run as: an unprivileged uid for root callers, else the caller's own."""
    if user is not None and (not isinstance(user, int) or isinstance(user, bool) or user < 0):
        raise ValueError(f"user must be a non-negative uid (int), got {user!r}")
    if not _root():
        if user is not None and user != os.geteuid():
            raise ValueError(
                f"user={user} needs root; without root commands run as yourself (uid {os.geteuid()})"
            )
        return os.geteuid(), os.getegid()
    uid = NOBODY if user is None else user
    if uid == 0:
        raise ValueError(
            "user=0 would run commands as root, whom the kernel exempts from max_processes; "
            "give an unprivileged uid"
        )
    try:
        gid = pwd.getpwuid(uid).pw_gid
    except KeyError:
        gid = uid
    return uid, gid


def _check_env(env: Mapping[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in (env or {}).items():
        if not isinstance(key, str) or not key or "=" in key or "\0" in key:
            raise ValueError(f"env keys must be non-empty str without '=' or NUL, got {key!r}")
        if not isinstance(value, str) or "\0" in value:
            raise ValueError(f"env[{key!r}] must be a str without NUL, got {value!r}")
        out[key] = value
    return out


def _which(name: str, path: str, package: str) -> str:
    found = shutil.which(name, path=path)
    if found is None:
        raise sysdeps.MissingSystemPackage(
            f"the sandbox needs `{name}` from the Debian package {package}: "
            f"run `sudo {sysdeps.install_command([package])}`"
        )
    return found


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give `path` and everything below it to uid:gid (symlinks themselves, never their targets)."""
    os.chown(path, uid, gid, follow_symlinks=False)
    for top, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.chown(os.path.join(top, name), uid, gid, follow_symlinks=False)


def _rmtree(path: Path) -> None:
    """Remove `path`, making read-only directories (a command may chmod them) writable first."""

    def fix(_func: object, failed: str, _exc: object) -> None:
        if not os.path.lexists(failed):
            return  # gone already
        os.chmod(os.path.dirname(failed), stat.S_IRWXU)
        if os.path.isdir(failed) and not os.path.islink(failed):
            os.chmod(failed, stat.S_IRWXU)
            shutil.rmtree(failed, onerror=fix)
        else:
            os.unlink(failed)

    if path.exists():
        shutil.rmtree(path, onerror=fix)


__all__ = [
    "NOBODY",
    "SANDBOX_PATH",
    "SYSTEM_DIRS",
    "Captured",
    "CommandResult",
    "PathEscapeError",
    "Reason",
    "Sandbox",
    "SandboxLimits",
    "read_untrusted",
    "readable_by_all",
    "run_capped",
]
