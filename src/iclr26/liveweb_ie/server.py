"""The live sites' HTTP server on 127.0.0.1, with a version clock that content and layout follow.

    with LiveSites(seed=0) as live:
        html = live.fetch("books", "catalogue/page-1.html")  # served at live.version
        live.version = 2                                       # the sites drift: layout v2
        url = live.url("books", "catalogue/page-1.html")      # for a browser

Every response carries `X-Site-Version`, so a client knows which version's ground truth applies.
Pages are rendered on request and cached per (site, path, version). Image paths return a small
JPEG; PDF links a short text body. The server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections import OrderedDict
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from iclr26.core.errors import UserError
from iclr26.liveweb_ie.sites import SITE_KEYS, Site, image_bytes, make_sites, render

HOST = "127.0.0.1"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client may send many requests on one connection
    disable_nagle_algorithm = True  # headers and body go out at once (else a 40 ms delayed ACK per request)

    def __init__(self, live: LiveSites, *args: Any) -> None:
        self.live = live
        super().__init__(*args)

    def do_GET(self) -> None:
        """Serve one page at the clock's current version."""
        version = self.live.version
        status, kind, body = self.live.respond(unquote(urlsplit(self.path).path), version)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Site-Version", str(version))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """No request log."""
        pass


class LiveSites:
    """The generated sites behind one HTTP server on 127.0.0.1; `version` is the clock they follow."""

    def __init__(
        self, seed: int = 0, sites: tuple[str, ...] = SITE_KEYS, *, port: int = 0, cache_pages: int = 4096
    ):
        self.sites: dict[str, Site] = make_sites(seed, sites)
        self.seed = seed
        self._version = 0
        self._port = port
        self._cache: OrderedDict[tuple[str, int], tuple[int, str, bytes]] = OrderedDict()
        self._cache_pages = cache_pages
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # the clock
    @property
    def version(self) -> int:
        """The clock: the version every request is served at."""
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UserError(f"version must be an int >= 0, got {value!r}")
        self._version = value

    # serving
    def respond(self, path: str, version: int) -> tuple[int, str, bytes]:
        """(status, content type, body) for a request path at `version` (cached)."""
        key = (path, version)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        out = self._respond(path, version)
        with self._lock:
            self._cache[key] = out
            if len(self._cache) > self._cache_pages:
                self._cache.popitem(last=False)
        return out

    def _respond(self, path: str, version: int) -> tuple[int, str, bytes]:
        site_key, _, rest = path.lstrip("/").partition("/")
        site = self.sites.get(site_key)
        if site is None:
            return 404, "text/plain", b"no such site\n"
        if rest.endswith((".jpg", ".png")):
            return 200, "image/jpeg", image_bytes(f"{site_key}/{rest}")
        if rest.startswith("pdf/"):
            return 200, "text/plain", f"PDF of {rest[4:]}\n".encode()
        if rest in ("", "index.html"):
            links = "".join(
                f'<li><a href="{site.pages(g, version)[0]}">{g.noun} pages ({g.group_id})</a></li>'
                for g in site.groups
            )
            return (
                200,
                "text/html; charset=utf-8",
                f"<html><body><h1>{site.website}</h1><ul>{links}</ul></body></html>".encode(),
            )
        content = site.page(rest, version)
        if content is None:
            return 404, "text/html; charset=utf-8", b"<html><body><h1>404 Not Found</h1></body></html>"
        return 200, "text/html; charset=utf-8", render(site, content, version).encode()

    def start(self) -> LiveSites:
        """Start serving on 127.0.0.1 (a free port unless one was given)."""
        if self._server is not None:
            return self
        self._server = ThreadingHTTPServer((HOST, self._port), partial(_Handler, self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=partial(self._server.serve_forever, poll_interval=0.05), daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the server and its thread."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server = None

    def __enter__(self) -> LiveSites:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base(self) -> str:
        """The server's base URL, http://127.0.0.1:<port>."""
        if self._server is None:
            raise UserError("the live sites are not started: use `with LiveSites(...) as live:`")
        return f"http://{HOST}:{self._server.server_address[1]}"

    def url(self, site: str, path: str) -> str:
        """The full URL of `path` on `site`."""
        return f"{self.base}/{site}/{path}"

    def fetch(self, site: str, path: str, *, timeout_s: float = 10.0) -> Page:
        """GET a page over HTTP; the `Page` records the version it was served at."""
        url = self.url(site, path)
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as r:
                return Page(url, r.read().decode("utf-8"), int(r.headers["X-Site-Version"]), r.status)
        except urllib.error.HTTPError as e:
            return Page(
                url, e.read().decode("utf-8", "replace"), int(e.headers.get("X-Site-Version", -1)), e.code
            )


@dataclass(frozen=True)
class Page:
    """A fetched page: its URL, HTML, the site version it was served at, and the HTTP status."""

    url: str
    html: str
    version: int
    status: int = 200


def load_test(
    live: LiveSites, paths: list[tuple[str, str]], *, requests: int = 2000, clients: int = 4
) -> dict[str, float]:
    """GET `requests` pages (cycling through `paths`) from `clients` keep-alive connections; stops by itself.

    Returns requests per second, the error count and the latency percentiles (ms).
    """
    import http.client

    if not paths:
        raise UserError("load_test needs at least one (site, path)")
    port = int(live.base.rsplit(":", 1)[1])
    per = [requests // clients + (i < requests % clients) for i in range(clients)]
    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def client(i: int) -> None:
        """One keep-alive connection sending its share of the requests."""
        conn = http.client.HTTPConnection(HOST, port, timeout=10)
        mine = []
        for k in range(per[i]):
            site, path = paths[(i + k * clients) % len(paths)]
            t = time.perf_counter()
            conn.request("GET", f"/{site}/{path}")
            r = conn.getresponse()
            r.read()
            mine.append(time.perf_counter() - t)
            if r.status != 200:
                with lock:
                    errors[0] += 1
        conn.close()
        with lock:
            lat.extend(mine)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    lat.sort()
    return {
        "requests": float(len(lat)),
        "seconds": wall,
        "requests_per_s": len(lat) / wall,
        "errors": float(errors[0]),
        "p50_ms": 1000 * lat[len(lat) // 2],
        "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
    }
