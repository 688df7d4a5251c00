"""Model XPaths evaluated in a child process that is killed when one runs past its deadline.

lxml's XPath evaluation has no time limit and cannot be interrupted, and a short XPath can take
polynomial time in the page's size: `//*[count(//*[count(//*)>0])>0]` (31 characters) runs for
seconds on a page of 900 elements, and one more nesting for hours. So every XPath a model wrote is
run by `XPathRunner` in a child Python (this file run as a script: it imports only lxml), one
request at a time over pipes; a request that has not answered within `DEADLINE_S` kills the child
and comes back as an error (a new child starts on the next request). The child holds the last
page it was sent, so a wrapper's XPaths on one page send the page once.

The functions above the runner turn a page and an XPath result into the values the harness reads;
they run in the child.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any

from lxml import etree
from lxml import html as lxml_html

MAX_XPATH = 1000  # characters; a longer model output is not an XPath
DEADLINE_S = 1.0  # per XPath; the harness's XPaths take milliseconds
START_S = 30.0  # for the child to start (import lxml) on a loaded machine
MEMORY_BYTES = 2 << 30  # the child's address space


def parse_html(html: str) -> Any:
    """lxml's element tree of a page (an empty page gives an empty <html>)."""
    try:
        return lxml_html.fromstring(html or "<html></html>")
    except (etree.ParserError, ValueError):
        return lxml_html.fromstring("<html></html>")


def _text(el: Any) -> str:
    return " ".join("".join(el.itertext()).split())


def node_value(node: Any, kind: str) -> str:
    """The value of one XPath result for an attribute of `kind` (text, image, link)."""
    if isinstance(node, str | bytes):  # an attribute or text() result (lxml's smart strings)
        return " ".join(str(node).split())
    if isinstance(node, bool | int | float):
        return str(node)
    if not isinstance(node, etree._Element):
        return ""
    if kind == "image":
        if node.tag == "img":
            return node.get("src", "")
        img = node.find(".//img")
        return img.get("src", "") if img is not None else ""
    if kind == "link":
        if node.tag == "a":
            return node.get("href", "")
        a = node.find(".//a[@href]")
        return a.get("href", "") if a is not None else _text(node)
    return _text(node)


def _values(tree: Any, xpath: str, kind: str) -> tuple[list[str], str | None]:
    try:
        result = tree.xpath(xpath)
    except (etree.XPathError, ValueError, TypeError) as e:
        return [], f"invalid XPath {xpath[:120]!r}: {e}"
    nodes = result if isinstance(result, list) else [result]
    values = [node_value(n, kind) for n in nodes]
    return [v for v in values if v], None


def _step_back(tree: Any, xpath: str, cuts: list[int]) -> tuple[str, str] | None:
    """The longest prefix of `xpath` cut at one of `cuts` that selects an element, and its HTML."""
    for cut in reversed(cuts):
        prefix = xpath[:cut]
        try:
            found = tree.xpath(prefix)
        except (etree.XPathError, ValueError, TypeError):
            continue
        nodes = [n for n in (found if isinstance(found, list) else []) if isinstance(n, etree._Element)]
        if nodes:
            return prefix, etree.tostring(nodes[0], encoding="unicode", method="html")
    return None


def _serve() -> None:
    """The child: one JSON request a line on stdin, one JSON answer a line on stdout."""
    import ctypes
    import resource
    import signal

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the harness
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    tree = parse_html("")
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        req = json.loads(line)
        if "page" in req:
            tree = parse_html(req["page"])
        if "cuts" in req:
            answer: Any = _step_back(tree, req["xpath"], req["cuts"])
        else:
            answer = _values(tree, req["xpath"], req["kind"])
        out.write(json.dumps(answer) + "\n")
        out.flush()


class Overrun(Exception):
    """The child did not answer in time, or stopped; it has been killed."""


class XPathRunner:
    """A child process that evaluates XPaths on pages; see the module's docstring."""

    def __init__(self, deadline_s: float = DEADLINE_S):
        self.deadline_s = deadline_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._page: str | None = None  # the page the child holds
        self._buffer = b""
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        import lxml

        # -P: this file's folder is not put on the path; lxml comes from where this process found it
        proc = subprocess.Popen(
            [sys.executable, "-P", "-s", os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(lxml.__file__))),
            },
        )
        self._proc, self._page, self._buffer = proc, None, b""
        if self._read_line(START_S) != b"ready":
            raise Overrun("the XPath evaluator did not start")
        return proc

    def _read_line(self, timeout_s: float) -> bytes:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close()
                raise Overrun(f"no answer within {timeout_s:g} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.close()
                raise Overrun("the XPath evaluator stopped")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _ask(self, page: str, request: dict[str, Any]) -> Any:
        with self._lock:
            proc = self._proc if self._proc is not None and self._proc.poll() is None else self._start()
            if page != self._page:
                request = {**request, "page": page}
            assert proc.stdin is not None
            try:
                proc.stdin.write(json.dumps(request).encode() + b"\n")
                proc.stdin.flush()
            except OSError:
                self.close()
                raise Overrun("the XPath evaluator stopped") from None
            self._page = page
            return json.loads(self._read_line(self.deadline_s))

    def run(self, page: str, xpath: str, kind: str) -> tuple[list[str], str | None]:
        """(values, error): the XPath's values on the page's HTML; an invalid XPath, or one that
        runs past the deadline, gives ([], the reason)."""
        if not xpath or not xpath.strip():
            return [], "empty XPath"
        if len(xpath) > MAX_XPATH:
            return [], f"XPath longer than {MAX_XPATH} characters"
        try:
            values, error = self._ask(page, {"xpath": xpath, "kind": kind})
        except Overrun as e:
            return [], f"XPath {xpath[:120]!r} stopped: {e}"
        return values, error

    def step_back(self, page: str, xpath: str, cuts: list[int]) -> tuple[str, str] | None:
        """The longest prefix of `xpath` cut at one of `cuts` that selects an element on the page,
        and that element's HTML; None if none does, or the evaluation ran past the deadline."""
        if len(xpath) > MAX_XPATH:
            return None
        try:
            answer = self._ask(page, {"xpath": xpath, "cuts": cuts})
        except Overrun:
            return None
        return None if answer is None else (answer[0], answer[1])

    def close(self) -> None:
        """Kill the child (a new one starts on the next request)."""
        proc, self._proc, self._page = self._proc, None, None
        if proc is not None:
            proc.kill()
            proc.wait()
            for f in (proc.stdin, proc.stdout):
                if f is not None:
                    f.close()


RUNNER = XPathRunner()
"""The process's runner (its child starts on the first XPath)."""


if __name__ == "__main__":
    _serve()
