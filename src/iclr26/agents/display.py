"""A virtual X display (Xvfb) with screenshots and synthetic input, for computer-using agents.

`VirtualDisplay` starts Xvfb on a display number that Xvfb picks itself (`-displayfd`), waits
until it accepts connections, and tears it down on exit, even when the body raises. On that
display an agent launches applications (`launch`), looks (`screenshot`, Pillow's X11 grab) and
acts (`click`, `type_text`, `key`, `move`), all through `xdotool` run with argument lists.

Only clients holding the display's cookie may connect: Xvfb starts with `-auth` on an X authority
file (one MIT-MAGIC-COOKIE-1 of 16 random bytes, in a private 0700 folder), `-nolisten tcp`, and
every client we start (apps, xdotool, the screenshot) gets `XAUTHORITY` pointing at that file
(`authority`). Another local user can reach the socket in /tmp/.X11-unix but is refused.

    with VirtualDisplay(1280, 800) as screen:
        screen.launch(["chromium", "--no-sandbox", "--kiosk", url])
        screen.wait_for_window("Example")
        screen.click(640, 400)
        image = screen.screenshot()
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from iclr26.agents.scratch import scratch_dir
from iclr26.core.config import ConfigError
from iclr26.core.sysdeps import require
from iclr26.core.validation import check_int

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["VirtualDisplay", "XdotoolError", "stop_group"]

_XAUTH_LOCK = threading.Lock()  # the screenshot sets XAUTHORITY in this process for its grab
_COOKIE = "MIT-MAGIC-COOKIE-1"
_FAMILY_WILD = 0xFFFF  # an entry for any address and display number


def write_authority(path: Path, cookie: bytes) -> None:
    """Write an X authority file holding one MIT-MAGIC-COOKIE-1 entry that matches any display (the
    family Wild, no address, no display number), readable by its owner only."""

    def field(data: bytes) -> bytes:
        return len(data).to_bytes(2, "big") + data

    entry = _FAMILY_WILD.to_bytes(2, "big") + field(b"") + field(b"") + field(_COOKIE.encode())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(entry + field(cookie))


_MAX_SIDE = 16384  # Xvfb's framebuffer limit per side
_DEPTHS = (24,)  # Pillow's X11 grab reads 24-bit screens only ("unsupported bit depth" otherwise)
_KEY_COMBO = re.compile(r"^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$")  # xdotool keysyms: "ctrl+shift+Tab"


class XdotoolError(RuntimeError):
    """An `xdotool` command failed on the virtual display; the message carries its stderr."""


class VirtualDisplay:
    """An Xvfb screen of `width` x `height` pixels at 24-bit depth, used as a context manager.

    Parameters
    ----------
    width, height : int, default 1280, 800
        Screen size in pixels, each in [1, 16384].
    depth : int, default 24
        Colour depth; only 24 is accepted because Pillow's X11 grab reads 24-bit screens only.
    start_timeout : float, default 10.0
        Seconds to wait for Xvfb to accept connections before raising with its stderr.
    """

    def __init__(
        self, width: int = 1280, height: int = 800, depth: int = 24, *, start_timeout: float = 10.0
    ) -> None:
        self.width = check_int("width", width, 1, _MAX_SIDE)
        self.height = check_int("height", height, 1, _MAX_SIDE)
        if depth not in _DEPTHS:
            raise ConfigError(
                f"depth must be one of {_DEPTHS} (Pillow's X11 grab reads 24-bit only), got {depth!r}"
            )
        self.depth = depth
        if not (isinstance(start_timeout, int | float) and start_timeout > 0):
            raise ConfigError(f"start_timeout must be a positive number of seconds, got {start_timeout!r}")
        self.start_timeout = float(start_timeout)
        self._xvfb: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._number: int | None = None
        self._apps: list[subprocess.Popen[Any]] = []
        self._auth_dir: Path | None = None  # private 0700 folder holding the X authority file

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> VirtualDisplay:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self) -> VirtualDisplay:
        """Start Xvfb and return self once it accepts connections."""
        if self._xvfb is not None:
            raise RuntimeError(f"VirtualDisplay :{self._number} is already started; close() it first")
        require("xvfb", "xdotool")
        self._auth_dir = scratch_dir("iclr26-xauth-")  # 0700: ours only
        write_authority(self.authority, os.urandom(16))
        read_fd, write_fd = os.pipe()
        # -displayfd: Xvfb picks a free display number and writes it to write_fd once it listens.
        # -auth: only clients with our cookie. -nolisten tcp: local clients only. -noreset: keep
        # the screen (and the cookie) when the last client leaves.
        argv = ["Xvfb", "-displayfd", str(write_fd), "-auth", str(self.authority), "-nolisten", "tcp"]
        argv += ["-noreset"]
        argv += ["-screen", "0", f"{self.width}x{self.height}x{self.depth}"]
        self._stderr = tempfile.TemporaryFile(prefix="xvfb-stderr-")  # noqa: SIM115 (closed by close())
        try:
            self._xvfb = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                pass_fds=(write_fd,),
                start_new_session=True,  # a terminal's Ctrl-C reaches only us; close() then stops Xvfb
            )
            os.close(write_fd)
            write_fd = -1
            self._number = self._read_display_number(read_fd)
        except BaseException:
            self.close()
            raise
        finally:
            if write_fd >= 0:
                os.close(write_fd)
            os.close(read_fd)
        return self

    def _read_display_number(self, read_fd: int) -> int:
        """The number Xvfb writes to `-displayfd` once it listens; raises with its stderr if it never does."""
        assert self._xvfb is not None
        deadline = time.monotonic() + self.start_timeout
        data = b""
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(
                    f"Xvfb did not accept connections within start_timeout={self.start_timeout:g} s; "
                    f"stderr: {self._xvfb_stderr()}"
                )
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 64)
            if not chunk:  # Xvfb closed the pipe: it exited before listening
                self._xvfb.wait(timeout=5)
                raise RuntimeError(
                    f"Xvfb exited with status {self._xvfb.returncode} before accepting connections; "
                    f"stderr: {self._xvfb_stderr()}"
                )
            data += chunk
        return int(data.decode().strip())

    def _xvfb_stderr(self) -> str:
        """What Xvfb wrote to stderr so far, on one line."""
        if self._stderr is None:
            return "(none)"
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace").strip()
        return " | ".join(text.splitlines()[-20:]) or "(empty)"

    def close(self) -> None:
        """Kill the launched applications, stop Xvfb, remove its socket and lock; safe to call twice."""
        for app in self._apps:
            stop_group(app)
        self._apps.clear()
        if self._xvfb is not None:
            stop_group(self._xvfb)
            self._xvfb = None
        if self._number is not None:
            # Xvfb removes these itself on SIGTERM; after a SIGKILL they would block the number.
            for leftover in (Path(f"/tmp/.X11-unix/X{self._number}"), Path(f"/tmp/.X{self._number}-lock")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
            self._number = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._auth_dir is not None:
            shutil.rmtree(self._auth_dir, ignore_errors=True)
            self._auth_dir = None

    @property
    def authority(self) -> Path:
        """The X authority file (the display's cookie) that clients need in XAUTHORITY."""
        if self._auth_dir is None:
            raise RuntimeError("VirtualDisplay is not started; use `with VirtualDisplay(...) as d:`")
        return self._auth_dir / "Xauthority"

    @property
    def running(self) -> bool:
        """Whether Xvfb is started and still alive."""
        return self._xvfb is not None and self._xvfb.poll() is None

    @property
    def pid(self) -> int:
        """The Xvfb process id."""
        self._check_running()
        assert self._xvfb is not None
        return self._xvfb.pid

    @property
    def display(self) -> str:
        """The X display name, e.g. ":99"."""
        self._check_running()
        return f":{self._number}"

    @property
    def env(self) -> dict[str, str]:
        """A copy of os.environ with DISPLAY and XAUTHORITY set for this display, without
        WAYLAND_DISPLAY, and without Qt variables that point into this Python environment: importing
        OpenCV's wheel sets QT_QPA_PLATFORM_PLUGIN_PATH and QT_QPA_FONTDIR to its own Qt, with which
        Debian's Qt apps (TeXstudio, PyMOL) cannot start."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k != "WAYLAND_DISPLAY" and not (k.startswith("QT_") and sys.prefix in v)
        }
        env["DISPLAY"] = self.display
        env["XAUTHORITY"] = str(self.authority)
        return env

    def _check_running(self) -> None:
        if self._xvfb is None:
            raise RuntimeError(
                "VirtualDisplay is not started; use `with VirtualDisplay(...) as d:` or d.start()"
            )
        if self._xvfb.poll() is not None:
            raise RuntimeError(
                f"Xvfb exited with status {self._xvfb.returncode}; stderr: {self._xvfb_stderr()}"
            )

    # -- applications and screenshots ----------------------------------------------------------

    def launch(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stdout: int | IO[Any] | None = subprocess.DEVNULL,
        stderr: int | IO[Any] | None = subprocess.DEVNULL,
        text: bool = False,
        pass_fds: Sequence[int] = (),
        inherit_env: bool = True,
    ) -> subprocess.Popen[Any]:
        """Start the program `args` (argv list) on this display; it and its children die on close().
        `pass_fds`: descriptors the program inherits (as `subprocess.Popen`). `inherit_env=False`: its
        environment is `env` alone, not `env` over ours."""
        if isinstance(args, str) or not args or not all(isinstance(a, str) for a in args):
            raise TypeError(f"args must be a non-empty list of strings (argv, no shell), got {args!r}")
        app = subprocess.Popen(
            list(args),
            env={**(self.env if inherit_env else {}), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            text=text,
            pass_fds=tuple(pass_fds),
            start_new_session=True,  # its own process group, so close() also stops its children
        )
        self._apps.append(app)
        return app

    def screenshot(self, path: str | os.PathLike[str] | None = None) -> Image.Image:
        """The whole screen as an RGB image of size (width, height); also saved to `path` if given."""
        self._check_running()
        from PIL import ImageGrab, features

        if not features.check("xcb"):
            raise RuntimeError(
                "this Pillow was built without X11 (xcb) support; install the PyPI wheel of pillow"
            )
        with _XAUTH_LOCK:  # xcb reads the cookie's file from this process's XAUTHORITY
            before = os.environ.get("XAUTHORITY")
            os.environ["XAUTHORITY"] = str(self.authority)
            try:
                image = ImageGrab.grab(xdisplay=self.display).convert("RGB")
            finally:
                if before is None:
                    os.environ.pop("XAUTHORITY", None)
                else:
                    os.environ["XAUTHORITY"] = before
        if path is not None:
            image.save(path)
        return image

    def wait_for_window(self, name: str, timeout: float = 10.0, *, map_unmapped: bool = False) -> int:
        """The id of the first visible window whose title matches regex `name`, waiting up to `timeout` s.

        `map_unmapped`: also map the matching windows that are not shown yet. Some apps (xterm, KAlgebra)
        create theirs unmapped under a window manager on Xvfb; an unmapped window reports 1x1, so
        every match is mapped, helper windows included.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"name must be a non-empty window-title regex, got {name!r}")
        deadline = time.monotonic() + timeout
        while True:
            if map_unmapped:
                for wid in self._xdotool(["search", "--name", name], check=False).split():
                    self._xdotool(["windowmap", wid], check=False)
            found = self._xdotool(["search", "--onlyvisible", "--name", name], check=False)
            ids = found.split()
            if ids:
                return int(ids[0])
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no visible window titled like {name!r} on {self.display} after {timeout:g} s"
                )
            time.sleep(0.05)

    def window_geometry(self, wid: int) -> tuple[int, int, int, int]:
        """A window's (x, y, width, height) on the screen."""
        out = self._xdotool(["getwindowgeometry", "--shell", str(int(wid))])
        fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        return int(fields["X"]), int(fields["Y"]), int(fields["WIDTH"]), int(fields["HEIGHT"])

    def main_window(self, name: str, timeout: float = 10.0, *, min_side: int = 50) -> int:
        """The largest visible window whose title or class matches regex `name`, waiting up to
        `timeout` s for one at least `min_side` pixels a side. Apps title their helper windows too (Qt's
        "Selection Owner"), and some set a title that `search --name` misses, hence both searches."""
        deadline = time.monotonic() + timeout
        while True:
            ids = {
                int(w)
                for field in ("--name", "--class")
                for w in self._xdotool(["search", "--onlyvisible", field, name], check=False).split()
            }
            sized = {w: self.window_geometry(w) for w in ids}
            big = [w for w, g in sized.items() if min(g[2], g[3]) >= min_side]
            if big:
                return max(big, key=lambda w: sized[w][2] * sized[w][3])
            if time.monotonic() > deadline:
                raise TimeoutError(f"no visible window like {name!r} of {min_side}+ pixels on {self.display}")
            time.sleep(0.1)

    def move_window(self, wid: int, x: int, y: int) -> None:
        """Move a window's top-left corner to screen pixel (x, y) (the window manager adds its frame)."""
        self._check_point(x, y)
        self._xdotool(["windowmove", "--sync", str(int(wid)), str(x), str(y)])

    # -- synthetic input (xdotool) --------------------------------------------------------------

    def _xdotool(self, args: list[str], *, check: bool = True) -> str:
        """Run `xdotool *args` on this display and return its stdout."""
        self._check_running()
        done = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=30, check=False
        )
        if check and done.returncode != 0:
            raise XdotoolError(f"xdotool {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def _check_point(self, x: int, y: int) -> None:
        check_int("x", x, 0, self.width - 1)
        check_int("y", y, 0, self.height - 1)

    def move(self, x: int, y: int) -> None:
        """Move the pointer to screen pixel (x, y)."""
        self._check_point(x, y)
        self._xdotool(["mousemove", str(x), str(y)])

    def click(self, x: int, y: int, button: int = 1, repeat: int = 1) -> None:
        """Move to (x, y) and click `button` (1 left, 2 middle, 3 right, 4/5 wheel) `repeat` times."""
        self._check_point(x, y)
        check_int("button", button, 1, 9)
        check_int("repeat", repeat, 1, 10)
        self._xdotool(["mousemove", str(x), str(y), "click", "--repeat", str(repeat), str(button)])

    def type_text(self, text: str, delay_ms: int = 12) -> None:
        """Type `text` into the window under keyboard focus, `delay_ms` between keystrokes."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        check_int("delay_ms", delay_ms, 0, 10_000)
        if text:
            self._xdotool(["type", "--delay", str(delay_ms), "--", text])

    def key(self, combo: str) -> None:
        """Press and release one key combination in xdotool's syntax, e.g. "Return" or "ctrl+a"."""
        if not isinstance(combo, str) or not _KEY_COMBO.match(combo):
            raise ValueError(
                "combo must be xdotool keysyms joined by '+' ('Return', 'ctrl+a', 'ctrl+shift+Tab'), "
                f"got {combo!r}"
            )
        self._xdotool(["key", "--", combo])

    def mouse_position(self) -> tuple[int, int]:
        """The pointer's current (x, y) on the screen."""
        out = self._xdotool(["getmouselocation", "--shell"])
        fields = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        return int(fields["X"]), int(fields["Y"])


def stop_group(proc: subprocess.Popen[Any], grace: float = 3.0) -> None:
    """SIGTERM the process group led by `proc`, then SIGKILL after `grace` seconds; reap `proc`."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # The leader is gone; children that outlived it (it exited on its own) still share the group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
