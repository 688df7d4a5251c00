"""Headless Chromium through Playwright, and a local HTTP server for the sites it browses.

`headless_chromium()` launches Debian's `chromium` (Playwright cannot download its own browsers
here, so it is pointed at the system binary with `executable_path`) and yields a Playwright
`Browser`; `serve_folder(root)` serves a folder on 127.0.0.1 and yields its base URL. Both shut
down on exit, even when the body raises.

    with serve_folder(site_dir) as base, headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/index.html")
        title = page.inner_text("h1")
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iclr26.core.config import ConfigError
from iclr26.core.sysdeps import require

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["chromium_executable", "headless_chromium", "serve_folder"]

# Flags for Chromium in containers and CI. `--no-sandbox` (which Playwright adds because we pass
# chromium_sandbox=False) is needed because Chromium's sandbox refuses to start as root and needs
# user namespaces that containers often lack; the pages it opens are our own local sites.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--disable-dev-shm-usage",  # Docker's /dev/shm is 64 MB; Chromium would crash on large pages
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
)


def chromium_executable() -> str:
    """The path of Debian's chromium binary; raises MissingSystemPackage when it is not installed."""
    require("chromium")
    path = shutil.which("chromium")
    assert path is not None  # require() probes the same executable
    return path


@contextmanager
def headless_chromium(*, args: Sequence[str] = (), timeout_s: float = 30.0) -> Iterator[Browser]:
    """A headless Playwright `Browser` on Debian's chromium; closed with its driver on exit.

    `args` are extra Chromium command-line flags; `timeout_s` bounds the launch. Playwright's sync
    API runs one instance per thread: open several pages on one browser rather than nesting these.
    """
    if isinstance(args, str) or not all(isinstance(a, str) and a.startswith("--") for a in args):
        raise ConfigError(f"args must be a list of Chromium flags like ['--lang=en'], got {args!r}")
    if not (isinstance(timeout_s, int | float) and timeout_s > 0):
        raise ConfigError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    executable = chromium_executable()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise ConfigError("headless_chromium needs playwright: pip install 'iclr26[agents]'") from e
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            chromium_sandbox=False,  # adds --no-sandbox: required as root (see CHROMIUM_ARGS)
            args=[*CHROMIUM_ARGS, *args],
            timeout=timeout_s * 1000,
        )
        try:
            yield browser
        finally:
            browser.close()
    finally:
        playwright.stop()


class _QuietHandler(SimpleHTTPRequestHandler):
    """Static files with caching off (sites are regenerated between runs) and no request log."""

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve_folder(root: str | os.PathLike[str], *, port: int = 0) -> Iterator[str]:
    """Serve the folder `root` over HTTP on 127.0.0.1 in a background thread; yields the base URL.

    `port=0` picks a free port. The URL has no trailing slash: f"{base}/index.html".
    """
    folder = Path(root)
    if not folder.is_dir():
        raise ConfigError(f"root must be an existing folder to serve, got {str(root)!r}")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"port must be an int in [0, 65535] (0 picks a free one), got {port!r}")
    handler = partial(_QuietHandler, directory=str(folder.resolve()))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=partial(server.serve_forever, poll_interval=0.05),
        name=f"serve_folder:{folder.name}",
        daemon=True,
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
