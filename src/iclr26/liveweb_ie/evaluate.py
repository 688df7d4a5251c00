"""The protocol: a wrapper per (method, query) made on the group's first page before any drift, then
applied to the group's other pages at each evaluated version; scores per (query, page).

Building is the costly part (model calls); the study (`system.study`) runs one (method, query) per
cell, so a rerun of the same folder resumes from the run's `cells.jsonl`. A page is scored as the
server sends it at the version evaluated (`page_html`), so a cell does not depend on the server's
clock. Ground truth at every version comes from the release written for that version
(`release/v<t>/`, read back with `load_release`).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from iclr26.core.llm import LLMError
from iclr26.liveweb_ie.metric import page_score
from iclr26.liveweb_ie.release import TYPES, Record, Release
from iclr26.liveweb_ie.replies import default_kind
from iclr26.liveweb_ie.server import LiveSites
from iclr26.liveweb_ie.wrapper import Extractor, Wrapper

log = logging.getLogger(__name__)


class Method(Protocol):
    """A method that makes a wrapper for a query from the group's first page."""

    name: str

    def build(self, record: Record, url: str, html: str) -> Extractor:
        """The wrapper for `record`, made on the page at `url` whose HTML is `html`."""
        ...


@dataclass(frozen=True)
class PageResult:
    """One (method, query, page, version) score."""

    method: str
    sample_id: str
    type: str
    version: int
    url: str
    precision: float
    recall: float
    f1: float


@dataclass
class Built:
    """A method's wrapper for one query, with what making it cost."""

    extractor: Extractor
    seconds: float
    tokens: int
    error: str = ""


def local_path(live: LiveSites, url: str) -> tuple[str, str]:
    """(site key, path) on the live server for a release URL of our sites."""
    parts = urlsplit(url)
    for key, site in live.sites.items():
        if parts.netloc == site.website:
            return key, parts.path.lstrip("/")
    raise KeyError(f"{url} is not on one of the local sites")


def sample_pages(urls: list[str], first: str, k: int) -> list[str]:
    """Up to `k` of the group's URLs other than the wrapper's first page, evenly spread (0: all)."""
    rest = [u for u in urls if u != first]
    if not k or len(rest) <= k:
        return rest
    step = len(rest) / k
    return [rest[int(i * step)] for i in range(k)]


def _tokens(model: Any) -> int:
    return model.usage.total.total_tokens if model is not None else 0


def build_wrapper(live: LiveSites, release: Release, record: Record, method: Method, model: Any) -> Built:
    """`method`'s wrapper for `record`, made on the group's first page as served now (`live.version`);
    a model failure is an empty wrapper for this query, not a crash."""
    first = release.urls(record)[0]
    key, path = local_path(live, first)
    page = live.fetch(key, path)
    t0, k0 = time.perf_counter(), _tokens(model)
    error = ""
    try:
        extractor = method.build(record, live.url(key, path), page.html)
    except LLMError as e:
        error = f"{type(e).__name__}: {e}"
        log.warning("%s on %s: %s", method.name, record.sample_id, error)
        extractor = Wrapper({a: "" for a in record.attribute}, {})
    return Built(extractor, time.perf_counter() - t0, _tokens(model) - k0, error)


def page_html(live: LiveSites, url: str, version: int) -> str:
    """The HTML the server sends for a release URL at `version`, whatever its clock says now (the
    handler's own response, without the round trip)."""
    key, path = local_path(live, url)
    status, _, body = live.respond(f"/{key}/{unquote(path)}", version)
    if status != 200:
        raise RuntimeError(f"{url} at version {version}: HTTP {status}")
    return body.decode("utf-8")


def score_wrapper(
    live: LiveSites,
    release: Release,
    record: Record,
    method: str,
    built: Built,
    first: str,
    version: int,
    *,
    pages_per_group: int,
) -> list[PageResult]:
    """Apply one wrapper to its group's pages as served at `version`, against `release`'s truth (the
    release written for that version)."""
    urls = sample_pages(release.urls(record), first, pages_per_group)
    gold_files = {a: release.groundtruth(record, a) for a in record.attribute}
    url_attrs = [a for a in record.attribute if default_kind(a) != "text"]  # compared as URLs
    out = []
    for url in urls:
        gold = {a: gold_files[a].get(url, []) for a in record.attribute}
        s = page_score(built.extractor.extract(page_html(live, url, version)), gold, url_attrs)
        out.append(
            PageResult(method, record.sample_id, record.type, version, url, s.precision, s.recall, s.f1)
        )
    return out


def f1_table(
    results: list[PageResult], methods: list[str], versions: list[int]
) -> dict[str, dict[int, dict[str, float]]]:
    """method -> version -> {type_1..type_4, overall: mean F1 over (query, page), in %}."""
    cells: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for r in results:
        cells[(r.method, r.version, r.type)].append(r.f1)
        cells[(r.method, r.version, "overall")].append(r.f1)
    out: dict[str, dict[int, dict[str, float]]] = {}
    for m in methods:
        out[m] = {}
        for v in versions:
            out[m][v] = {
                t: (100 * sum(cells[(m, v, t)]) / len(cells[(m, v, t)]) if cells[(m, v, t)] else float("nan"))
                for t in (*TYPES, "overall")
            }
    return out
