"""headless_chromium + serve_folder: a served page is read, queried by XPath and screenshotted
in Debian's Chromium, and both shut down completely, even when the body raises."""

from __future__ import annotations

import io
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from iclr26.agents.browser import headless_chromium, serve_folder
from iclr26.core.config import ConfigError
from tests.agents.procs import all_dead, chromium_pids

INDEX = """<!doctype html>
<html><head><title>LiveWeb fixture</title>
<style>body { margin: 0; background: #ffffff; font-family: sans-serif; }</style></head>
<body>
<h1 id="title">Acme Widgets</h1>
<ul><li class="item">alpha</li><li class="item">beta</li><li class="item">gamma</li></ul>
<a id="next" href="about.html">About</a>
<div id="red" style="position: absolute; left: 0; top: 200px; width: 200px; height: 80px;
     background: #ff0000"></div>
</body></html>
"""
ABOUT = "<!doctype html><html><body><p id='who'>About Acme</p></body></html>"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / "index.html").write_text(INDEX)
    (root / "about.html").write_text(ABOUT)
    return root


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    with serve_folder(site) as base:
        yield base


@pytest.fixture(scope="module")
def browser():  # one Chromium for the module: a launch costs about a second on 2 cores
    with headless_chromium() as b:
        yield b


def _descendants(pid: int) -> dict[int, str]:
    """pid -> command name of every process below `pid`, from /proc."""
    parent_of: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if rest[0] == "Z":  # zombies are dead already
            continue
        parent_of[int(entry)] = int(rest[1])
        names[int(entry)] = name
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        p = frontier.pop()
        for child, parent in parent_of.items():
            if parent == p and child not in found:
                found[child] = names[child]
                frontier.append(child)
    return found


def _port_open(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_serve_folder_serves_files_and_closes_its_port(site: Path) -> None:
    with serve_folder(site) as base:
        assert base.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{base}/index.html", timeout=5) as response:
            assert response.status == 200
            assert response.headers["Cache-Control"] == "no-store"
            assert "Acme Widgets" in response.read().decode()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"{base}/nope.html", timeout=5)
        assert missing.value.code == 404
        missing.value.close()
        assert _port_open(base)
    assert not _port_open(base)


def test_serve_folder_rejects_bad_arguments(tmp_path: Path) -> None:
    with (
        pytest.raises(ConfigError, match=r"^root must be an existing folder"),
        serve_folder(tmp_path / "absent"),
    ):
        pass
    with pytest.raises(ConfigError, match=r"^port must be"), serve_folder(tmp_path, port=70000):
        pass


def test_headless_chromium_rejects_bad_args() -> None:
    with (
        pytest.raises(ConfigError, match=r"^args must be a list of Chromium flags"),
        headless_chromium(
            args="--lang=en"  # type: ignore[arg-type]
        ),
    ):
        pass


@pytest.mark.debian("chromium")
def test_reads_dom_text_and_follows_a_link(browser, base_url: str) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{base_url}/index.html")
        assert page.title() == "LiveWeb fixture"
        assert page.inner_text("#title") == "Acme Widgets"
        assert page.locator("li.item").all_inner_texts() == ["alpha", "beta", "gamma"]
        page.click("#next")
        page.wait_for_url(f"{base_url}/about.html")
        assert page.inner_text("#who") == "About Acme"
    finally:
        page.close()


@pytest.mark.debian("chromium")
def test_evaluates_xpath(browser, base_url: str) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{base_url}/index.html")
        assert page.locator("xpath=//ul/li[@class='item'][2]").inner_text() == "beta"
        count = page.evaluate(
            "document.evaluate('count(//li)', document, null, XPathResult.NUMBER_TYPE, null).numberValue"
        )
        assert count == 3
        text = page.evaluate(
            "xp => document.evaluate(xp, document, null, XPathResult.STRING_TYPE, null).stringValue",
            "//h1[@id='title']/text()",
        )
        assert text == "Acme Widgets"
    finally:
        page.close()


@pytest.mark.debian("chromium")
def test_screenshot_has_the_viewport_size_and_the_red_div(browser, base_url: str) -> None:
    from PIL import Image

    page = browser.new_page(viewport={"width": 400, "height": 300})
    try:
        page.goto(f"{base_url}/index.html")
        png = page.screenshot()
    finally:
        page.close()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(png)).convert("RGB")
    assert image.size == (400, 300)
    assert image.getpixel((100, 240)) == (255, 0, 0)  # inside #red: x in [0, 200), y in [200, 280)
    assert image.getpixel((300, 240)) == (255, 255, 255)  # right of it: the white page
    assert image.getpixel((100, 290)) == (255, 255, 255)  # below it


@pytest.mark.debian("chromium")
def test_teardown_after_a_raising_body_leaves_no_chromium_and_closes_the_port(site: Path) -> None:
    me = os.getpid()
    before = set(_descendants(me))
    chromium_before = chromium_pids()
    seen: dict[str, object] = {}

    def body() -> None:
        with serve_folder(site) as base, headless_chromium() as b:
            seen["base"] = base
            page = b.new_page()
            page.goto(f"{base}/index.html")
            assert page.inner_text("#title") == "Acme Widgets"
            spawned = {pid: name for pid, name in _descendants(me).items() if pid not in before}
            spawned.update({pid: "chromium" for pid in chromium_pids() - chromium_before})
            seen["spawned"] = spawned
            raise RuntimeError("boom")

    # Its own thread: Playwright's sync API allows one running instance per thread, and this
    # module's shared `browser` holds the main thread's.
    with ThreadPoolExecutor(1) as pool, pytest.raises(RuntimeError, match="boom"):
        pool.submit(body).result(timeout=60)
    spawned = seen["spawned"]
    assert isinstance(spawned, dict)
    assert any("chrom" in name for name in spawned.values()), spawned
    # Checked by pid, not as our descendants: a chromium orphaned by its driver would be re-parented.
    # crashpad handlers notice their browser's exit a moment later
    assert all_dead(set(spawned), within=3.0) == set()
    assert not _port_open(str(seen["base"]))
