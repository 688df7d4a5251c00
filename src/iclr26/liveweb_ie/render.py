"""Pages rendered by headless Chromium into fixed-height regions, with set-of-mark boxes.

`render_page` loads a URL in a Playwright page, takes one full-page screenshot and cuts it into
regions of `region_height` pixels. The candidate elements (those with their own text, images,
links) are read from the live DOM with their boxes and absolute XPaths, numbered, and assigned
to the region their centre falls in. `draw_marks` draws a region's boxes and numbers
(set-of-mark prompting); `Region.text` is the text rendering a text-only model gets instead.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iclr26.core.errors import UserError

if TYPE_CHECKING:
    from PIL import Image
    from playwright.sync_api import Browser

VIEWPORT_WIDTH = 1280

# The DOM walk that lists candidate elements: visible, with own text, an image, or a link. Each
# gets its absolute XPath with a position at every step (as lxml evaluates it on the same HTML).
_CANDIDATES_JS = """
() => {
  const xp = (el) => {
    const parts = [];
    for (let n = el; n && n.nodeType === 1; n = n.parentNode) {
      let i = 1;
      for (let s = n.previousElementSibling; s; s = s.previousElementSibling)
        if (s.tagName === n.tagName) i++;
      parts.unshift(n.tagName.toLowerCase() + '[' + i + ']');
    }
    return '/' + parts.join('/');
  };
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style') continue;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) continue;
    const own = Array.from(el.childNodes).filter(n => n.nodeType === 3)
      .map(n => n.textContent).join(' ').trim();
    if (!(own || tag === 'img' || (tag === 'a' && el.getAttribute('href')))) continue;
    out.push({tag, text: (el.innerText || '').trim().replace(/\\s+/g, ' ').slice(0, 160),
              src: el.getAttribute('src') || '', href: el.getAttribute('href') || '',
              cls: el.getAttribute('class') || '', x: r.left + window.scrollX, y: r.top + window.scrollY,
              w: r.width, h: r.height, xpath: xp(el)});
  }
  return out;
}
"""


@dataclass(frozen=True)
class Mark:
    """A numbered candidate element: tag, text, src/href, class, its box in page pixels, its XPath."""

    mark_id: int
    tag: str
    text: str
    src: str
    href: str
    cls: str
    box: tuple[float, float, float, float]  # x, y, width, height
    xpath: str

    def line(self) -> str:
        """The element as one line of a text rendering."""
        cls = f".{self.cls.split()[0]}" if self.cls else ""
        extra = f" src={self.src}" if self.src else f" href={self.href}" if self.href else ""
        text = f' "{self.text[:80]}"' if self.text and self.tag != "img" else ""
        return f"[{self.mark_id}] <{self.tag}{cls}>{extra}{text}"


@dataclass
class Region:
    """One fixed-height slice of the page: its screenshot and the marks whose centre is inside."""

    index: int
    top: int
    image: Image.Image
    marks: list[Mark] = field(default_factory=list)

    def text(self, max_chars: int = 1500) -> str:
        """The region as text: one line per mark, cut at `max_chars`."""
        out, n = [], 0
        for m in self.marks:
            line = m.line()
            if n + len(line) > max_chars:
                out.append(f"... ({len(self.marks) - len(out)} more elements)")
                break
            out.append(line)
            n += len(line) + 1
        return "\n".join(out)


@dataclass
class RenderedPage:
    """A page as regions, and every mark by id."""

    url: str
    html: str
    regions: list[Region]
    marks: dict[int, Mark]
    seconds: float


def render_page(
    browser: Browser, url: str, *, region_height: int = 720, max_regions: int = 6, timeout_s: float = 20.0
) -> RenderedPage:
    """Load `url` in headless Chromium and cut it into at most `max_regions` regions of `region_height` px."""
    import time

    from PIL import Image

    if region_height < 100:
        raise UserError(f"region_height must be at least 100 pixels, got {region_height}")
    if max_regions < 1:
        raise UserError(f"max_regions must be at least 1, got {max_regions}")
    t0 = time.perf_counter()
    page = browser.new_page(viewport={"width": VIEWPORT_WIDTH, "height": region_height})
    try:
        resp = page.goto(url, timeout=timeout_s * 1000, wait_until="load")
        if resp is None or resp.status >= 400:
            raise UserError(f"{url} answered {resp.status if resp else 'nothing'}")
        raw: list[dict[str, Any]] = page.evaluate(_CANDIDATES_JS)
        shot = Image.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")
        html = page.content()
    finally:
        page.close()
    n_regions = max(1, min(max_regions, -(-shot.height // region_height)))
    regions = [
        Region(
            i,
            i * region_height,
            shot.crop((0, i * region_height, shot.width, min(shot.height, (i + 1) * region_height))),
        )
        for i in range(n_regions)
    ]
    marks: dict[int, Mark] = {}
    for r in raw:
        centre = r["y"] + r["h"] / 2
        k = int(centre // region_height)
        if k >= n_regions:
            continue
        m = Mark(
            len(marks) + 1,
            r["tag"],
            r["text"],
            r["src"],
            r["href"],
            r["cls"],
            (r["x"], r["y"], r["w"], r["h"]),
            r["xpath"],
        )
        marks[m.mark_id] = m
        regions[k].marks.append(m)
    return RenderedPage(url, html, regions, marks, time.perf_counter() - t0)


def draw_marks(
    region: Region, marks: list[Mark] | None = None, *, highlight: set[int] = frozenset()
) -> Image.Image:
    """The region's screenshot with a numbered box on each mark (set-of-mark); `highlight` in red."""
    from iclr26.agents.marks import draw_boxes

    shown = region.marks if marks is None else marks
    boxes = [(str(m.mark_id), m.box) for m in shown]
    return draw_boxes(region.image, boxes, highlight={str(i) for i in highlight}, offset_y=region.top)
