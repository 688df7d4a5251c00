"""The desktop the ScienceBoard apps run on: an Xvfb screen, a D-Bus session, the AT-SPI
accessibility bus and a light window manager (openbox), and the accessibility tree as text.

The stock Debian builds expose their widgets over AT-SPI when the bus says accessibility is on:
Qt reads `org.a11y.Status.IsEnabled` (set here) and `QT_LINUX_ACCESSIBILITY_ALWAYS_ON`. The tree is
read by `atspi_dump.py` under the system Python, which has Debian's pyatspi, and linearised as the
paper's agents see it: one tab-separated line per kept node (role, name, text, position, size),
cut at a character budget.

Each app runs in its own bubblewrap sandbox (`launch`), as nobody under a root harness: no network but
its own loopback, only its folders writable, our environment only, and only this desktop's X,
session-bus and accessibility-bus sockets; the desktop's sockets live in a private 0700 folder, and
Xvfb asks for a cookie.

    with Desktop() as desk:
        desk.launch(["texstudio", str(tmp / "doc/main.tex")], home=tmp / "home", writable=[tmp / "doc"])
        desk.wait_for_window("TeXstudio")
        print(desk.a11y_tree(max_chars=8000))
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr26.agents.display import VirtualDisplay, stop_group
from iclr26.agents.sandbox import NOBODY, SANDBOX_PATH, Sandbox, SandboxLimits
from iclr26.core.errors import UserError
from iclr26.core.sysdeps import require

SYSTEM_PYTHON = "/usr/bin/python3"
DUMP = Path(__file__).with_name("atspi_dump.py")

KEPT_ROLES = frozenset(
    {
        "push button",
        "toggle button",
        "check box",
        "radio button",
        "menu item",
        "check menu item",
        "radio menu item",
        "menu",
        "page tab",
        "list item",
        "table cell",
        "table column header",
        "table row header",
        "label",
        "text",
        "entry",
        "password text",
        "paragraph",
        "heading",
        "link",
        "combo box",
        "spin button",
        "slider",
        "scroll bar",
        "icon",
        "image",
        "terminal",
        "tree item",
        "document text",
        "document frame",
        "tool bar",
        "status bar",
        "canvas",
        "dialog",
        "alert",
    }
)
"""The roles a linearised tree keeps (others are layout containers without content of their own)."""


SESSION_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={folder}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/>
    <allow user="{app_uid}"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
"""The desktop's session bus: a socket in the desktop's private folder and no service folders, so no
name is ever activated on demand (see `Desktop._start_accessibility`); it admits us and the apps' uid."""
A11Y_CONFIGS = ("/usr/share/defaults/at-spi2/accessibility.conf", "/etc/at-spi2/accessibility.conf")
"""at-spi-bus-launcher's bus configs (the one in /etc wins where it exists): the launcher sees ours over
them, which also admits the apps' uid (Debian's admits root and the bus's owner only)."""


RELAY = Path(__file__).with_name("relay.py")
RELAY_INSIDE = "/run/iclr26/relay.py"
APP_LIMITS = SandboxLimits(cpu_s=None, memory_bytes=None)
"""An app's rlimits: the shell sandbox's, but no CPU-time or address-space cap: an app lives for the
whole episode (whose wall clock bounds it), and Qt's WebEngine (KAlgebra) and Mesa's software renderer
reserve far more address space than they use."""


APP_SANDBOX_UID = NOBODY
"""The host uid the apps with an accessibility tree run as under a root harness (the shell sandbox's);
the session and accessibility buses admit it besides root."""
XAUTHORITY_INSIDE = "/run/iclr26/Xauthority"
APP_UID = 1000
"""The uid an app without the buses sees inside its sandbox (`launch(bus=False)`); outside, it is the
harness's."""


def _in_keeper_thread(start: Callable[[], subprocess.Popen[Any]]) -> subprocess.Popen[Any]:
    """`start()`'s process, started from a thread that lives until the process exits. bwrap's
    --die-with-parent kills the sandbox when the *thread* that started it ends (the kernel's parent-death
    signal follows the thread), and the control server launches apps from short-lived request threads."""
    box: queue.Queue[subprocess.Popen[Any] | BaseException] = queue.Queue()

    def keeper() -> None:
        try:
            proc = start()
        except BaseException as e:  # handed to the caller
            box.put(e)
            return
        box.put(proc)
        proc.wait()

    threading.Thread(target=keeper, name="app-keeper", daemon=True).start()
    got = box.get()
    if isinstance(got, BaseException):
        raise got
    return got


def _socket_of(address: str) -> str:
    """The socket path of a D-Bus address `unix:path=/x,guid=...`."""
    for part in address.split(":", 1)[-1].split(","):
        if part.startswith("path="):
            return part[len("path=") :]
    raise DesktopError(f"the bus address {address!r} has no socket path (an abstract socket?)")


def _hidden() -> list[str]:
    """The host folders hidden from the apps: the home folders (the harness's dotfiles, keys and
    caches) and this package (the built-here tasks' reference solutions)."""
    found = {str(Path.home()), "/root", "/home", str(Path(__file__).resolve().parents[1])}
    return sorted(p for p in found if p != "/" and Path(p).is_dir())


class DesktopError(UserError):
    """The desktop or an app on it failed to start; the message names which and why."""


@dataclass(frozen=True)
class Node:
    """One accessibility node: its role, name, text, states and screen box."""

    app: str
    depth: int
    role: str
    name: str
    text: str
    description: str
    states: tuple[str, ...]
    box: tuple[int, int, int, int] | None

    @property
    def visible(self) -> bool:
        return "showing" in self.states and "visible" in self.states

    def line(self) -> str:
        """The node as one line: role, name, text, position (x, y), size (w, h)."""
        x, y, w, h = self.box or (-1, -1, 0, 0)
        clean = " ".join(self.text.split())[:200]
        return f"{self.role}\t{self.name}\t{clean}\t({x}, {y})\t({w}, {h})"


def linearise(nodes: list[Node], *, max_chars: int = 8000, tagged: bool = False) -> str:
    """Nodes as the paper's agents read them: a header, then one tab-separated line per node (with
    its set-of-mark tag first when `tagged`: tag_1, tag_2, ...), cut at `max_chars` with `[...]`."""
    header = "role\tname\ttext\tposition (x, y)\tsize (w, h)"
    lines = ["tag\t" + header if tagged else header]
    n = len(lines[0])
    for i, node in enumerate(nodes, 1):
        line = f"tag_{i}\t{node.line()}" if tagged else node.line()
        if n + len(line) + 1 > max_chars:
            lines.append("[...]")
            break
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines)


class Desktop:
    """An Xvfb screen with a D-Bus session, the accessibility bus and openbox; apps launched on it."""

    def __init__(self, width: int = 1280, height: int = 800, *, start_timeout_s: float = 15.0) -> None:
        self.width, self.height, self.start_timeout_s = width, height, start_timeout_s
        self.display: VirtualDisplay | None = None
        self._dbus: subprocess.Popen[str] | None = None
        self._runtime: tempfile.TemporaryDirectory[str] | None = None
        self.env: dict[str, str] = {}

    def __enter__(self) -> Desktop:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Desktop:
        """Start Xvfb, the session bus, the accessibility bus (enabled, its registry answering) and
        openbox."""
        require("xvfb", "openbox", "dbus", "at-spi2-core", "python3-pyatspi")
        self.display = VirtualDisplay(self.width, self.height).start()
        try:
            self._runtime = tempfile.TemporaryDirectory(prefix="sb-xdg-")
            os.chmod(self._runtime.name, 0o700)
            config = Path(self._runtime.name) / "session.conf"
            text = SESSION_BUS_CONFIG.format(folder=self._runtime.name, app_uid=APP_SANDBOX_UID)
            config.write_text(text, encoding="utf-8")
            self._dbus = subprocess.Popen(
                ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
            )  # fmt: skip
            assert self._dbus.stdout is not None
            address = self._dbus.stdout.readline().strip()
            if not address:
                raise DesktopError("dbus-daemon --session printed no address")
            self.env = {
                "DBUS_SESSION_BUS_ADDRESS": address,
                "XDG_RUNTIME_DIR": self._runtime.name,
                "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1",
                "QT_ACCESSIBILITY": "1",
                "NO_AT_BRIDGE": "0",
                "QTWEBENGINE_DISABLE_SANDBOX": "1",  # KAlgebra's web view; Chromium's sandbox refuses root
            }
            launcher = self.display.launch(
                [*self._a11y_config(), "/usr/libexec/at-spi-bus-launcher", "--launch-immediately"],
                env=self.env,
            )
            self._start_accessibility(launcher)
            self.display.launch(["openbox"], env=self.env)
        except BaseException:
            self.close()
            raise
        return self

    def _a11y_config(self) -> list[str]:
        """The bwrap prefix under which at-spi-bus-launcher (and the bus it starts) reads our bus config:
        the host as it is, but for the config file."""
        assert self._runtime is not None
        text = Path(A11Y_CONFIGS[0]).read_text(encoding="utf-8")
        allow = '<allow user="root"/>'
        if allow not in text:
            raise DesktopError(f"{A11Y_CONFIGS[0]} does not admit root as expected; cannot extend it")
        ours = Path(self._runtime.name) / "accessibility.conf"
        ours.write_text(text.replace(allow, f'{allow}<allow user="{APP_SANDBOX_UID}"/>'), encoding="utf-8")
        prefix = [shutil.which("bwrap") or "bwrap", "--dev-bind", "/", "/"]
        for path in A11Y_CONFIGS:
            if Path(path).exists():
                prefix += ["--ro-bind", str(ours), path]
        return [*prefix, "--"]

    def _dbus_send(self, *args: str, bus: str = "--session") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["dbus-send", bus, "--print-reply", *args],
            env={**os.environ, **self.env}, capture_output=True, text=True, check=False, timeout=30,
        )  # fmt: skip

    def _start_accessibility(self, launcher: subprocess.Popen[Any]) -> None:
        """Wait until our launcher owns org.a11y.Bus, switch accessibility on, and wait until the
        registry answers on the accessibility bus, all before any app starts.

        Why in this order (the empty trees of a fresh machine, issue 56): with Debian's session bus
        config, a call to org.a11y.Bus sent before our launcher had claimed the name made dbus-daemon
        *activate a second launcher* (/usr/share/dbus-1/services/org.a11y.Bus.service) without
        DISPLAY or XDG_RUNTIME_DIR; ours then lost the name and exited, the accessibility bus moved
        to ~/.cache/at-spi/bus, and the app never registered there, so every tree read came back
        empty. On a warm machine the launcher won the race; with cold caches it lost 6 times in 11
        KAlgebra starts here (caches dropped before each). Our session bus has no service folders
        (`SESSION_BUS_CONFIG`), so nothing is activated behind our back, and each step below waits
        on its condition, not on time."""
        deadline = time.monotonic() + self.start_timeout_s
        has_owner = ("--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                     "org.freedesktop.DBus.NameHasOwner", "string:org.a11y.Bus")  # fmt: skip
        while "boolean true" not in (done := self._dbus_send(*has_owner)).stdout:
            if launcher.poll() is not None or time.monotonic() > deadline:
                why = "exited" if launcher.poll() is not None else f"took over {self.start_timeout_s:g} s"
                raise DesktopError(
                    f"the accessibility bus (at-spi2-core's at-spi-bus-launcher) did not start: it {why}"
                    f"{'; ' + done.stderr.strip()[-200:] if done.stderr.strip() else ''}"
                )
            time.sleep(0.05)
        enable = ("--dest=org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties.Set",
                  "string:org.a11y.Status", "string:IsEnabled", "variant:boolean:true")  # fmt: skip
        get_address = ("--dest=org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress")
        for call in (enable, get_address):
            done = self._dbus_send(*call)
            if done.returncode != 0:
                raise DesktopError(f"the accessibility bus refused {call[2]}: {done.stderr.strip()[-200:]}")
        a11y_bus = done.stdout.split('"')[1] if done.stdout.count('"') >= 2 else ""
        if not a11y_bus:
            raise DesktopError(f"the accessibility bus gave no address: {done.stdout.strip()[-200:]}")
        self.env["AT_SPI_BUS_ADDRESS"] = a11y_bus  # the reader and every app use this bus, and no other
        ping = ("--dest=org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root",
                "org.freedesktop.DBus.Peer.Ping")  # fmt: skip
        while (done := self._dbus_send(*ping, bus=f"--bus={a11y_bus}")).returncode != 0:
            if time.monotonic() > deadline:
                raise DesktopError(
                    f"the accessibility registry (at-spi2-registryd) did not answer in "
                    f"{self.start_timeout_s:g} s: {done.stderr.strip()[-200:]}"
                )
            time.sleep(0.1)

    def socket_path(self, name: str) -> Path:
        """A fresh path for a control socket of ours, in the desktop's private folder (see `launch`)."""
        if self._runtime is None:
            raise DesktopError("the desktop is not started: use `with Desktop() as desk:`")
        return Path(self._runtime.name) / f"{name}-{secrets.token_hex(4)}.sock"

    def launch(
        self,
        argv: Sequence[str],
        *,
        home: str | Path,
        log: str | Path | None = None,
        writable: Sequence[str | Path] = (),
        readable: Sequence[str | Path] = (),
        ports: Mapping[int, Path] | None = None,
        bus: bool = True,
    ) -> subprocess.Popen[Any]:
        """Start an app in its own sandbox with a clean profile under `home` (HOME and the XDG folders
        point there).

        The sandbox (`iclr26.agents.Sandbox`, bubblewrap): its own network namespace with only a
        loopback, the host system read-only, the host's home folders and this package hidden, a
        private /tmp, `home` and the folders in `writable` the only writable places; in it, only
        this desktop's X socket and cookie, its session bus and accessibility bus sockets; an
        environment of our own (none of the harness's variables, hence no API key), and the shell
        sandbox's rlimits but for CPU time and address space (`APP_LIMITS`). Under root the app runs
        as `APP_SANDBOX_UID` (nobody, no capabilities; bwrap itself starts as root so it can bind
        our sockets in: `Sandbox(drop_inside=True)`), and `home` and `writable` are handed to that
        uid. `ports` maps a TCP port the app serves on its loopback to a Unix socket path of ours
        (`socket_path`): connections there reach the port through a relay in the sandbox
        (`relay.py`); nothing else can. `readable`: more host paths it may read (a socket it may
        connect to).

        `bus=False` is for apps without an accessibility tree (xterm, whose tmux client must reach our
        root-owned tmux server): it runs as the harness's uid without capabilities in a user namespace,
        seeing `APP_UID` inside (xterm as root sets groups that a user namespace refuses), with no bus."""
        if self.display is None:
            raise DesktopError("the desktop is not started: use `with Desktop() as desk:`")
        home = Path(home).absolute()
        for sub in (".config", ".local/share", ".cache", ".runtime"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(home / ".runtime", 0o700)
        inside = {
            **{k: v for k, v in self.env.items() if k != "XDG_RUNTIME_DIR"},
            "PATH": SANDBOX_PATH,
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "DISPLAY": self.display.display,
            "XAUTHORITY": str(self.display.authority),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_RUNTIME_DIR": str(home / ".runtime"),
        }
        sockets = [f"/tmp/.X11-unix/X{self.display.display.lstrip(':')}"]
        if bus:  # the app runs as APP_SANDBOX_UID: a copy of the cookie it may read
            assert self._runtime is not None
            cookie = Path(self._runtime.name) / f"Xauthority-{secrets.token_hex(4)}"
            shutil.copyfile(self.display.authority, cookie)
            if os.geteuid() == 0:
                os.chown(cookie, APP_SANDBOX_UID, APP_SANDBOX_UID)
            os.chmod(cookie, 0o600)
            inside["XAUTHORITY"] = XAUTHORITY_INSIDE
        else:
            sockets.append(str(self.display.authority))
        sockets += [_socket_of(self.env[k]) for k in ("DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS")]
        sockets += [str(Path(r).absolute()) for r in readable]
        ro_binds: dict[str | os.PathLike[str], str] = {p: p for p in sockets}
        ro_binds[str(RELAY)] = RELAY_INSIDE
        if bus:
            ro_binds[str(cookie)] = XAUTHORITY_INSIDE
        listeners = []
        script = ""
        try:
            for port, path in (ports or {}).items():
                listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                listeners.append(listener)
                listener.bind(str(path))
                listener.listen(16)
                fd = listener.fileno()
                script += f"{SYSTEM_PYTHON} -I {RELAY_INSIDE} {fd} {int(port)} & "
            closes = " ".join(f"{ln.fileno()}<&-" for ln in listeners)
            script += f'exec "$@" {closes}'
            root = os.geteuid() == 0
            if bus and root:  # a real unprivileged uid, admitted by the buses
                sandbox = Sandbox(home, APP_LIMITS, user=APP_SANDBOX_UID, drop_inside=True).open()
                for folder in writable:
                    sandbox.hand_over(folder)
            else:
                sandbox = Sandbox(home, APP_LIMITS, caller_uid=True).open()
            command = sandbox.command_line(
                ["/bin/bash", "--noprofile", "--norc", "-c", script, "app", *argv],
                binds={str(Path(w).absolute()): str(Path(w).absolute()) for w in writable},
                ro_binds=ro_binds,
                hide=_hidden(),
                clear_env=inside,
                inner_uid=None if bus else APP_UID,
            )
            out = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 (the app owns it until it exits)
            display = self.display
            return _in_keeper_thread(
                lambda: display.launch(
                    command,
                    stdout=out,
                    stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
                    pass_fds=[ln.fileno() for ln in listeners],
                    env=inside,  # bwrap's own too: no secret in any process of the app's group
                    inherit_env=False,
                )
            )
        finally:
            for listener in listeners:  # the relay in the sandbox holds them now
                listener.close()

    def wait_for_window(self, name: str, timeout_s: float = 30.0) -> int:
        """The id of the first window whose title contains `name`, waiting up to `timeout_s`. Some apps
        (xterm, KAlgebra) create their window unmapped here; it is mapped, as a desktop session would."""
        if self.display is None:
            raise DesktopError("the desktop is not started")
        try:
            return self.display.wait_for_window(name, timeout=timeout_s, map_unmapped=True)
        except TimeoutError:
            raise DesktopError(f"no window titled like {name!r} appeared in {timeout_s:g} s") from None

    def wait_for_app(self, name: str, *, holding: str = "", timeout_s: float = 60.0) -> None:
        """Wait until app `name` (its accessible name, any case) has registered on the accessibility bus
        with a top-level window showing and, when `holding` is given, a node of it names or holds that
        text (a document the app was asked to open). Raises DesktopError naming what never came: the
        app counts as started only when its state is readable."""
        deadline = time.monotonic() + timeout_s
        want = name.lower()
        while True:
            nodes = [n for n in self.nodes() if n.app.lower() == want]
            if any(n.depth == 1 and "showing" in n.states for n in nodes) and (
                not holding or any(holding in n.name or holding in n.text for n in nodes)
            ):
                return
            if time.monotonic() > deadline:
                seen = "no node" if not nodes else f"{len(nodes)} nodes, none showing {holding!r}"
                raise DesktopError(
                    f"{name}'s accessibility tree was not readable {timeout_s:g} s after launch ({seen})"
                )
            time.sleep(0.2)

    def nodes(self, *, timeout_s: float = 30.0, max_nodes: int = 5000) -> list[Node]:
        """Every node of every registered app (read by the system Python's pyatspi)."""
        if self.display is None:
            raise DesktopError("the desktop is not started")
        env = {**os.environ, **self.display.env, **self.env}
        try:
            done = subprocess.run(
                [SYSTEM_PYTHON, str(DUMP), "--max-nodes", str(max_nodes)],
                env=env, capture_output=True, text=True, timeout=timeout_s, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise DesktopError(f"reading the accessibility tree took over {timeout_s:g} s") from None
        if done.returncode != 0:
            raise DesktopError(f"reading the accessibility tree failed: {done.stderr.strip()[-300:]}")
        out = []
        for line in done.stdout.splitlines():
            r = json.loads(line)
            box = tuple(r["box"]) if r.get("box") else None
            out.append(
                Node(
                    r["app"],
                    r["depth"],
                    r["role"],
                    r["name"],
                    r["text"],
                    r["description"],
                    tuple(r["states"]),
                    box,
                )  # type: ignore[arg-type]
            )
        return out

    def kept_nodes(self, *, app: str | None = None) -> list[Node]:
        """The nodes an agent is shown: visible, on screen, with content and a kept role."""
        out = []
        for node in self.nodes():
            if app is not None and node.app != app:
                continue
            if (
                node.role not in KEPT_ROLES
                or not node.visible
                or not (node.name.strip() or node.text.strip())
            ):
                continue
            if node.box is not None and (
                node.box[2] <= 0 or node.box[3] <= 0 or node.box[0] < 0 or node.box[1] < 0
            ):
                continue
            out.append(node)
        return out

    def a11y_tree(self, *, max_chars: int = 8000, app: str | None = None) -> str:
        """The linearised tree: a header, then one line per kept node, cut at `max_chars` with a
        `[...]` line (the paper cuts at a token budget)."""
        return linearise(self.kept_nodes(app=app), max_chars=max_chars)

    def close(self) -> None:
        """Stop the apps, openbox, the buses and Xvfb."""
        if self.display is not None:
            self.display.close()
            self.display = None
        if self._dbus is not None:
            stop_group(self._dbus)
            self._dbus = None
        if self._runtime is not None:
            self._runtime.cleanup()
            self._runtime = None
