"""VGS's plumbing with a vision-capable model: the regions go to stage 2 as images, the marked region
to stages 3 and 4, and the wrapper the stages produce is applied with lxml. The model here is a test
double that records the messages and answers in each stage's format; it is not presented as an LLM
(the real SmolLM2 run is in test_system.py)."""

from __future__ import annotations

import pytest

from iclr26.core.llm import Completion, UsageMeter
from iclr26.liveweb_ie.release import Record
from iclr26.liveweb_ie.server import LiveSites
from iclr26.liveweb_ie.sites import groundtruth


class RecordingModel:
    """Answers each VGS stage from a fixed script and keeps every request."""

    name = "recording-double"
    supports_images = True
    supports_json_schema = False
    supports_logprobs = False

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers, self.requests, self.usage = answers, [], UsageMeter()

    def chat(self, messages, *, prefix=None, **kw):
        self.requests.append((messages, prefix))
        key = prefix or "identify"
        return [Completion(self.answers[key].removeprefix(prefix or ""))]


@pytest.mark.debian("chromium")
def test_vgs_stages_send_images_and_build_a_working_wrapper(tmp_path):
    from iclr26.agents.browser import headless_chromium
    from iclr26.liveweb_ie.vgs import VisualGroundingScraper

    with LiveSites(seed=0, sites=("books",)) as live, headless_chromium() as browser:
        books = live.sites["books"]
        paths = books.pages(books.group("g_002"), 0)
        first = live.fetch("books", paths[0])
        record = Record(
            "w_000",
            books.website,
            "g_002",
            "",
            "q_000",
            "Return all book prices",
            ("price",),
            "type_3",
            {},
            "s0",
        )
        model = RecordingModel({
            "identify": "price | text | many | the price under each cover",
            "Region ": "Region 0",
            "Elements: ": "Elements: 8, 13",
            "XPath: /": "XPath: //p[@class='price_color']",
        })  # fmt: skip
        vgs = VisualGroundingScraper(model, browser, max_regions=2, figures=tmp_path)
        wrapper = vgs.build(record, live.url("books", paths[0]), first.html)
    stage2, stage3, stage4 = (
        model.requests[1][0][-1]["content"],
        model.requests[2][0][-1]["content"],
        model.requests[3][0][-1]["content"],
    )
    assert sum(p["type"] == "image_url" for p in stage2) == 2  # one image per region
    assert (
        sum(p["type"] == "image_url" for p in stage3) == 1
        and sum(p["type"] == "image_url" for p in stage4) == 1
    )
    assert "HTML around it" in stage4[0]["text"] and "/html[1]/body[1]" in stage4[0]["text"]
    (trace,) = vgs.traces["s0"]
    assert (trace.region, trace.kind, trace.many) == (0, "text", True) and trace.marks
    assert (tmp_path / "s0-price.png").is_file()
    other = books.page(paths[3], 0)
    from iclr26.liveweb_ie.sites import render

    assert wrapper.extract(render(books, other, 0))["price"] == groundtruth(other)["price"]
