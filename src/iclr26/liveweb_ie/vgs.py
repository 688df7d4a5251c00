"""VGS, the Visual Grounding Scraper (the paper's method): four stages through `core.llm`.

1. attribute identification: what each queried attribute looks like, its kind (text / image /
   link) and whether the page holds one value or many;
2. visual grounding: the page, rendered by headless Chromium into fixed-height regions, is shown
   region by region and the model names the region holding the attribute;
3. element pinpointing: the region's candidate elements are boxed and numbered (set-of-mark) and
   the model picks the ones holding the attribute;
4. XPath synthesis: from the picked elements' absolute XPaths, their nearby HTML (the ancestor
   `context_depth` levels up) and the marked screenshot, the model writes one reusable XPath.

The XPaths form the wrapper applied with lxml to the group's other pages. A model that cannot
see images (`supports_images` False, e.g. SmolLM2) gets each region's text rendering instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lxml import etree

from iclr26.core.llm import ChatModel, user_message
from iclr26.liveweb_ie.prompting import SYSTEM, ask
from iclr26.liveweb_ie.release import Record
from iclr26.liveweb_ie.render import Mark, Region, RenderedPage, draw_marks, render_page
from iclr26.liveweb_ie.replies import AttributeSpec, parse_attributes, parse_marks, parse_region, parse_xpath
from iclr26.liveweb_ie.wrapper import Wrapper, parse_html

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@dataclass
class GroundingTrace:
    """What each stage decided for one attribute (kept with the run's results)."""

    attribute: str
    kind: str
    many: bool
    region: int | None = None
    marks: list[int] = field(default_factory=list)
    xpath: str = ""
    replies: list[str] = field(default_factory=list)
    figure: str = ""

    def json(self) -> dict[str, Any]:
        """The trace as a JSON object."""
        return dict(self.__dict__)


def _local_html(tree: Any, mark: Mark, depth: int, max_chars: int) -> str:
    """The HTML around a marked element: its ancestor `depth` levels up, cut at `max_chars`."""
    try:
        found = tree.xpath(mark.xpath)
    except etree.XPathError:
        found = []
    if not found:
        found = tree.xpath(mark.xpath.replace("/tbody[1]", ""))  # a tbody Chromium inserted
    if not found:
        return ""
    node = found[0]
    for _ in range(depth):
        if node.getparent() is not None:
            node = node.getparent()
    text = " ".join(etree.tostring(node, encoding="unicode", method="html").split())
    return text if len(text) <= max_chars else text[:max_chars] + " ...(cut)"


class VisualGroundingScraper:
    """VGS over a chat model and a headless Chromium; `build` makes a wrapper from a group's first page."""

    name = "VGS"

    def __init__(
        self,
        model: ChatModel,
        browser: Browser,
        *,
        region_height: int = 720,
        max_regions: int = 4,
        region_chars: int = 1200,
        context_depth: int = 1,
        context_chars: int = 500,
        max_tokens: int = 96,
        prefill: bool = True,
        seed: int = 0,
        figures: Path | None = None,
    ) -> None:
        self.model, self.browser = model, browser
        self.region_height, self.max_regions, self.region_chars = region_height, max_regions, region_chars
        self.context_depth, self.context_chars = context_depth, context_chars
        self.max_tokens, self.prefill, self.seed = max_tokens, prefill, seed
        self.vision = bool(getattr(model, "supports_images", False))
        self.figures = figures
        self.traces: dict[str, list[GroundingTrace]] = {}
        self.render_seconds: list[float] = []

    def _ask(self, text: str, *images: Any, prefix: str = "") -> str:
        messages = [{"role": "system", "content": SYSTEM}, user_message(text, *images)]
        return ask(
            self.model,
            messages,
            max_tokens=self.max_tokens,
            seed=self.seed,
            prefix=prefix if self.prefill else "",
        )

    # stage 1
    def identify(self, record: Record) -> tuple[list[AttributeSpec], str]:
        """What each attribute of the query is: kind, one or many, a description."""
        names = ", ".join(record.attribute)
        reply = self._ask(
            f"Query: {record.query}\nAttributes: {names}\n"
            "For each attribute write one line: name | kind (text, image or link) | one or many | "
            "what it looks like on the page."
        )
        return parse_attributes(reply, record.attribute, record.query), reply

    # stage 2
    def ground(self, page: RenderedPage, spec: AttributeSpec) -> tuple[int, str]:
        """The region holding the attribute (region 0 when the reply names none)."""
        n = len(page.regions)
        ask = (
            f"Which region of the page shows {spec.name} ({spec.description})? "
            f"Answer with the region number, 0 to {n - 1}."
        )
        if self.vision:
            intro = f"The page is shown as {n} regions, top to bottom: region 0 first.\n"
            reply = self._ask(intro + ask, *[r.image for r in page.regions], prefix="Region ")
        else:
            regions = "\n\n".join(
                f"Region {r.index}:\n{r.text(self.region_chars // max(1, n))}" for r in page.regions
            )
            reply = self._ask(
                f"The page, region by region (one line per element):\n{regions}\n\n{ask}", prefix="Region "
            )
        found = parse_region(reply, n)
        return (0 if found is None else found), reply

    # stage 3
    def pinpoint(self, region: Region, spec: AttributeSpec) -> tuple[list[int], str]:
        """The marked elements holding the attribute."""
        want = (
            "all the numbers of the elements that hold it, comma-separated"
            if spec.many
            else "the number of the element that holds it"
        )
        ask = f"Find {spec.name} ({spec.description}, a {spec.kind}). Answer with {want}."
        if self.vision:
            reply = self._ask(
                f"The page region has numbered boxes on its elements.\n{ask}",
                draw_marks(region),
                prefix="Elements: ",
            )
        else:
            reply = self._ask(
                f"Elements of the region:\n{region.text(self.region_chars)}\n\n{ask}", prefix="Elements: "
            )
        return parse_marks(reply, {m.mark_id for m in region.marks}, many=spec.many), reply

    # stage 4
    def synthesise(
        self, page: RenderedPage, tree: Any, region: Region, marks: list[Mark], spec: AttributeSpec
    ) -> tuple[str, str]:
        """One XPath for the attribute that also works on the group's other pages."""
        shown = marks[:3]
        examples = "\n".join(
            f"element {m.mark_id}: XPath {m.xpath}\n"
            f"HTML around it: {_local_html(tree, m, self.context_depth, self.context_chars)}"
            for m in shown
        )
        what = {
            "image": "the image's src attribute (end with /@src)",
            "link": "the link's href attribute (end with /@href)",
        }
        target = what.get(spec.kind, "the element's text")
        scope = "every such value on the page" if spec.many else "this one value"
        ask = (
            f"Selected elements for {spec.name}:\n{examples}\n\n"
            f"Write one XPath that selects {scope} ({target}) on this page and on other pages built from the "
            "same template. Prefer classes and structure over positions and text. Answer with the XPath only."
        )
        if self.vision:
            reply = self._ask(
                ask, draw_marks(region, highlight={m.mark_id for m in shown}), prefix="XPath: /"
            )
        else:
            reply = self._ask(ask, prefix="XPath: /")
        return parse_xpath(reply), reply

    def build(self, record: Record, url: str, html: str) -> Wrapper:
        """The wrapper for `record`, made on the page at `url` (its served HTML is `html`)."""
        specs, reply1 = self.identify(record)
        page = render_page(self.browser, url, region_height=self.region_height, max_regions=self.max_regions)
        self.render_seconds.append(page.seconds)
        tree = parse_html(html)
        xpaths, traces = {}, []
        for spec in specs:
            trace = GroundingTrace(spec.name, spec.kind, spec.many, replies=[reply1] if not traces else [])
            k, reply2 = self.ground(page, spec)
            region = page.regions[k]
            ids, reply3 = self.pinpoint(region, spec)
            trace.region, trace.marks, trace.replies = k, ids, [*trace.replies, reply2, reply3]
            if ids:
                chosen = [page.marks[i] for i in ids]
                trace.xpath, reply4 = self.synthesise(page, tree, region, chosen, spec)
                trace.replies.append(reply4)
                if self.figures is not None:
                    self.figures.mkdir(parents=True, exist_ok=True)
                    path = self.figures / f"{record.sample_id}-{spec.name}.png"
                    draw_marks(region, highlight=set(ids)).save(path)
                    trace.figure = str(path)
            xpaths[spec.name] = trace.xpath
            traces.append(trace)
        self.traces[record.sample_id] = traces
        return Wrapper(xpaths, {s.name: s.kind for s in specs})
