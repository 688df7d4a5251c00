"""Wrappers: per-attribute XPaths made on a group's first page and applied to its other pages.

XPaths are evaluated by lxml on the page's HTML, never run as code. A result node is read as its
attribute kind asks: a string result (`.../@href`, `text()`) as it is; an element as its text
(text), its `src` or its first descendant image's (image), its `href` or its first descendant
link's (link). An XPath lxml rejects extracts nothing and is logged (`Wrapper.errors`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from lxml import etree
from lxml import html as lxml_html

log = logging.getLogger(__name__)
MAX_XPATH = 1000  # characters; a longer model output is not an XPath


class Extractor(Protocol):
    """Anything that turns a page's HTML into attribute -> values (a wrapper)."""

    def extract(self, html: str) -> dict[str, list[str]]:
        """Attribute -> values found in `html`."""
        ...


def parse_html(html: str) -> Any:
    """lxml's element tree of a page (an empty page gives an empty <html>)."""
    try:
        return lxml_html.fromstring(html or "<html></html>")
    except (etree.ParserError, ValueError):
        return lxml_html.fromstring("<html></html>")


def _text(el: Any) -> str:
    return " ".join("".join(el.itertext()).split())


def node_value(node: Any, kind: str) -> str:
    """The value of one XPath result for an attribute of `kind` (text, image, link)."""
    if isinstance(node, str | bytes):  # an attribute or text() result (lxml's smart strings)
        return " ".join(str(node).split())
    if isinstance(node, bool | int | float):
        return str(node)
    if not isinstance(node, etree._Element):
        return ""
    if kind == "image":
        if node.tag == "img":
            return node.get("src", "")
        img = node.find(".//img")
        return img.get("src", "") if img is not None else ""
    if kind == "link":
        if node.tag == "a":
            return node.get("href", "")
        a = node.find(".//a[@href]")
        return a.get("href", "") if a is not None else _text(node)
    return _text(node)


def run_xpath(tree: Any, xpath: str, kind: str) -> tuple[list[str], str | None]:
    """(values, error): the XPath's values on `tree`; an invalid XPath gives ([], the reason)."""
    if not xpath or not xpath.strip():
        return [], "empty XPath"
    if len(xpath) > MAX_XPATH:
        return [], f"XPath longer than {MAX_XPATH} characters"
    try:
        result = tree.xpath(xpath)
    except (etree.XPathError, ValueError, TypeError) as e:
        return [], f"invalid XPath {xpath[:120]!r}: {e}"
    nodes = result if isinstance(result, list) else [result]
    values = [node_value(n, kind) for n in nodes]
    return [v for v in values if v], None


@dataclass
class Wrapper:
    """Attribute -> XPath, applied with lxml; `errors` logs the invalid XPaths met."""

    xpaths: dict[str, str]
    kinds: Mapping[str, str]
    errors: list[str] = field(default_factory=list)

    def extract(self, html: str) -> dict[str, list[str]]:
        """Attribute -> values of its XPath on `html`; an invalid XPath gives [] and is logged once."""
        tree = parse_html(html)
        out = {}
        for attr, xp in self.xpaths.items():
            values, err = run_xpath(tree, xp, self.kinds.get(attr, "text"))
            if err and err not in self.errors:
                self.errors.append(err)
                log.info("wrapper %s: %s", attr, err)
            out[attr] = values
        return out

    def json(self) -> dict[str, Any]:
        """The XPaths and the errors met, for wrappers.json."""
        return {"xpaths": dict(self.xpaths), "errors": list(self.errors)}
