"""Graded drift, the XPath generaliser, the class-name heuristic and the no-LLM study's arms."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np
import pytest
from lxml import html as lxml_html

from iclr26.core import RunContext
from iclr26.core.config import ConfigError
from iclr26.core.study import run_study
from iclr26.liveweb_ie.baselines import ClassNameHeuristic
from iclr26.liveweb_ie.generalise import generalise
from iclr26.liveweb_ie.nollm import NoLLMConfig, candidates, element_text, pinpoint, study, true_nodes
from iclr26.liveweb_ie.release import Record, load_release, write_release
from iclr26.liveweb_ie.replies import AttributeSpec
from iclr26.liveweb_ie.server import LiveSites
from iclr26.liveweb_ie.sites import GRADED, groundtruth, make_sites, render

LIST = """<html><body><header><a href="/">Home</a></header><div class="content"><ol>
<li><article class="card"><h3 class="t">Alpha</h3><p class="price">1</p><p class="stock">in</p></article></li>
<li><article class="card"><h3 class="t">Beta</h3><p class="price">2</p><p class="stock">out</p></article></li>
<li><article class="card"><h3 class="t">Gamma</h3><p class="price">3</p><p class="stock">in</p></article></li>
</ol></div></body></html>"""


@pytest.fixture(scope="module")
def sites():
    return make_sites(seed=0)


def test_each_graded_layout_changes_one_thing_and_the_truth_holds(sites):
    books, tables = sites["books"], sites["tables"]
    content = books.page("catalogue/page-1.html", 0)
    base = render(books, content, 0)
    pages = {d: render(books, content, 0, lay) for d, lay in GRADED.items()}
    assert '<div class="wrap-1">' in pages["wrappers"] and 'class="price_color"' in pages["wrappers"]
    assert 'class="price_color"' not in pages["classes"] and "wrap-0" not in pages["classes"]
    assert "x-price-color" in pages["classes"]
    base_order = base.index('class="price_color"') < base.index('class="availability"')
    assert base_order and pages["order"].index('class="price_color"') > pages["order"].index(
        'class="availability"'
    )
    assert pages["columns"].replace("v1-columns", "v1") == base  # no table on a listing: no change
    group = tables.groups[0]
    t_content = tables.page(tables.pages(group, 0)[0], 0)
    t_base, t_rot = render(tables, t_content, 0), render(tables, t_content, 0, GRADED["columns"])
    assert t_base != t_rot and "wrap-0" not in t_rot
    for html in [*pages.values(), t_rot]:
        assert "layout v1-" in html
    for f in content.group.fields:  # the version-0 truth is on every graded page
        for v in groundtruth(content)[f.name]:
            for html in pages.values():
                assert (v in html) or (v.replace("'", "&#x27;") in html), (f.name, v)


def test_generaliser_styles_from_one_card_of_many():
    tree = lxml_html.fromstring(LIST)
    first_title = tree.xpath("//h3")[0]
    for style in ("abs", "tags", "classes"):
        xp = generalise(tree, [first_title], style, many=True)
        assert [e.text for e in tree.xpath(xp)] == ["Alpha", "Beta", "Gamma"], (style, xp)
    assert generalise(tree, [first_title], "abs", many=True).startswith("/html[1]/body[1]")
    assert generalise(tree, [first_title], "classes", many=True) == "//h3[@class='t']"
    assert generalise(tree, [first_title], "tags", many=True) == "//h3[1]"
    one = generalise(tree, [first_title], "tags", many=False)  # one value: the card's position stays
    assert [e.text for e in tree.xpath(one)] == ["Alpha"]
    stock = tree.xpath("//p[@class='stock']")[1]
    tags = generalise(tree, [stock], "tags", many=True)
    assert [e.text for e in tree.xpath(tags)] == ["in", "out", "in"] and "[@class" not in tags
    with pytest.raises(ValueError, match="style"):
        generalise(tree, [stock], "css")


def test_generaliser_joins_elements_with_different_paths():
    tree = lxml_html.fromstring(LIST)
    nodes = [tree.xpath("//header/a")[0], tree.xpath("//h3")[2]]
    xp = generalise(tree, nodes, "tags")
    assert " | " in xp and sorted(e.text for e in tree.xpath(xp)) == ["Gamma", "Home"]


class _Scores:
    """A test double for MiniLM: fixed scores by element text."""

    def __init__(self, by_text: dict[str, float]) -> None:
        self.by_text = by_text

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        return np.array([self.by_text.get(t, 0.0) for t in texts])


def test_pinpoint_takes_the_top_and_for_many_its_like_siblings_within_the_margin():
    tree = lxml_html.fromstring(LIST)
    nodes = candidates(tree, "text")
    assert [element_text(n, "text") for n in nodes][:4] == ["Home", "Alpha", "1", "in"]
    sim = _Scores({"Alpha": 0.9, "Beta": 0.85, "Gamma": 0.5, "1": 0.88})
    one = AttributeSpec("title", "text", False, "title", False)
    assert [n.text for n in pinpoint(sim, one, nodes, 0.1)] == ["Alpha"]
    many = AttributeSpec("title", "text", True, "title", False)
    assert [n.text for n in pinpoint(sim, many, nodes, 0.1)] == ["Alpha", "Beta"]  # not "1" (a <p>)
    assert pinpoint(sim, many, [], 0.1) == []


def test_true_nodes_drop_the_attribute_step():
    tree = lxml_html.fromstring(
        '<html><body><a class="l" href="x">x</a><img class="i" src="s"></body></html>'
    )
    assert [n.tag for n in true_nodes(tree, "//a[@class='l']/@href")] == ["a"]
    assert [n.tag for n in true_nodes(tree, "//img[@class='i']/@src")] == ["img"]


def test_class_name_heuristic_reads_class_names_not_truth():
    rec = Record("w", "site", "g", "u", "q", "Extract the price of the book", ("price", "title"), "type_2",
                 {"price": "", "title": ""}, "s")  # fmt: skip
    wrapper = ClassNameHeuristic().build(rec, "", LIST)
    assert wrapper.xpaths == {"price": "(//p[@class='price'])[1]", "title": ""}  # no class says "title"
    assert wrapper.extract(LIST) == {"price": ["1"], "title": []}
    rec_many = Record(
        "w", "site", "g", "u", "q", "Extract all the prices", ("price",), "type_3", {"price": ""}, "s"
    )
    assert ClassNameHeuristic().build(rec_many, "", LIST).extract(LIST) == {"price": ["1", "2", "3"]}


def test_bad_config_is_named():
    with pytest.raises(ConfigError, match="arms"):
        NoLLMConfig(arms=("gpt",))


def test_study_without_browser_or_model_arms(tmp_path):
    """Truth-fed styles against the graded layouts: each style fails where its feature changes."""
    cfg = NoLLMConfig(sites=("books",), records_per_type=1, pages_per_group=3,
                      arms=("oracle", "empty", "true_abs", "true_tags", "true_classes"))  # fmt: skip
    with LiveSites(cfg.seed, cfg.sites) as live, ExitStack() as stack:
        rel = {v: load_release(write_release(live.sites, tmp_path / f"v{v}", v)) for v in (0, 2, 4)}
        (tmp_path / "run").mkdir()
        result = run_study(study(cfg, live, rel, stack), RunContext(out_dir=tmp_path / "run"))
    assert not result.study.claims  # no VGS arms: no claim
    for arm in ("oracle", "true_abs", "true_tags", "true_classes"):
        assert set(result.values(arm, "f1_v0").values()) == {100.0}, arm
    assert set(result.values("empty", "f1_v0").values()) == {0.0}
    assert set(result.values("true_abs", "f1_wrappers").values()) == {0.0}  # rooted paths break
    assert set(result.values("true_classes", "f1_classes").values()) == {0.0}  # renamed classes break
    assert set(result.values("oracle", "f1_classes").values()) == {0.0}
    assert set(result.values("true_classes", "f1_wrappers").values()) == {100.0}
    assert {c.unit for c in result.records("oracle") if c.metrics["touched_wrappers"]} == set(
        result.values("oracle", "f1_v0")
    )
    assert result.report.tables[0].columns[0] == "arm"


@pytest.mark.debian("chromium")
def test_study_with_minilm_and_chromium_judges_vgs_against_raw_html(tmp_path):
    """The MiniLM arms end to end on one site: the claim is named per style, stage 2 is traced, the
    true-region arm always has its region, and the price of a book is found on its detail page."""
    cfg = NoLLMConfig(sites=("books",), records_per_type=1, pages_per_group=2,
                      arms=("empty", "vgs_classes", "html_classes", "region_classes"))  # fmt: skip
    with LiveSites(cfg.seed, cfg.sites) as live, ExitStack() as stack:
        rel = {v: load_release(write_release(live.sites, tmp_path / f"v{v}", v)) for v in (0, 2, 4)}
        s = study(cfg, live, rel, stack)
        [claim] = s.claims
        assert (claim.method, claim.baselines, claim.metric) == ("vgs_classes", ("html_classes",), "f1_v0")
        (tmp_path / "run").mkdir()
        result = run_study(s, RunContext(out_dir=tmp_path / "run"))
    assert set(result.values("region_classes", "region_hit").values()) == {100.0}
    assert set(result.values("vgs_classes", "region_hit").values()) <= {0.0, 50.0, 100.0}
    assert not result.values("html_classes", "region_hit")
    [check] = result.checks
    assert check.verdict in ("held", "within noise", "did not hold", "uninformative")
    cells = {c.unit: c.metrics for c in result.records("vgs_classes")}
    prices = [m for m in cells.values() if m["wrapper"]["xpaths"].get("price")]
    assert prices and all(m["wrapper"]["xpaths"]["price"] == "//p[@class='price_color']" for m in prices)
