"""The protocol: a wrapper per (method, query) made on the group's first page before any drift, then
applied to the group's other pages at each evaluated version; scores per (query, page).

Building is the costly part (model calls), so each built XPath wrapper is appended to
`wrappers.jsonl` and a rerun of the same folder resumes from it. Ground truth at every version comes
from the release written for that version (`release/v<t>/`, read back with `load_release`).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from iclr26.core.jsonfile import append_log, read_log
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


def build_wrappers(
    live: LiveSites,
    release: Release,
    records: list[Record],
    methods: list[Method],
    log_file: Path,
    *,
    models: dict[str, Any],
    on_built: Callable[[], None] = lambda: None,
) -> dict[tuple[str, str], Built]:
    """Each method's wrapper for each record, made on the group's first page at `live.version`;
    XPath wrappers already in `log_file` are reused (resume)."""
    done = {(r["method"], r["sample_id"]): r for r in read_log(log_file)}
    out: dict[tuple[str, str], Built] = {}
    for record in records:
        first = release.urls(record)[0]
        key, path = local_path(live, first)
        page = live.fetch(key, path)
        for m in methods:
            prior = done.get((m.name, record.sample_id))
            if prior is not None:
                out[(m.name, record.sample_id)] = Built(
                    Wrapper(prior["xpaths"], prior["kinds"], list(prior.get("errors", []))),
                    prior["seconds"], prior["tokens"], prior.get("error", ""),
                )  # fmt: skip
                on_built()
                continue
            model = models.get(m.name)
            t0, k0 = time.perf_counter(), _tokens(model)
            error = ""
            try:
                extractor = m.build(record, live.url(key, path), page.html)
            except LLMError as e:  # a model failure is an empty wrapper for this query, not a crash
                error = f"{type(e).__name__}: {e}"
                log.warning("%s on %s: %s", m.name, record.sample_id, error)
                extractor = Wrapper({a: "" for a in record.attribute}, {})
            built = Built(extractor, time.perf_counter() - t0, _tokens(model) - k0, error)
            out[(m.name, record.sample_id)] = built
            if isinstance(extractor, Wrapper) and model is not None:
                entry = {
                    "method": m.name,
                    "sample_id": record.sample_id,
                    **extractor.json(),
                    "kinds": dict(extractor.kinds),
                    "seconds": built.seconds,
                    "tokens": built.tokens,
                    "error": error,
                }
                append_log(log_file, entry)
            on_built()
    return out


def score_version(
    live: LiveSites,
    release: Release,
    records: list[Record],
    built: dict[tuple[str, str], Built],
    firsts: dict[str, str],
    *,
    pages_per_group: int,
) -> list[PageResult]:
    """Apply every wrapper to its group's pages as served now (`live.version`), against `release`'s truth."""
    version = live.version
    html: dict[str, str] = {}
    out = []
    methods = sorted({m for m, _ in built})
    for record in records:
        urls = sample_pages(release.urls(record), firsts[record.sample_id], pages_per_group)
        gold_files = {a: release.groundtruth(record, a) for a in record.attribute}
        url_attrs = [a for a in record.attribute if default_kind(a) != "text"]  # compared as URLs
        for url in urls:
            if url not in html:
                page = live.fetch(*local_path(live, url))
                if page.version != version:
                    raise RuntimeError(f"{url} was served at version {page.version}, expected {version}")
                html[url] = page.html
            gold = {a: gold_files[a].get(url, []) for a in record.attribute}
            for m in methods:
                b = built.get((m, record.sample_id))
                if b is None:
                    continue
                pred = b.extractor.extract(html[url])
                s = page_score(pred, gold, url_attrs)
                out.append(
                    PageResult(m, record.sample_id, record.type, version, url, s.precision, s.recall, s.f1)
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
