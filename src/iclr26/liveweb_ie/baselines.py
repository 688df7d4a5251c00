"""The baselines VGS is compared with, each a `build(record, url, html) -> Extractor` method.

- `CoT`: the page's HTML and the query in one call; the model reasons, then gives a JSON object
  attribute -> XPath (the paper's chain-of-thought baseline);
- `Reflexion`: CoT, then the XPaths are run on the first page; attributes that extracted nothing
  or whose XPath lxml rejects are reported back and the model revises, up to `rounds` times;
- `AutoScraperLLM`: progressive wrapper induction in the manner of AutoScraper (Huang et al.,
  2024): per attribute, the model proposes an XPath over the page; when it selects nothing, the
  XPath steps back to its deepest step that does select something, and the model tries again
  shown only that node's HTML;
- `RuleBased`: PyPI's `autoscraper`, learnt from the first page's ground-truth values, no model
  (its best rule on the first page is kept): it learns from first-page ground truth, which no other
  method sees;
- `ClassNameHeuristic`: no model and no ground truth: the elements whose class shares a word with the
  attribute's name (of the kind the name suggests), the class most sharing it; one value unless the
  query asks for many;
- `Oracle`: the generator's own XPaths for the layout served when the wrapper is made: F1 = 1
  before any drift, which validates the metric and the ground truth.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

from iclr26.core.llm import ChatModel
from iclr26.liveweb_ie import xpath_worker
from iclr26.liveweb_ie.metric import prf
from iclr26.liveweb_ie.prompting import SYSTEM, ask, compact_html
from iclr26.liveweb_ie.release import Record
from iclr26.liveweb_ie.replies import default_kind, parse_xpath, parse_xpath_map
from iclr26.liveweb_ie.sites import Site, layout_of, oracle_xpaths
from iclr26.liveweb_ie.wrapper import Wrapper, run_xpath


def _kinds(record: Record) -> dict[str, str]:
    return {a: default_kind(a) for a in record.attribute}


def _hint(attributes: tuple[str, ...]) -> str:
    """How each attribute's value is read: text, an image's src, a link's href."""
    kinds = {a: default_kind(a) for a in attributes}
    return "; ".join(
        f"{a}: "
        + {
            "image": "an image's src (end the XPath with /@src)",
            "link": "a link's href (end with /@href)",
        }.get(k, "text")
        for a, k in kinds.items()
    )


class CoT:
    """One call: think about the page's structure, then a JSON object attribute -> XPath."""

    name = "CoT"

    def __init__(
        self,
        model: ChatModel,
        *,
        html_chars: int = 4000,
        max_tokens: int = 192,
        prefill: bool = True,
        seed: int = 0,
    ):
        self.model, self.html_chars, self.max_tokens, self.prefill, self.seed = (
            model,
            html_chars,
            max_tokens,
            prefill,
            seed,
        )
        self.replies: dict[str, list[str]] = {}

    def _messages(self, record: Record, html: str) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": SYSTEM},
            {
                "role": "user",
                "content": f"HTML of the page:\n{compact_html(html, self.html_chars)}\n\n"
                f"Query: {record.query}\nAttributes: {_hint(record.attribute)}\n"
                "Think step by step about where each attribute is in the HTML, "
                "then give XPaths that also work on other pages with the same template, as one JSON object "
                '{"attribute": "xpath", ...}.',
            },
        ]

    def _prefix(self, record: Record) -> str:
        return f'```json\n{{"{record.attribute[0]}": "/' if self.prefill else ""

    def build(self, record: Record, url: str, html: str) -> Wrapper:
        """The wrapper from one call on the first page's HTML."""
        messages = self._messages(record, html)
        reply = ask(
            self.model, messages, max_tokens=self.max_tokens, seed=self.seed, prefix=self._prefix(record)
        )
        self.replies[record.sample_id] = [reply]
        return Wrapper(parse_xpath_map(reply, record.attribute), _kinds(record))


class Reflexion(CoT):
    """CoT, then up to `rounds` revisions after a failed trial on the first page (no ground truth used)."""

    name = "Reflexion"

    def __init__(self, model: ChatModel, *, rounds: int = 2, **kw: Any):
        super().__init__(model, **kw)
        self.rounds = rounds

    def build(self, record: Record, url: str, html: str) -> Wrapper:
        """CoT's wrapper, revised while its trial on the first page fails (the best trial is kept)."""
        messages = self._messages(record, html)
        replies = []
        best: Wrapper | None = None
        best_found = -1
        for _ in range(self.rounds + 1):
            reply = ask(
                self.model, messages, max_tokens=self.max_tokens, seed=self.seed, prefix=self._prefix(record)
            )
            replies.append(reply)
            wrapper = Wrapper(parse_xpath_map(reply, record.attribute), _kinds(record))
            problems = []
            for a, xp in wrapper.xpaths.items():
                values, err = run_xpath(html, xp, wrapper.kinds[a])
                if err or not values:
                    problems.append(f"{a}: {err or f'the XPath {xp!r} selected nothing'}")
            found = len(record.attribute) - len(problems)
            if found > best_found:
                best, best_found = wrapper, found
            if not problems:
                break
            messages = [
                *messages,
                {"role": "assistant", "content": reply},
                {
                    "role": "user",
                    "content": "Trial on this page failed:\n"
                    + "\n".join(problems)
                    + "\nReflect on why, then give corrected XPaths as one JSON object.",
                },
            ]
        self.replies[record.sample_id] = replies
        assert best is not None
        return best


def _step_back(html: str, xpath: str) -> tuple[str, str] | None:
    """The longest prefix of `xpath` (cut at its `/` steps) that selects an element on the page
    `html`, and that element's HTML (evaluated in `xpath_worker`, with its deadline)."""
    steps = [m.start() for m in re.finditer(r"(?<!/)/(?!/)|//", xpath[: xpath_worker.MAX_XPATH])]
    return xpath_worker.RUNNER.step_back(html, xpath, steps[1:])


class AutoScraperLLM:
    """Progressive XPath generation per attribute: propose, run, step back to a node, retry on its HTML."""

    name = "AutoScraper"

    def __init__(
        self,
        model: ChatModel,
        *,
        steps: int = 3,
        html_chars: int = 4000,
        max_tokens: int = 96,
        prefill: bool = True,
        seed: int = 0,
    ):
        self.model, self.steps, self.html_chars, self.max_tokens = model, steps, html_chars, max_tokens
        self.prefill, self.seed = prefill, seed
        self.replies: dict[str, list[str]] = {}

    def build(self, record: Record, url: str, html: str) -> Wrapper:
        """Per attribute: propose an XPath, run it, step back and retry on a smaller node."""
        kinds = _kinds(record)
        xpaths, replies = {}, []
        for a in record.attribute:
            shown, where = compact_html(html, self.html_chars), "the page"
            xp, feedback = "", ""
            for _ in range(self.steps):
                msg = (
                    f"HTML of {where}:\n{shown}\n\nQuery: {record.query}\n{feedback}"
                    f"Write one XPath (absolute, for the whole page) for {a} ({_hint((a,))}) "
                    "that also works on other pages with the same template. "
                    "Answer with the XPath only."
                )
                reply = ask(
                    self.model,
                    [{"role": "system", "content": SYSTEM}, {"role": "user", "content": msg}],
                    max_tokens=self.max_tokens,
                    seed=self.seed,
                    prefix="XPath: /" if self.prefill else "",
                )
                replies.append(reply)
                xp = parse_xpath(reply)
                values, err = run_xpath(html, xp, kinds[a])
                if values and not err:
                    break
                feedback = f"Your last XPath {xp!r} {'is invalid' if err else 'selected nothing'}. "
                back = _step_back(html, xp) if xp and not err else None
                if back is not None:  # step back: show only the deepest node the XPath still reaches
                    prefix, node_html = back
                    shown = " ".join(node_html.split())[: self.html_chars]
                    where = f"the node {prefix} (the deepest step of your XPath that selects something)"
            xpaths[a] = xp
        self.replies[record.sample_id] = replies
        return Wrapper(xpaths, kinds)


_WORD = re.compile(r"[a-z0-9]+")


class ClassNameHeuristic:
    """A non-privileged heuristic: per attribute, the class whose words overlap the attribute name's
    most, among the elements of the kind the name suggests (ties: the most common class); the XPath is
    `//tag[@class='c']`, its first match unless the query asks for many. No truth, no model."""

    name = "class-name heuristic (no truth, no model)"

    def build(self, record: Record, url: str, html: str) -> Wrapper:
        """The class-matched XPath for each attribute (empty where no class shares a word)."""
        from iclr26.liveweb_ie.replies import asks_for_many
        from iclr26.liveweb_ie.wrapper import parse_html

        tree = parse_html(html)
        many = asks_for_many(record.query)
        xpaths = {}
        for a in record.attribute:
            kind = default_kind(a)
            want = set(_WORD.findall(a.lower()))
            path = {"image": "//body//img", "link": "//body//a[@href]"}.get(kind, "//body//*[text()]")
            counts: dict[tuple[str, str], int] = {}
            for e in tree.xpath(path):
                cls = e.get("class") or ""
                if cls and "'" not in cls and want & set(_WORD.findall(cls.lower())):
                    counts[(e.tag, cls)] = counts.get((e.tag, cls), 0) + 1
            if not counts:
                xpaths[a] = ""
                continue
            tag, cls = max(counts, key=lambda tc: (len(want & set(_WORD.findall(tc[1].lower()))), counts[tc]))
            xp = f"//{tag}[@class='{cls}']"
            xpaths[a] = xp if many else f"({xp})[1]"
        return Wrapper(xpaths, _kinds(record))


class RuleBased:
    """PyPI's autoscraper learnt from the first page's values (no model); extraction with its best rule.
    It learns from first-page ground truth, which no other method gets."""

    name = "autoscraper (rules; learns from first-page ground truth)"

    def __init__(self, groundtruth: Any):
        self.groundtruth = groundtruth  # (record, attribute) -> the first page's values

    def build(self, record: Record, url: str, html: str) -> _AutoScraperWrapper:
        """One autoscraper per attribute, learnt from the first page's values."""
        from autoscraper import AutoScraper

        scrapers = {}
        for a in record.attribute:
            wanted = self.groundtruth(record, a)
            scraper = AutoScraper()
            if wanted:
                with warnings.catch_warnings():  # see _AutoScraperWrapper.extract
                    warnings.simplefilter("ignore", DeprecationWarning)
                    scraper.build(html=html, wanted_list=list(dict.fromkeys(wanted)))
                    _keep_best_rule(scraper, html, wanted)
            scrapers[a] = scraper
        return _AutoScraperWrapper(scrapers)


def _keep_best_rule(scraper: Any, html: str, wanted: list[str]) -> None:
    """Keep the learnt rule whose result on the first page matches its values best (via keep_rules)."""
    grouped = scraper.get_result_similar(html=html, grouped=True, unique=False, keep_order=True)
    if not grouped:
        return
    best = max(grouped, key=lambda rule: (prf(grouped[rule], wanted).f1, -len(json.dumps(rule))))
    scraper.keep_rules([best])


class _AutoScraperWrapper:
    def __init__(self, scrapers: dict[str, Any]):
        self.scrapers = scrapers
        self.errors: list[str] = []

    def extract(self, html: str) -> dict[str, list[str]]:
        """Each attribute's values by its kept rule (in page order, repeats kept)."""
        out = {}
        with warnings.catch_warnings():  # autoscraper calls bs4 APIs that bs4 has deprecated
            warnings.simplefilter("ignore", DeprecationWarning)
            for a, s in self.scrapers.items():
                out[a] = (
                    [v for v in s.get_result_similar(html=html, unique=False, keep_order=True) if v]
                    if s.stack_list
                    else []
                )
        return out

    def json(self) -> dict[str, Any]:
        """The kept rules' ids, for wrappers.json."""
        return {"rules": {a: [r["stack_id"] for r in s.stack_list] for a, s in self.scrapers.items()}}


class Oracle:
    """The generator's XPaths for the layout served at build time (the upper bound; not a model)."""

    name = "oracle"

    def __init__(self, sites: dict[str, Site], version: int):
        self.by_website = {s.website: s for s in sites.values()}
        self.version = version

    def build(self, record: Record, url: str, html: str) -> Wrapper:
        """The generator's XPaths for the record's group and attributes."""
        site = self.by_website[record.website]
        group = site.group(record.group_id)
        xps = oracle_xpaths(group, layout_of(self.version))
        kinds = {f.name: f.kind for f in group.fields}
        return Wrapper({a: xps[a] for a in record.attribute}, {a: kinds[a] for a in record.attribute})
