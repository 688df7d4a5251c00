"""The desktop's control layer on 127.0.0.1: the OSWorld-style endpoints ScienceBoard's harness
talks to, served by the standard library's HTTP server.

    GET  /screenshot               the screen as PNG
    GET  /accessibility            {"AT": the linearised accessibility tree}
    POST /execute   {"code": ...}  a pyautogui block, parsed by `gui_actions` and sent as xdotool
                                   events (never a shell; OSWorld's endpoint runs any command)
    POST /setup/launch {"app": ...} start one of the known apps (`env.LAUNCH`), not a command line
    GET  /file?path=/home/user/... read a task file;  POST /file {"path", "content"}: write one

Paths are task paths, mapped under the task's root and opened there one step at a time without
following a link (`agents.beneath`: the app writes that folder), so a request cannot leave it.
Every error is a JSON {"error": ...} with status 400 (bad request) or 404 (no such file or
endpoint).

Nobody but the harness drives it (issue 57): every request must carry the server's per-run token
(`Authorization: Bearer <token>`, else 401), name the server itself as its Host, and carry no
Origin of another site (else 403: a web page the agent opens cannot reach it, nor can a DNS
rebinding); a body must declare a length between 0 and MAX_BODY bytes (else 400).

    with Desktop() as desk, (server := ControlServer(desk, root)) as url:
        httpx.post(f"{url}/execute", json={"code": "pyautogui.click(100, 200)"}, headers=server.headers)
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from iclr26.agents import InvalidAction
from iclr26.agents.beneath import parts_beneath, read_beneath, write_beneath
from iclr26.scienceboard.desktop import Desktop
from iclr26.scienceboard.gui_actions import parse_pyautogui, perform

MAX_BODY = 1 << 20  # bytes a request body may have


class ControlServer:
    """The endpoints above for `desktop`, with task paths under `root`; `with` starts and stops it
    and yields its base URL (a free port on 127.0.0.1)."""

    def __init__(self, desktop: Desktop, root: str | Path, *, pause_s: float = 0.5, a11y_chars: int = 8000):
        self.desktop, self.root = desktop, Path(root)
        self.pause_s, self.a11y_chars = pause_s, a11y_chars
        self.launched: list[Any] = []  # the apps started through /setup/launch
        self.token = secrets.token_urlsafe(24)  # what every request must present
        self._server: ThreadingHTTPServer | None = None

    @property
    def headers(self) -> dict[str, str]:
        """The header a client sends with every request."""
        return {"Authorization": f"Bearer {self.token}"}

    def __enter__(self) -> str:
        handler = type("Handler", (_Handler,), {"control": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        from iclr26.agents.display import stop_group

        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for proc in self.launched:
            stop_group(proc)
        self.launched = []

    # -- what each endpoint does (raises ValueError for a bad request, FileNotFoundError for 404) --

    def screenshot(self) -> bytes:
        assert self.desktop.display is not None
        out = BytesIO()
        self.desktop.display.screenshot().save(out, format="PNG")
        return out.getvalue()

    def accessibility(self) -> dict[str, Any]:
        return {"AT": self.desktop.a11y_tree(max_chars=self.a11y_chars)}

    def execute(self, body: dict[str, Any]) -> dict[str, Any]:
        code = body.get("code")
        if not isinstance(code, str):
            raise ValueError('execute needs {"code": "<pyautogui calls>"}')
        assert self.desktop.display is not None
        try:
            perform(parse_pyautogui(code), self.desktop.display, pause_s=self.pause_s)
        except InvalidAction as e:
            raise ValueError(str(e)) from None
        return {"status": "success"}

    def launch(self, body: dict[str, Any]) -> dict[str, Any]:
        from iclr26.scienceboard.env import LAUNCH, WINDOW

        app = body.get("app")
        if app not in LAUNCH or app == "grass":  # GRASS's shell needs its sandbox: the environment starts it
            known = ", ".join(a for a in LAUNCH if a != "grass")
            raise ValueError(f"launch needs {{'app': one of {known}}}, got {app!r}")
        home = self.root / ".home" / app
        self.launched.append(self.desktop.launch(list(LAUNCH[app]), home=home, writable=[self.root]))
        self.desktop.wait_for_window(WINDOW[app], timeout_s=60)
        self.desktop.wait_for_app(WINDOW[app], timeout_s=60)  # started = its tree is readable
        return {"status": "success", "app": app}

    def read_file(self, path: str) -> bytes:
        self._check_path(path)
        try:  # the app can change the folder: no link is followed on the way (agents.beneath)
            return read_beneath(self.root, path)
        except FileNotFoundError:
            raise FileNotFoundError(f"no file {path}") from None

    def write_file(self, body: dict[str, Any]) -> dict[str, Any]:
        path, content = body.get("path"), body.get("content")
        if not isinstance(path, str) or not isinstance(content, str):
            raise ValueError('write needs {"path": "/home/user/...", "content": "<text>"}')
        self._check_path(path)
        write_beneath(self.root, path, content.encode())
        return {"status": "success", "bytes": len(content.encode())}

    @staticmethod
    def _check_path(path: str) -> None:
        """An absolute task path that stays in the task's folder (read lexically: the folder is the
        app's to change, so what a path resolves to now says nothing about the write that follows)."""
        if not path.startswith("/"):
            raise ValueError(f"paths are absolute task paths (/home/user/...), got {path!r}")
        parts_beneath(path)


class _Handler(BaseHTTPRequestHandler):
    control: ControlServer

    def log_message(self, *args: Any) -> None:  # quiet: the run's log is the episode record
        pass

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode())

    def _refused(self) -> tuple[int, str] | None:
        """Why this request may not drive the desktop (status, reason), or None."""
        given = self.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.control.token}".encode()):
            return 401, "a request needs the server's token (Authorization: Bearer <token>)"
        port = self.server.server_address[1]
        hosts = (f"127.0.0.1:{port}", f"localhost:{port}")
        if self.headers.get("Host", "") not in hosts:
            return 403, "the Host header must name this server (127.0.0.1)"
        origin = self.headers.get("Origin")
        if origin is not None and origin not in tuple(f"http://{h}" for h in hosts):
            return 403, f"requests from another origin ({origin[:100]}) are refused"
        return None

    def _body(self) -> dict[str, Any]:
        declared = self.headers.get("Content-Length") or "0"
        if not declared.isdigit():  # a negative or malformed length would read to the end of the stream
            raise ValueError(f"Content-Length must be a whole number of bytes, got {declared[:20]!r}")
        size = int(declared)
        if size > MAX_BODY:
            raise ValueError(f"the request body is over {MAX_BODY} bytes")
        try:
            value = json.loads(self.rfile.read(size) or b"{}")
        except json.JSONDecodeError as e:
            raise ValueError(f"the body is not JSON: {e}") from None
        if not isinstance(value, dict):
            raise ValueError("the body must be a JSON object")
        return value

    def _answer(self, work: Any) -> None:
        try:
            status, payload = 200, work()
        except FileNotFoundError as e:
            return self._json(404, {"error": str(e)})
        except ValueError as e:
            return self._json(400, {"error": str(e)})
        if isinstance(payload, bytes):
            kind = "image/png" if payload.startswith(b"\x89PNG") else "application/octet-stream"
            return self._send(status, payload, kind)
        return self._json(status, payload)

    def do_GET(self) -> None:
        if refused := self._refused():
            return self._json(refused[0], {"error": refused[1]})
        url = urlparse(self.path)
        c = self.control
        if url.path == "/screenshot":
            return self._answer(c.screenshot)
        if url.path == "/accessibility":
            return self._answer(c.accessibility)
        if url.path == "/file":
            path = parse_qs(url.query).get("path", [""])[0]
            return self._answer(lambda: c.read_file(path))
        return self._json(404, {"error": f"no endpoint GET {url.path}"})

    def do_POST(self) -> None:
        if refused := self._refused():
            return self._json(refused[0], {"error": refused[1]})
        url = urlparse(self.path)
        c = self.control
        routes = {"/execute": c.execute, "/setup/launch": c.launch, "/file": c.write_file}
        if url.path not in routes:
            return self._json(404, {"error": f"no endpoint POST {url.path}"})
        return self._answer(lambda: routes[url.path](self._body()))
