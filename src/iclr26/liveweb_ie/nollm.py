"""VGS's mechanism without a language model, and the XPath styles under graded drift: a study.

Stages 2 and 3 of VGS are done by MiniLM similarity (all-MiniLM-L6-v2, `core.embed`) between the
attribute's description and each candidate element's text (an image's alt and file name, a link's
text and href); stage 4 by the algorithmic generaliser (`generalise.py`, with or without classes).
Stage 1 is the repository's parser with no reply (`replies.parse_attributes("")`: the kind from the
attribute's name, one or many from the query's wording, the name, or the name and the query, as the
description: `NoLLMConfig.description`).

- `vgs_<style>`: Chromium renders the first page into regions (`render.py`); stage 2 picks the region
  whose best candidate is most similar, stage 3 the most similar candidate in it (for many values:
  also those with its tag and class within `margin` of its similarity);
- `html_<style>`: the same stage 3 over every candidate of the raw HTML, with no screenshot: the
  paper's claim that visual narrowing helps is `vgs_*` against `html_*`, paired over the queries;
- stage-oracle ablations: `region_<style>` gives stage 3 the true region (the one holding the first
  true element); `true_<style>` gives stage 4 the true elements (those the generator's XPath selects
  on the first page: learnt from first-page ground truth, as `rules` is);
- `rules` (PyPI autoscraper, learnt from the first page's ground truth), `heuristic` (class names
  matched to the attribute's name: no truth, no model), `oracle` and the floor `empty`.

Each wrapper is made on the group's first page at version 0 and scored on the group's other pages at
version 0 (`f1_v0`), under each graded layout (`f1_<change>`: `sites.GRADED`, content unchanged) and
at versions 2 and 4 (layouts v2 and v3, with content drift). `touched_<change>` says whether the
change alters the query's first page at all; the drift view reads each change over the queries it
touches.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import numpy as np
from lxml import etree

from iclr26.core import Report, RunContext, Table
from iclr26.core.claim import Claim
from iclr26.core.records import markdown_table
from iclr26.core.study import Arm, Study, StudyResult, Unit
from iclr26.core.validation import check_in, check_int
from iclr26.liveweb_ie.evaluate import Built, local_path, page_html, sample_pages, score_wrapper
from iclr26.liveweb_ie.generalise import STYLES, generalise, node_key
from iclr26.liveweb_ie.metric import page_score
from iclr26.liveweb_ie.release import TYPES, Record, Release
from iclr26.liveweb_ie.replies import AttributeSpec, parse_attributes
from iclr26.liveweb_ie.server import LiveSites
from iclr26.liveweb_ie.sites import GRADED, SITE_KEYS, layout_of, oracle_xpaths, render
from iclr26.liveweb_ie.wrapper import Wrapper, parse_html

DRIFTS = tuple(GRADED)
SOURCES = ("true", "region", "vgs", "html")
"""Where stage 4's elements come from: the truth, stage 3 on the true region, stages 2-3, stage 3 on
the raw HTML."""
ARMS = (
    "oracle", "empty", "rules", "heuristic",
    *(f"{s}_{st}" for s in SOURCES for st in STYLES),
)  # fmt: skip


@dataclass(frozen=True)
class NoLLMConfig:
    """The no-LLM study's config (the bench: `benchmarks/liveweb_ie/no_llm.py`)."""

    sites: tuple[str, ...] = SITE_KEYS
    records_per_type: int = 6
    """queries per type, spread over the sites and groups (0: every query)"""
    pages_per_group: int = 10
    """pages each wrapper is scored on per version"""
    arms: tuple[str, ...] = ARMS
    description: str = "name"
    """stage 1 without a model: the attribute's name as the description ("name"), or the name and the
    query it came in ("query")"""
    margin: float = 0.1
    """stage 3, many values: candidates with the top one's tag and class within this much cosine"""
    region_height: int = 720
    max_regions: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        for s in self.sites:
            check_in("sites", s, SITE_KEYS)
        for a in self.arms:
            check_in("arms", a, ARMS)
        check_in("description", self.description, ("name", "query"))
        check_int("records_per_type", self.records_per_type, 0)
        check_int("pages_per_group", self.pages_per_group, 0)
        check_int("max_regions", self.max_regions, 1, 20)
        check_int("region_height", self.region_height, 100)


# ---------------------------------------------------------------- candidates and their texts
def candidates(tree: Any, kind: str) -> list[Any]:
    """The body's elements an attribute of `kind` can be read from: images, links with an href, or
    elements with text of their own."""
    body = tree.find(".//body")
    if body is None:
        return []
    if kind == "image":
        return body.xpath(".//img")
    if kind == "link":
        return body.xpath(".//a[@href]")
    return [
        e
        for e in body.iter()
        if isinstance(e.tag, str) and e.tag not in ("img", "script", "style") and (e.text or "").strip()
    ]


def element_text(node: Any, kind: str) -> str:
    """What MiniLM compares with the description: text; an image's alt and file name; a link's text
    and href."""
    text = " ".join("".join(node.itertext()).split())
    if kind == "image":
        src = node.get("src", "").rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ").replace("_", " ")
        return f"{node.get('alt', '')} {src}".strip()
    if kind == "link":
        return f"{text} {node.get('href', '')}".strip()
    return text


class Similarity:
    """Cosine similarity of MiniLM sentence embeddings (`core.embed`), with a cache of texts."""

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}

    def vectors(self, texts: list[str]) -> np.ndarray:
        from iclr26.core.embed import embed

        for t in dict.fromkeys(texts):  # one at a time: a text's vector does not depend on its batch
            if t not in self._cache:
                self._cache[t] = embed([t])[0]
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def scores(self, query: str, texts: list[str]) -> np.ndarray:
        """Cosine of `query` with each of `texts` (unit vectors: dot products)."""
        if not texts:
            return np.zeros(0)
        return self.vectors(texts) @ self.vectors([query])[0]


def pinpoint(sim: Similarity, spec: AttributeSpec, nodes: list[Any], margin: float) -> list[Any]:
    """Stage 3 by similarity: the most similar candidate; for many values also those with its tag and
    class within `margin` of its score."""
    if not nodes:
        return []
    s = sim.scores(spec.description, [element_text(n, spec.kind) for n in nodes])
    top = int(np.argmax(s))
    if not spec.many:
        return [nodes[top]]
    t = nodes[top]
    return [
        n
        for n, v in zip(nodes, s, strict=True)
        if n is t or (n.tag == t.tag and n.get("class") == t.get("class") and v >= s[top] - margin)
    ]


def true_nodes(tree: Any, xpath: str) -> list[Any]:
    """The elements the generator's XPath selects (an `/@src` or `/@href` step dropped)."""
    for tail in ("/@src", "/@href"):
        xpath = xpath.removesuffix(tail)
    return [n for n in tree.xpath(xpath) if isinstance(n, etree._Element)]


def _lookup(tree: Any, xpath: str) -> Any:
    for xp in (xpath, xpath.replace("/tbody[1]", "")):
        try:
            found = tree.xpath(xp)
        except etree.XPathError:
            continue
        if found:
            return found[0]
    return None


# ---------------------------------------------------------------- the method
class ElementScraper:
    """A wrapper from elements chosen by `source` (true, region, vgs, html) and generalised in `style`.

    `truth(record, attribute)` gives the true elements' XPath on the first page (the generator's);
    `render(url)` the first page as Chromium shows it (`render.RenderedPage`). `trace` keeps what
    stages 2 and 3 chose per attribute, against the truth."""

    def __init__(
        self,
        source: str,
        style: str,
        sim: Similarity,
        truth: Any,
        render_page: Any,
        margin: float,
        description: str = "name",
    ) -> None:
        self.source, self.style, self.sim, self.truth, self.render_page = (
            source,
            style,
            sim,
            truth,
            render_page,
        )
        self.margin, self.description = margin, description
        self.name = f"{source} elements, {style} XPath"
        self.trace: dict[str, dict[str, Any]] = {}

    def _regions(self, url: str, tree: Any, kind: str) -> list[list[Any]]:
        """Each region's candidates of `kind` as elements of `tree` (marks mapped by their XPaths)."""
        ok = {node_key(n) for n in candidates(tree, kind)}
        out = []
        for region in self.render_page(url).regions:
            nodes = [_lookup(tree, m.xpath) for m in region.marks]
            seen: set[str] = set()
            keep = []
            for n in nodes:
                if n is not None and node_key(n) in ok and node_key(n) not in seen:
                    seen.add(node_key(n))
                    keep.append(n)
            out.append(keep)
        return out

    def choose(self, record: Record, url: str, tree: Any, spec: AttributeSpec) -> list[Any]:
        """Stages 2-3 (or the truth) for one attribute; the trace records region and element hits."""
        truth = true_nodes(tree, self.truth(record, spec.name))
        t = {node_key(n) for n in truth}
        trace: dict[str, Any] = {"many": spec.many, "kind": spec.kind}
        if self.source == "true":
            chosen = truth
        elif self.source == "html":
            chosen = pinpoint(self.sim, spec, candidates(tree, spec.kind), self.margin)
        else:
            regions = self._regions(url, tree, spec.kind)
            true_region = next((i for i, r in enumerate(regions) if any(node_key(n) in t for n in r)), None)
            if self.source == "region":
                k = true_region
            else:  # stage 2: the region whose best candidate is most similar
                texts = [[element_text(n, spec.kind) for n in r] for r in regions]
                best = [float(self.sim.scores(spec.description, t).max()) if t else -2.0 for t in texts]
                k = int(np.argmax(best))
            trace.update(region=k, true_region=true_region, region_hit=int(k == true_region))
            chosen = pinpoint(self.sim, spec, regions[k], self.margin) if k is not None else []
        hit = sum(node_key(n) in t for n in chosen)
        trace.update(
            chosen=len(chosen),
            true=len(truth),
            element_precision=hit / len(chosen) if chosen else 0.0,
            element_recall=hit / len(truth) if truth else 0.0,
        )
        self.trace.setdefault(record.sample_id, {})[spec.name] = trace
        return chosen

    def build(self, record: Record, url: str, html: str) -> Wrapper:
        """The wrapper: per attribute, the chosen elements generalised into one XPath."""
        tree = parse_html(html)
        specs = parse_attributes("", record.attribute, record.query)  # stage 1 without a reply
        if self.description == "query":  # the name and the query it came in
            specs = [dataclasses.replace(s, description=f"{s.description} ({record.query})") for s in specs]
        xpaths = {}
        for spec in specs:
            nodes = self.choose(record, url, tree, spec)
            xpaths[spec.name] = generalise(tree, nodes, self.style, many=spec.many) if nodes else ""
        return Wrapper(xpaths, {s.name: s.kind for s in specs})


# ---------------------------------------------------------------- the study
@dataclass
class _Shared:
    """What the cells share in one process: the live sites, releases, MiniLM and one browser."""

    cfg: NoLLMConfig
    live: LiveSites
    releases: dict[int, Release]
    records: dict[str, Record]
    sim: Similarity
    stack: ExitStack
    browser: Any = None
    rendered: dict[str, Any] | None = None

    def render(self, url: str) -> Any:
        """The first page in Chromium (one browser, launched on first use; one render per URL)."""
        from iclr26.liveweb_ie.render import render_page

        if self.browser is None:
            from iclr26.agents.browser import headless_chromium

            self.browser = self.stack.enter_context(headless_chromium())
            self.rendered = {}
        assert self.rendered is not None
        if url not in self.rendered:
            self.rendered[url] = render_page(
                self.browser, url, region_height=self.cfg.region_height, max_regions=self.cfg.max_regions
            )
        return self.rendered[url]

    def truth(self, record: Record, attribute: str) -> str:
        site = next(s for s in self.live.sites.values() if s.website == record.website)
        return oracle_xpaths(site.group(record.group_id), layout_of(0))[attribute]


def _method(shared: _Shared, name: str) -> Any:
    from iclr26.liveweb_ie.baselines import ClassNameHeuristic, Oracle, RuleBased
    from iclr26.liveweb_ie.floors import ConstantExtraction

    first = shared.releases[0]
    if name == "oracle":
        return Oracle(shared.live.sites, 0)
    if name == "empty":
        return ConstantExtraction("empty")
    if name == "rules":
        return RuleBased(lambda r, a: first.groundtruth(r, a).get(first.urls(r)[0], []))
    if name == "heuristic":
        return ClassNameHeuristic()
    source, style = name.split("_")
    cfg = shared.cfg
    return ElementScraper(source, style, shared.sim, shared.truth, shared.render, cfg.margin, cfg.description)


def _graded(shared: _Shared, record: Record, extractor: Any, first: str) -> dict[str, Any]:
    """F1 (%) under each graded layout (content of version 0), and whether it touches the first page."""
    release = shared.releases[0]
    urls = sample_pages(release.urls(record), first, shared.cfg.pages_per_group)
    gold_files = {a: release.groundtruth(record, a) for a in record.attribute}
    url_attrs = [a for a in record.attribute if extractor_kind(a) != "text"]
    key, path = local_path(shared.live, first)
    site = shared.live.sites[key]
    base = render(site, site.page(path, 0), 0)
    out: dict[str, Any] = {}
    for name, layout in GRADED.items():
        changed = render(site, site.page(path, 0), 0, layout).replace(
            f"layout {layout.version}.", "layout v1."
        )
        out[f"touched_{name}"] = int(changed != base)  # the footer names the layout: not a change
        f1 = []
        for url in urls:
            k, p = local_path(shared.live, url)
            html = render(shared.live.sites[k], shared.live.sites[k].page(p, 0), 0, layout)
            gold = {a: gold_files[a].get(url, []) for a in record.attribute}
            f1.append(page_score(extractor.extract(html), gold, url_attrs).f1)
        out[f"f1_{name}"] = 100 * statistics.mean(f1) if f1 else None
    return out


def extractor_kind(attribute: str) -> str:
    """An attribute's kind from its name (as the metric compares link and image values as URLs)."""
    from iclr26.liveweb_ie.replies import default_kind

    return default_kind(attribute)


def _measure(shared: _Shared, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    """One arm on one query: its wrapper on the first page at version 0, F1 (%) at v0, under each
    graded layout, and at v2 and v4; the stages' choices against the truth for the element arms."""
    record, release = shared.records[unit.key], shared.releases[0]
    method = _method(shared, arm.name)
    first = release.urls(record)[0]
    key, path = local_path(shared.live, first)
    html = page_html(shared.live, first, 0)
    extractor = method.build(record, shared.live.url(key, path), html)
    built = Built(extractor, 0.0, 0)
    out: dict[str, Any] = {}
    for v in (0, 2, 4):
        pages = score_wrapper(shared.live, shared.releases[v], record, arm.name, built, first, v,
                              pages_per_group=shared.cfg.pages_per_group)  # fmt: skip
        out[f"f1_v{v}"] = 100 * statistics.mean(p.f1 for p in pages) if pages else None
        if v == 0:
            out["pass"] = int(bool(pages) and all(p.f1 == 1.0 for p in pages))
    out.update(_graded(shared, record, extractor, first))
    trace = getattr(method, "trace", {}).get(record.sample_id)
    if trace:
        for m in ("region_hit", "element_precision", "element_recall"):
            vals = [t[m] for t in trace.values() if m in t]
            if vals:
                out[m] = 100 * statistics.mean(vals)
        out["stages"] = trace
    out["wrapper"] = getattr(extractor, "json", lambda: {})()
    return out


METRICS = ("f1_v0", *(f"f1_{d}" for d in DRIFTS), "f1_v2", "f1_v4", "pass",
           "region_hit", "element_precision", "element_recall")  # fmt: skip
ROLES = {"oracle": "oracle", "empty": "floor", **{f"vgs_{st}": "method" for st in STYLES}}


def study(cfg: NoLLMConfig, live: LiveSites, releases: dict[int, Release], stack: ExitStack) -> Study:
    """The no-LLM study: units are the queries, arms `cfg.arms`. Claims, named before the run: VGS's
    stages 2-3 by similarity beat the same stage 3 over the raw HTML (no screenshot), each style, on
    F1 at v0, paired over the queries (bootstrap; queries where both sit at the empty extraction's
    level are at the floor)."""
    from iclr26.liveweb_ie.system import select_records

    records = select_records(releases[0].records, cfg.records_per_type, TYPES)
    units = [Unit(r.sample_id, cfg.seed, {"type": r.type, "site": r.website}) for r in records]
    floor = "empty" if "empty" in cfg.arms else None
    claims = [
        Claim("f1_v0", f"vgs_{st}", (f"html_{st}",), interval="bootstrap", floor_arm=floor,
              label=f"F1 at v0 (%), per query, {st} XPaths")
        for st in STYLES
        if f"vgs_{st}" in cfg.arms and f"html_{st}" in cfg.arms
    ]  # fmt: skip
    arms = [
        Arm(a, ROLES.get(a, "baseline"), floor="empty extraction" if a == "empty" else "")  # type: ignore[arg-type]
        for a in cfg.arms
    ]
    shared = _Shared(cfg, live, releases, {r.sample_id: r for r in records}, Similarity(), stack)
    return Study("liveweb_ie_nollm", arms, units, functools.partial(_measure, shared), claims=claims,
                 metrics=list(METRICS), pass_metric="pass", config=cfg, seed=cfg.seed,
                 views=drift_view)  # fmt: skip


def drift_view(result: StudyResult, ctx: RunContext) -> Report:
    """F1 (%) by arm and graded change, each change over the queries whose first page it alters (n)."""
    touched: dict[str, set[str]] = {}
    for d in DRIFTS:
        cells = [c for a in result.study.arms for c in result.records(a.name) if c.metrics]
        touched[d] = {c.unit for c in cells if c.metrics.get(f"touched_{d}")}
    cols = ["arm", "F1 v0 (all)", *(f"{d} (n={len(touched[d])})" for d in DRIFTS), "v2 (all)", "v4 (all)"]
    rows = []
    for arm in result.study.arms:
        v0 = result.values(arm.name, "f1_v0")
        row: list[Any] = [arm.name, round(statistics.mean(v0.values()), 1) if v0 else None]
        for d in DRIFTS:
            vals = [v for k, v in result.values(arm.name, f"f1_{d}").items() if k in touched[d]]
            row.append(round(statistics.mean(vals), 1) if vals else None)
        for v in (2, 4):
            vals = list(result.values(arm.name, f"f1_v{v}").values())
            row.append(round(statistics.mean(vals), 1) if vals else None)
        rows.append(row)
    table = Table("F1 (%) by arm and drift: each graded change over the queries it touches", cols, rows)
    print(markdown_table(table.columns, table.rows))
    return Report(tables=[table])
