"""State probes on the stock Debian apps: what ScienceBoard's checks read, without the authors'
modified builds.

- GRASS GIS: `GrassLocation` runs modules with `grass <mapset> --exec` (the same command line the
  GUI's console runs): `region()` is `g.region -g`, `run(module, **kwargs)` any module, its stdout
  parsed as JSON when it is (`v.db.select format=json`) and as a dict when it is `key=value` lines
  (the `-g` output of `r.univar`, `r.info`, `g.region`). GRASS refuses a mapset its user does not
  own, so a location that the agent's sandbox owns is probed through that sandbox;
- Stellarium (standing in for Celestia): `StellariumRemote` reads its RemoteControl plugin's HTTP API
  on 127.0.0.1 (location, time and time rate, the selected object), enabled by the config the
  environment writes;
- KAlgebra: `kalgebra_variables` reads the Variables panel (name and value cells) from the
  accessibility tree;
- PyMOL (standing in for ChimeraX): `PymolSession` talks to the running app's XML-RPC server
  (`pymol.rpc.launch_XMLRPC` on a port the environment picks): object names, and atom counts of
  any selection (`color red and chain A`, `rep sticks`, `resn HOH`), which is how the checks read
  colours, representations and edits;
- TeXstudio: the document is a file; `latex_compiles` runs pdflatex (and bibtex when a .bib is
  present: pdflatex, bibtex, pdflatex, pdflatex) on a copy of the folder, as the authors' `compile`
  check does in their VM.

Each probe raises `ProbeError` naming the command and the end of its output when the app fails.
"""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import tempfile
import time
import xmlrpc.client
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iclr26.core.errors import UserError
from iclr26.core.sysdeps import require

if TYPE_CHECKING:
    from iclr26.agents.sandbox import Sandbox
    from iclr26.scienceboard.desktop import Node


class ProbeError(UserError):
    """An app's command failed while reading its state."""


@dataclass(frozen=True)
class Output:
    """A probe command's exit status, stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


def _run(
    cmd: list[str], *, timeout_s: float, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Output:
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout_s, cwd=cwd, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        raise ProbeError(f"`{' '.join(cmd[:4])} ...` did not finish in {timeout_s:g} s") from None
    return Output(done.returncode, done.stdout, done.stderr)


class GrassLocation:
    """A GRASS GIS mapset on disk, probed and changed through `grass --exec`."""

    def __init__(
        self,
        mapset: str | Path,
        *,
        timeout_s: float = 60.0,
        force: bool = False,
        sandbox: Sandbox | None = None,
    ) -> None:
        require("grass-core")
        self.mapset = Path(mapset)
        if not (self.mapset / "WIND").is_file():
            raise ProbeError(f"{self.mapset} is not a GRASS mapset (it has no WIND file)")
        self.timeout_s = timeout_s
        self.force = force  # `grass -f`: ignore the lock of a running GRASS session (reads only)
        self.sandbox = sandbox  # run as the sandbox's user, who owns the mapset

    @classmethod
    def create(cls, location: str | Path, *, epsg: int = 4326) -> GrassLocation:
        """A new location (its PERMANENT mapset) in the coordinate system `epsg`."""
        require("grass-core")
        location = Path(location)
        if location.exists():
            raise ProbeError(f"{location} already exists")
        location.parent.mkdir(parents=True, exist_ok=True)
        out = _run(["grass", "-c", f"EPSG:{epsg}", "-e", str(location)], timeout_s=60)
        if out.returncode != 0:
            raise ProbeError(f"grass could not create {location}: {out.stderr.strip()[-300:]}")
        return cls(location / "PERMANENT")

    def run(self, module: str, *flags: str, **kwargs: Any) -> Any:
        """Run a GRASS module (`run("v.db.select", map="sites", format="json")`); its stdout through
        `parse_output`. Flags come as arguments or, as in the task files (grass.script's style), as
        `flags="g"`. A failing module raises `ProbeError` with its message."""
        if not module.replace(".", "").replace("_", "").isalnum() or "." not in module:
            raise ProbeError(f"{module!r} is not a GRASS module name (like v.db.select)")
        letters = [*(f.lstrip("-") for f in flags), *str(kwargs.pop("flags", ""))]
        if not all(f.isalnum() for f in letters):
            raise ProbeError(f"GRASS flags are letters or digits, got {letters!r}")
        args = [*(f"-{f}" for f in letters), *(f"{k}={v}" for k, v in kwargs.items())]
        force = ["-f"] if self.force else []
        cmd = ["grass", *force, str(self.mapset), "--exec", module, *args]
        if self.sandbox is None:
            out = _run(cmd, timeout_s=self.timeout_s)
        else:
            out = _run(
                self.sandbox.command_line(cmd),
                timeout_s=self.timeout_s,
                cwd=self.sandbox.workdir,
                env=self.sandbox.env,
            )
        if out.returncode != 0:
            raise ProbeError(f"{module} {' '.join(args)} failed: {_tail(out.stderr)}")
        return parse_output(out.stdout)

    def region(self) -> dict[str, float | str]:
        """The computational region (`g.region -g`): n, s, e, w, nsres, ewres, rows, cols, cells..."""
        out = self.run("g.region", "g")
        if not isinstance(out, dict):
            raise ProbeError(f"g.region -g printed no key=value lines: {str(out)[:200]!r}")
        return out

    def dump(self) -> dict[str, Any]:
        """The part of the authors' GUI dump that the stock GRASS exposes: the region."""
        return {"region": self.region()}


def parse_output(text: str) -> Any:
    """A module's stdout: JSON when it parses; a dict when every line is `key=value` (numbers as
    floats); else the text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not all("=" in ln for ln in lines):
        return text
    out: dict[str, float | str] = {}
    for line in lines:
        key, _, value = line.partition("=")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            out[key.strip()] = value.strip()
    return out


def kalgebra_variables(nodes: list[Node]) -> dict[str, str]:
    """KAlgebra's variables as shown in its Variables panel: the table under the visible column
    headers "Name" and "Value", rows matched by their screen row (`Desktop.nodes()`)."""
    kalgebra = [n for n in nodes if n.app == "kalgebra" and n.box is not None and n.box[3] > 0]
    heads = {n.name: n.box for n in kalgebra if n.role == "table column header"}
    if "Name" not in heads or "Value" not in heads:
        raise ProbeError("KAlgebra's Variables panel is not in the accessibility tree (is it open?)")
    name_x, value_x = heads["Name"][0], heads["Value"][0]  # type: ignore[index]
    cells = [n for n in kalgebra if n.role == "table cell"]
    names = {n.box[1]: n.name for n in cells if n.box[0] == name_x}  # type: ignore[index]
    values = {n.box[1]: n.name for n in cells if n.box[0] == value_x}  # type: ignore[index]
    return {names[y]: values[y] for y in names if y in values}


class StellariumRemote:
    """A running Stellarium's state through its RemoteControl HTTP API on 127.0.0.1, or through the Unix
    socket `unix_socket` that relays to it (`Desktop.launch(ports=...)`), with its `password` if set."""

    def __init__(
        self,
        port: int,
        *,
        timeout_s: float = 60.0,
        unix_socket: str | Path | None = None,
        password: str = "",
    ) -> None:
        import httpx

        self.url = f"http://127.0.0.1:{port}/api"
        transport = httpx.HTTPTransport(uds=str(unix_socket)) if unix_socket is not None else None
        auth = httpx.BasicAuth("", password) if password else None
        self.http = httpx.Client(timeout=10, transport=transport, auth=auth)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.status()
                return
            except (httpx.HTTPError, ProbeError) as e:
                if time.monotonic() > deadline:
                    raise ProbeError(f"Stellarium's RemoteControl at {self.url} is silent: {e}") from None
                time.sleep(0.3)

    def status(self) -> dict[str, Any]:
        """`/main/status`: location, time (jday, utc, timerate, ...), view, selectioninfo (HTML)."""
        r = self.http.get(f"{self.url}/main/status")
        if r.status_code != 200:
            raise ProbeError(f"Stellarium answered {r.status_code} to /main/status: {r.text[:200]}")
        return dict(r.json())

    def selected(self) -> str:
        """The selected object's common name in the app's language (English here; a star's `name` is its
        catalogue number, e.g. HIP 32349 for Sirius); '' when nothing is selected."""
        r = self.http.get(f"{self.url}/objects/info", params={"format": "json"})
        if r.status_code != 200:  # "no current selection" and the like
            return ""
        info = r.json()
        return str(info.get("localized-name") or info.get("name") or "")

    def dump(self) -> dict[str, Any]:
        """The status plus `selected`, the selected object's name."""
        return {**self.status(), "selected": self.selected()}

    def close(self) -> None:
        self.http.close()


class _UnixTransport(xmlrpc.client.Transport):
    """XML-RPC over HTTP on a Unix socket (the relay to PyMOL's port in its sandbox)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = str(path)

    def make_connection(self, host: Any) -> http.client.HTTPConnection:
        path = self.path

        class Connection(http.client.HTTPConnection):
            def connect(self) -> None:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(30)
                sock.connect(path)
                self.sock = sock

        return Connection("127.0.0.1")


class PymolSession:
    """A running PyMOL's state through its XML-RPC server on 127.0.0.1 (`pymol.rpc.launch_XMLRPC`;
    `pymol -R` serves on 9123)."""

    def __init__(
        self, port: int = 9123, *, timeout_s: float = 30.0, unix_socket: str | Path | None = None
    ) -> None:
        import xmlrpc.client

        self.url = f"http://127.0.0.1:{port}"
        transport = _UnixTransport(unix_socket) if unix_socket is not None else None
        self.server = xmlrpc.client.ServerProxy(self.url, transport=transport, allow_none=True)
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.server.get_names()
                return
            except OSError as e:
                if time.monotonic() > deadline:
                    raise ProbeError(f"PyMOL's XML-RPC server at {self.url} did not answer: {e}") from None
                time.sleep(0.3)

    def names(self) -> list[str]:
        """The loaded objects' names."""
        return list(self.server.get_names())

    def count(self, selection: str) -> int:
        """Atoms in a PyMOL selection (its selection language, not Python); a bad selection raises."""
        if not isinstance(selection, str) or len(selection) > 500:
            raise ProbeError(f"a selection must be a string of at most 500 characters, got {selection!r}")
        try:
            return int(self.server.count_atoms(selection))
        except Exception as e:  # an xmlrpc Fault for a selection PyMOL rejects
            raise ProbeError(f"PyMOL rejected the selection {selection!r}: {e}") from None

    def dump(self) -> dict[str, Any]:
        """Objects and total atoms."""
        return {"objects": self.names(), "atoms": self.count("all")}


def _tail(text: str, n: int = 300) -> str:
    lines = [ln for ln in text.strip().splitlines() if not ln.startswith(("Starting GRASS", "Cleaning up"))]
    return "\n".join(lines)[-n:] or "(no message)"


def latex_compiles(folder: str | Path, main: str, *, timeout_s: float = 120.0) -> tuple[bool, str]:
    """Whether `<folder>/<main>.tex` compiles with pdflatex (with bibtex when the folder has a .bib),
    on a copy of the folder; (ok, the end of the failing step's log)."""
    require("texlive-latex-base")
    src = Path(folder)
    if not (src / f"{main}.tex").is_file():
        return False, f"{src / (main + '.tex')} does not exist"
    latex = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", main]
    steps = [latex]
    if any(src.glob("*.bib")):
        steps += [["bibtex", main], latex, latex]
    with tempfile.TemporaryDirectory(prefix="sb-tex-") as tmp:
        work = Path(tmp) / "doc"
        shutil.copytree(src, work)
        for cmd in steps:
            out = _run(cmd, timeout_s=timeout_s, cwd=work)
            if out.returncode != 0:
                return False, f"{cmd[0]} failed: {out.stdout.strip()[-400:]}"
    return True, ""
