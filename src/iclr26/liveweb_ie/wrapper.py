"""Wrappers: per-attribute XPaths made on a group's first page and applied to its other pages.

XPaths are evaluated by lxml on the page's HTML, never run as code, in a child process with a
deadline per XPath (`xpath_worker`). A result node is read as its
attribute kind asks: a string result (`.../@href`, `text()`) as it is; an element as its text
(text), its `src` or its first descendant image's (image), its `href` or its first descendant
link's (link). An XPath lxml rejects, or one past the deadline, extracts nothing and is logged
(`Wrapper.errors`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from iclr26.liveweb_ie.xpath_worker import MAX_XPATH, RUNNER, node_value, parse_html

__all__ = ["MAX_XPATH", "Extractor", "Wrapper", "node_value", "parse_html", "run_xpath"]

log = logging.getLogger(__name__)


class Extractor(Protocol):
    """Anything that turns a page's HTML into attribute -> values (a wrapper)."""

    def extract(self, html: str) -> dict[str, list[str]]:
        """Attribute -> values found in `html`."""
        ...


def run_xpath(html: str, xpath: str, kind: str) -> tuple[list[str], str | None]:
    """(values, error): the XPath's values on the page `html`; an invalid XPath, or one that runs
    past `xpath_worker.DEADLINE_S`, gives ([], the reason)."""
    return RUNNER.run(html, xpath, kind)


@dataclass
class Wrapper:
    """Attribute -> XPath, applied with lxml; `errors` logs the invalid XPaths met."""

    xpaths: dict[str, str]
    kinds: Mapping[str, str]
    errors: list[str] = field(default_factory=list)

    def extract(self, html: str) -> dict[str, list[str]]:
        """Attribute -> values of its XPath on `html`; an invalid XPath gives [] and is logged once."""
        out = {}
        for attr, xp in self.xpaths.items():
            values, err = run_xpath(html, xp, self.kinds.get(attr, "text"))
            if err and err not in self.errors:
                self.errors.append(err)
                log.info("wrapper %s: %s", attr, err)
            out[attr] = values
        return out

    def json(self) -> dict[str, Any]:
        """The XPaths and the errors met, for wrappers.json."""
        return {"xpaths": dict(self.xpaths), "errors": list(self.errors)}
