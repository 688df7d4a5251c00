"""One ScienceBoard task as an `iclr26.agents` environment on the desktop.

`reset` gives the task a fresh root (the task's paths, e.g. /home/user/doc/main.tex, live under
it) and a fresh HOME, runs the task's set-up steps (files written, the app launched with a clean
profile) and returns the instruction with the first observation. GRASS GIS runs as its text shell
(`grass <mapset>`), as the authors' tasks start it from a terminal: the shell runs in the agent
sandbox (`iclr26.agents.Sandbox`, no network, an unprivileged user, only the task's folder
writable) inside a tmux pane, shown on the desktop by an xterm attached to that pane; xterm has no
accessibility tree, so the observation carries the pane's text instead (as a VTE terminal's
accessible text would). The other apps run in their own sandbox (`Desktop.launch`); PyMOL's and
Stellarium's control ports are reached through a Unix socket relayed into it. A task's `map` step
may carry `build`: the location is then created and filled by GRASS's own import modules
(`r.in.ascii`, `v.in.ascii`) from files the task wrote.

`step` carries out one action: a pyautogui block (parsed, never executed: `gui_actions`), in the
command action space a block of `command('...')` calls (`command_space`), or WAIT.
The observation is one of the paper's settings (`config.OBSERVATIONS`), always after the task's
instruction. `evaluate` runs the
task's checks against the app's final state and how the episode ended. `close` stops the app; the
next task's `reset` starts from empty folders, so nothing carries over.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from iclr26.agents import Observation, StepOutcome
from iclr26.agents.actions import Action, ActionParser, InvalidAction
from iclr26.agents.beneath import write_beneath
from iclr26.agents.display import stop_group
from iclr26.agents.scratch import scratch_dir
from iclr26.core.errors import UserError
from iclr26.core.sysdeps import require
from iclr26.scienceboard.checks import CheckResult, LocalProbe, evaluate, under_root
from iclr26.scienceboard.command_space import COMMAND_APPS, command_events, parse_commands
from iclr26.scienceboard.config import OBSERVATIONS, TASK_ONLY
from iclr26.scienceboard.desktop import Desktop
from iclr26.scienceboard.gui_actions import parse_pyautogui, perform
from iclr26.scienceboard.probes import GrassLocation, ProbeError, kalgebra_variables
from iclr26.scienceboard.task import TaskFile, map_task

GUI_PARSER = ActionParser(code_languages=("python", "py", ""), controls=("DONE", "FAIL", "WAIT", "ANSWER"))
"""The action format: one ```python block of pyautogui calls, or DONE, FAIL, WAIT, ANSWER: <words>."""

LAUNCH = {
    "texstudio": ("texstudio", "--no-session", "--start-always"),  # not handed to another TeXstudio
    "pymol": ("/usr/bin/python3", "-m", "pymol"),  # Debian's module; its XML-RPC server: `_pymol_rpc`
    "kalgebra": ("kalgebra",),
    "stellarium": ("stellarium",),  # its config (RemoteControl in its sandbox): `_stellarium_config`
    "grass": ("xterm", "-T", "GRASS GIS", "-fa", "Monospace", "-fs", "11", "-geometry", "100x30+0+0"),
}
WINDOW = {"texstudio": "TeXstudio", "pymol": "PyMOL", "kalgebra": "KAlgebra", "grass": "GRASS GIS",
          "stellarium": "Stellarium"}  # fmt: skip
PLACED = ("kalgebra",)
"""Apps whose window the environment moves to the screen's top-left corner after start (its place
otherwise differs between starts), so that reference solutions can click fixed points."""
GRASS_IMPORTS = ("r.in.ascii", "v.in.ascii")
"""The modules a task's `map.build` may run (GRASS's own importers, on files the task wrote)."""
TERMINAL_SIZE = (100, 30)
STELLARIUM_DEFAULTS = "/usr/share/stellarium/data/default_cfg.ini"
PACKAGES = {"texstudio": "texstudio", "pymol": "pymol", "kalgebra": "kalgebra", "grass": "grass-core",
            "stellarium": "stellarium"}  # fmt: skip
"""The Debian package of each app (named in errors; `make deps` installs them)."""
STOPS = {"done": "DONE", "fail": "FAIL", "answer": "ANS"}
ACTION_SPACES = ("pixel", "command")
"""pixel: pyautogui blocks (the paper's); command: `command('text')` into the app's known input."""


PYMOL_PORT, STELLARIUM_PORT = 9123, 8090
"""The control ports inside an app's sandbox, on its own loopback (its own network namespace: no
other process shares them); the harness reaches them through `Desktop.launch(ports=...)`."""


def _stellarium_config(home: Path, port: int, password: str) -> None:
    """Stellarium's config for a clean profile: Debian's defaults, the RemoteControl plugin loaded and
    serving on `port` (of the app's own loopback: `Desktop.launch`), and at most 2 frames a second
    (Xvfb renders in software; a busy render loop also stalls the app's accessibility replies)."""
    import configparser

    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    cfg.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    cfg.read_string(Path(STELLARIUM_DEFAULTS).read_text(encoding="utf-8"))
    if not cfg.has_section("plugins_load_at_startup"):
        cfg.add_section("plugins_load_at_startup")
    cfg["plugins_load_at_startup"]["RemoteControl"] = "true"
    cfg["RemoteControl"] = {
        "enabled": "true",
        "autostart": "true",
        "port": str(port),
        "use_password": "true",  # besides its sandbox: HTTP Basic with this password
        "password": password,
    }
    if not cfg.has_section("video"):
        cfg.add_section("video")
    cfg["video"]["maximum_fps"], cfg["video"]["minimum_fps"] = "2", "1"
    folder = home / ".stellarium"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "config.ini").open("w", encoding="utf-8") as f:
        cfg.write(f)


def _pymol_rpc(port: int) -> str:
    """The PyMOL command that starts its XML-RPC server on 127.0.0.1:`port` only (in the app's own network
    namespace: `Desktop.launch`)."""
    return f"/import pymol.rpc; pymol.rpc.launch_XMLRPC(hostname='127.0.0.1', port={port}, nToTry=1)"


def _centre(box: tuple[int, int, int, int]) -> tuple[int, int]:
    x, y, w, h = box
    return x + w // 2, y + h // 2


class ScienceBoardEnv:
    """A task on the desktop; implements `iclr26.agents.Environment` (plus `stopped`)."""

    def __init__(
        self,
        task: TaskFile,
        desktop: Desktop,
        workdir: str | Path,
        *,
        observation: str = "a11y_tree",
        a11y_chars: int = 6000,
        pause_s: float = 0.5,
        settle_s: float = 1.5,
        figure: str | Path | None = None,
        action_space: str = "pixel",
    ) -> None:
        mapping = map_task(task)
        if not mapping.supported:
            raise UserError(f"{task.path} cannot run here: {'; '.join(mapping.reasons)}")
        if mapping.app not in LAUNCH:
            raise UserError(f"{task.path}: the environment cannot launch {mapping.app} yet")
        if observation not in (*OBSERVATIONS, TASK_ONLY):
            raise UserError(f"observation must be one of {(*OBSERVATIONS, TASK_ONLY)}, got {observation!r}")
        if observation == "textual" and mapping.app != "grass":
            raise UserError(
                f"{task.path}: the textual observation is a terminal's text; {mapping.app} has no terminal "
                "(use a11y_tree, screenshot, screenshot_a11y_tree or set_of_marks)"
            )
        if action_space not in ACTION_SPACES:
            raise UserError(f"action_space must be one of {ACTION_SPACES}, got {action_space!r}")
        if action_space == "command" and mapping.app not in COMMAND_APPS:
            raise UserError(f"{task.path}: {mapping.app} has no command input (command(): {COMMAND_APPS})")
        self.task, self.desktop, self.app = task, desktop, mapping.app
        self.action_space = action_space
        self.workdir = Path(workdir)
        self.observation, self.a11y_chars, self.pause_s, self.settle_s = (
            observation,
            a11y_chars,
            pause_s,
            settle_s,
        )
        self.proc: subprocess.Popen[Any] | None = None
        self.stop_reason = ""
        self.results: list[CheckResult] = []
        self.pymol: Any = None
        self.stellarium: Any = None
        self._port = 0  # PyMOL's XML-RPC or Stellarium's RemoteControl port, in the app's sandbox
        self._socket: Path | None = None  # our Unix socket that relays to it
        self._password = ""  # Stellarium's RemoteControl password (a fresh one per task)
        self.grass: GrassLocation | None = None
        self.sandbox: Any = None  # the GRASS shell's agents.Sandbox
        self.terminal: Any = None  # the GRASS shell's agents.TerminalSession
        self._gis_root: Path | None = None
        self.tags: dict[str, tuple[int, int]] = {}  # set-of-mark tags of the last observation
        self.figure = Path(figure) if figure else None  # where to save the first click, marked
        self.startup_s = 0.0  # launch to a window on screen and the state probe answering, seconds

    @property
    def root(self) -> Path:
        """Where the task's paths live: `<workdir>/root`; for GRASS, a fresh folder under the system's
        temporary directory that the sandbox's user can reach (GRASS opens only a mapset its user owns)."""
        return self._gis_root if self._gis_root is not None else self.workdir / "root"

    def local(self, path: str) -> Path:
        """Where a task path (/home/user/...) lives on this machine (never outside the task's root)."""
        try:
            return under_root(self.root, path)
        except ValueError as e:
            raise UserError(f"{self.task.path}: {e}") from None

    def reset(self) -> Observation:
        self.close()
        require(PACKAGES[self.app], "bubblewrap", *(("xterm", "tmux") if self.app == "grass" else ()))
        for sub in ("root", "home"):
            shutil.rmtree(self.workdir / sub, ignore_errors=True)
            (self.workdir / sub).mkdir(parents=True)
        if self.app == "grass":
            self._gis_root = scratch_dir("iclr26-gis-")
            os.chmod(self._gis_root, 0o755)
        files = []
        for step in self.task.initialize:
            if step["func"] == "touch":
                self.local(step["path"])  # stays in the task's folder, else one line naming the task
                target = write_beneath(self.root, step["path"], str(step.get("text", "")).encode())
                files.append(str(target))
        ports: dict[int, Path] = {}
        readable: list[Path] = []
        if self.app == "grass":
            argv = [*LAUNCH["grass"], "-e", *self._grass_shell()]
            readable.append(self.terminal.socket)  # the xterm's tmux client (no commands: LOCKED_CLIENT)
        elif self.app == "stellarium":
            self._port = STELLARIUM_PORT
            self._password = secrets.token_urlsafe(16)
            _stellarium_config(self.workdir / "home", self._port, self._password)
            argv = list(LAUNCH["stellarium"])
        elif self.app == "pymol":
            self._port = PYMOL_PORT
            argv = [*LAUNCH["pymol"], *files[-1:], "-d", _pymol_rpc(self._port)]
        else:
            argv = [*LAUNCH[self.app], *files[-1:]]  # the app opens the document the task wrote
        if self._port:
            self._socket = ports[self._port] = self.desktop.socket_path(self.app)
        started = time.perf_counter()
        self.proc = self.desktop.launch(
            argv,
            home=self.workdir / "home",
            log=self.workdir / "app.log",
            writable=[self.root],
            readable=readable,
            ports=ports,
            bus=self.app != "grass",  # xterm has no accessibility tree: see Desktop.launch
        )
        try:
            self.desktop.wait_for_window(WINDOW[self.app], timeout_s=60)
            assert self.desktop.display is not None
            screen = self.desktop.display
            main = screen.main_window(WINDOW[self.app], timeout=60)  # not a helper window
            if self.app in PLACED:
                screen.move_window(main, 0, 0)
            if self.app != "grass":  # xterm has no accessibility tree; the shell's prompt was waited for
                opened = Path(files[-1]).name if files and self.app == "texstudio" else ""
                self.desktop.wait_for_app(WINDOW[self.app], holding=opened, timeout_s=60)
            if self.app == "pymol":
                from iclr26.scienceboard.probes import PymolSession

                self.pymol = PymolSession(self._port, unix_socket=self._socket)
            if self.app == "stellarium":
                from iclr26.scienceboard.probes import StellariumRemote

                self.stellarium = StellariumRemote(
                    self._port, unix_socket=self._socket, password=self._password
                )
            if self.app == "kalgebra":
                self._wait_for_variables_panel(timeout_s=60)
            self.startup_s = time.perf_counter() - started  # a window on screen and its state readable
        except Exception as e:
            log = (self.workdir / "app.log").read_text(errors="replace")[-400:]
            self.close()
            raise UserError(
                f"{self.app} (Debian package {PACKAGES[self.app]}) did not start ({e}); its log "
                f"{self.workdir / 'app.log'} ends: {log!r}"
            ) from None
        time.sleep(self.settle_s)
        return self._observe()

    def _wait_for_variables_panel(self, timeout_s: float) -> None:
        """Wait until KAlgebra's Variables panel is readable through AT-SPI (its window can be on screen
        before its accessibility tree is), or raise ProbeError."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                kalgebra_variables(self.desktop.nodes())
                return
            except ProbeError as e:
                if time.monotonic() > deadline:
                    raise ProbeError(
                        f"{e}; still unreadable {timeout_s:g} s after the window appeared"
                    ) from None
            time.sleep(0.5)

    def _grass_shell(self) -> list[str]:
        """Build the task's location (its `map` step), start `grass <mapset>` in the sandbox's tmux
        pane, and return the argv that attaches a terminal window to that pane."""
        from iclr26.agents.sandbox import Sandbox
        from iclr26.agents.terminal import TerminalSession

        steps = [s for s in self.task.initialize if s["func"] == "map"]
        if not steps:
            raise UserError(
                f"{self.task.path}: a GRASS task needs a `map` set-up step (the location to open)"
            )
        step = steps[-1]
        for key in ("grassdb", "location", "mapset"):
            if not isinstance(step.get(key), str) or not step[key]:
                raise UserError(f"{self.task.path}: the `map` step needs {key!r} (a non-empty string)")
        location = self.local(f"{step['grassdb']}/{step['location']}")
        if "build" in step:
            self._build_location(location, step["build"])
        mapset = location / step["mapset"]
        if not (mapset / "WIND").is_file():
            raise UserError(
                f"{self.task.path}: GRASS mapset {step['location']}/{step['mapset']} does not exist"
            )
        self.sandbox = Sandbox(self.root).open()  # hands the task's folder to the sandbox's user
        width, height = TERMINAL_SIZE
        self.terminal = TerminalSession.in_sandbox(
            self.sandbox, command=["grass", "--text", str(mapset)], width=width, height=height
        ).start()
        prompt = f"GRASS {step['location']}/{step['mapset']}:"  # the shell is ready for commands
        deadline = time.monotonic() + 60
        while prompt not in self.terminal.capture():
            if time.monotonic() > deadline:
                tail = self.terminal.capture().strip()[-300:]
                raise UserError(f"GRASS's shell (grass-core) showed no prompt in 60 s; it shows: {tail!r}")
            time.sleep(0.2)
        self.grass = GrassLocation(mapset, force=True, sandbox=self.sandbox)
        return ["tmux", "-S", str(self.terminal.socket), "attach", "-t", "main"]

    def _build_location(self, location: Path, build: dict[str, Any]) -> None:
        """Create a location (EPSG code `build["epsg"]`) and run its imports (`build["import"]`:
        [{module, input, output, ...}], modules from GRASS_IMPORTS only, inputs under the task's root)."""
        epsg = build.get("epsg", 4326)
        if not isinstance(epsg, int) or isinstance(epsg, bool):
            raise UserError(f"{self.task.path}: map.build.epsg must be an integer EPSG code, got {epsg!r}")
        grass = GrassLocation.create(location, epsg=epsg)
        for spec in build.get("import", []):
            spec = dict(spec)
            module = spec.pop("module", None)
            if module not in GRASS_IMPORTS:
                raise UserError(f"{self.task.path}: map.build may run {GRASS_IMPORTS}, not {module!r}")
            spec["input"] = str(self.local(str(spec.get("input", ""))))
            try:
                grass.run(module, **spec)
            except ProbeError as e:
                raise UserError(f"{self.task.path}: building the location failed: {e}") from None
        region = build.get("region")
        if region:
            grass.run("g.region", **dict(region))

    def _observe(self, head: str = "") -> Observation:
        """The observation in the configured mode, after the task's instruction (repeated each turn:
        the agent keeps only the last 3 turns)."""
        text, image = f"Task: {self.task.instruction}\n{head}", None
        mode = self.observation
        if mode in ("a11y_tree", "screenshot_a11y_tree"):
            text += "The accessibility tree of the screen:\n" + self.desktop.a11y_tree(
                max_chars=self.a11y_chars
            )
        if mode == "set_of_marks":
            from iclr26.agents.marks import draw_boxes
            from iclr26.scienceboard.desktop import linearise

            nodes = [n for n in self.desktop.kept_nodes() if n.box is not None]
            tree = linearise(nodes, max_chars=self.a11y_chars, tagged=True)
            shown = nodes[: tree.count("\ntag_")]
            self.tags = {f"tag_{i}": _centre(n.box) for i, n in enumerate(shown, 1)}  # type: ignore[arg-type]
            assert self.desktop.display is not None
            boxes = [(str(i), n.box) for i, n in enumerate(shown, 1)]
            image = draw_boxes(self.desktop.display.screenshot(), boxes)  # type: ignore[arg-type]
            text += "The tagged elements of the screenshot (tag_N is the box numbered N):\n" + tree
        if self.terminal is not None and mode not in ("screenshot", TASK_ONLY):  # xterm: no a11y tree
            screen = "\n".join(line.rstrip() for line in self.terminal.capture().splitlines()).strip()
            text += f"\nThe terminal's text (window 'GRASS GIS'):\n{screen}\n"
        if mode in ("screenshot", "screenshot_a11y_tree"):
            assert self.desktop.display is not None
            image = self.desktop.display.screenshot()
        return Observation(text, image=image)

    def step(self, action: Action) -> StepOutcome:
        if action.kind == "wait":
            try:
                seconds = float(str(action.content or "").split()[0])
            except (ValueError, IndexError):
                seconds = 5.0  # WAIT without a number: the paper's default
            time.sleep(min(max(seconds, 0.0), 10.0))
        elif action.kind == "code":
            assert self.desktop.display is not None
            if self.action_space == "command":  # command('...') calls only: `command_space`
                texts = parse_commands(str(action.content))
                events = [e for t in texts for e in command_events(self.app, t)]
            else:
                events = parse_pyautogui(str(action.content), self.tags)
            self._save_figure(events)
            perform(events, self.desktop.display, pause_s=self.pause_s)
        else:
            raise InvalidAction(
                f"{action.kind} is not an action here: send a ```python block of pyautogui calls"
            )
        return StepOutcome(self._observe())

    def _save_figure(self, events: list[Any]) -> None:
        """The screen just before the task's first click, the click marked (once per task)."""
        clicks = [e for e in events if e.kind == "click"]
        if self.figure is None or not clicks or self.figure.exists():
            return
        from iclr26.agents.marks import mark_point

        assert self.desktop.display is not None
        shot = self.desktop.display.screenshot()
        self.figure.parent.mkdir(parents=True, exist_ok=True)
        mark_point(shot, clicks[0].x, clicks[0].y, label="click").save(self.figure)

    def stopped(self, stop_reason: str) -> None:
        self.stop_reason = stop_reason

    def evaluate(self, answer: str | None) -> bool:
        stop = STOPS.get(self.stop_reason, "TIMEOUT")
        variables = None
        if self.app == "kalgebra":
            try:
                variables = kalgebra_variables(self.desktop.nodes())
            except UserError:  # ProbeError, DesktopError
                variables = None  # the var/val checks then fail, naming the missing panel
        probe = LocalProbe(
            self.root, grass=self.grass, kalgebra_vars=variables, pymol=self.pymol, stellarium=self.stellarium
        )
        ok, self.results = evaluate(self.task, probe, stop, answer or "")
        return ok

    def close(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, grace=10.0)  # the app and anything it started
        self.proc = None
        if self.terminal is not None:
            self.terminal.close()  # the tmux server and the sandboxed GRASS shell
            self.terminal = None
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        if self._gis_root is not None:
            shutil.rmtree(self._gis_root, ignore_errors=True)
            self._gis_root = None
        if self.stellarium is not None:
            self.stellarium.close()
        self.grass = self.pymol = self.stellarium = None
        if self._socket is not None:
            self._socket.unlink(missing_ok=True)
            self._socket = None
        self._port = 0
