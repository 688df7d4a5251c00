"""Rendering into regions and set-of-mark drawing in real headless Chromium; the live server's clock,
404s and loopback binding; a small bounded load test."""

from __future__ import annotations

import numpy as np
import pytest
from lxml import html as lxml_html

from iclr26.liveweb_ie.server import HOST, LiveSites, load_test


@pytest.fixture(scope="module")
def live():
    with LiveSites(seed=0, sites=("books", "shop")) as sites:
        yield sites


def test_server_follows_the_clock_and_binds_to_loopback(live):
    assert live.base.startswith(f"http://{HOST}:")
    live.version = 0
    p0 = live.fetch("books", "catalogue/page-1.html")
    live.version = 2
    p2 = live.fetch("books", "catalogue/page-1.html")
    live.version = 0
    assert (p0.status, p0.version, p2.version) == (200, 0, 2)
    assert "layout v1" in p0.html and "layout v2" in p2.html
    assert live.fetch("books", "no/such/page.html").status == 404
    assert live.fetch("nosite", "index.html").status == 404
    stats = load_test(
        live, [("books", "catalogue/page-1.html"), ("shop", "products/1.html")], requests=200, clients=2
    )
    assert stats["requests"] == 200 and stats["errors"] == 0


@pytest.mark.debian("chromium")
def test_regions_marks_and_set_of_mark_drawing(live):
    from iclr26.agents.browser import headless_chromium
    from iclr26.liveweb_ie.render import draw_marks, render_page

    live.version = 0
    url = live.url("books", "catalogue/page-1.html")
    with headless_chromium() as browser:
        page = render_page(browser, url, region_height=600, max_regions=3)
    assert len(page.regions) == 3 and all(r.image.size == (1280, 600) for r in page.regions)
    assert sum(len(r.marks) for r in page.regions) == len(page.marks) > 20
    tree = lxml_html.fromstring(live.fetch("books", "catalogue/page-1.html").html)
    for m in page.marks.values():  # every mark's absolute XPath finds its element in lxml's parse
        assert tree.xpath(m.xpath), m
    price = next(m for m in page.marks.values() if m.cls == "price_color")
    assert price.text.startswith("£") and "price_color" in price.line()
    region = next(r for r in page.regions if price in r.marks)
    marked = np.asarray(draw_marks(region, highlight={price.mark_id}))
    plain = np.asarray(region.image)
    x, y, w, h = (int(v) for v in price.box)
    y -= region.top
    assert (marked != plain).any() and tuple(marked[y + h // 2, x + w - 2]) == (
        220,
        30,
        30,
    )  # the red box's right edge
    assert "[" in region.text(300) and len(region.text(300)) < 400
    from iclr26.core.errors import UserError

    with pytest.raises(UserError, match="region_height"):
        render_page(None, url, region_height=10)  # type: ignore[arg-type]
