"""VGS stage 4 without a model: an algorithmic XPath generaliser over the chosen elements of one page.

The chosen elements' paths from the root are aligned step by step (elements whose tag paths differ are
generalised apart and joined with `|`). A step keeps its position only when every chosen element
shares it and, for an attribute with many values, when it is not one of a run of like siblings (same
tag and class: the cards of a list, the rows of a table), so one picked card stands for all. Three
styles:

- `abs`: that path from the root, tags and positions (`/html/body/div[1]/.../h3`);
- `tags`: the shortest tail of it, `//`-anchored, that selects the same nodes on the page (tags and
  positions, no classes: `//article/h3`);
- `classes`: the same with each step's class in place of its position where it has one
  (`//p[@class='price_color']`).

The result is checked on the page it was made on: a tail is kept only if it selects exactly what
the full path selects there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lxml import etree

STYLES = ("abs", "tags", "classes")

Step = tuple[str, int | None, str]  # tag, position among like-tagged siblings (None: any), class


def _position(node: Any) -> int:
    tag = node.tag
    return 1 + sum(1 for s in node.itersiblings(preceding=True) if s.tag == tag)


def _repeated(node: Any) -> bool:
    """Whether `node` is one of several siblings with its tag and class (a run of cards or rows)."""
    parent = node.getparent()
    if parent is None:
        return False
    like = [c for c in parent if c.tag == node.tag and c.get("class") == node.get("class")]
    return len(like) > 1


def _chain(node: Any) -> list[Any]:
    out = []
    while node is not None and isinstance(node.tag, str):
        out.append(node)
        node = node.getparent()
    return out[::-1]


def _aligned(nodes: Sequence[Any], many: bool) -> list[Step]:
    """One step per depth for elements with the same tag path."""
    chains = [_chain(n) for n in nodes]
    steps: list[Step] = []
    for level in zip(*chains, strict=True):
        tag = level[0].tag
        positions = {_position(n) for n in level}
        classes = {(n.get("class") or "").strip() for n in level}
        pos = positions.pop() if len(positions) == 1 else None
        if pos is not None and many and any(_repeated(n) for n in level):
            pos = None
        steps.append((tag, pos, classes.pop() if len(classes) == 1 else ""))
    return steps


def _step(step: Step, classes: bool) -> str:
    tag, pos, cls = step
    if classes and cls and "'" not in cls:
        return f"{tag}[@class='{cls}']"
    return f"{tag}[{pos}]" if pos is not None else tag


def node_key(node: Any) -> str:
    """A stable key of an element (lxml's proxies come and go, so `id` is not one): its path."""
    return node.getroottree().getpath(node)


def _select(tree: Any, xpath: str) -> set[str]:
    try:
        found = tree.xpath(xpath)
    except etree.XPathError:
        return set()
    return {node_key(n) for n in found if isinstance(n, etree._Element)}


def _one(tree: Any, nodes: Sequence[Any], style: str, many: bool) -> str:
    steps = _aligned(nodes, many)
    full = "/" + "/".join(_step(s, False) for s in steps)
    if style == "abs":
        return full
    want = _select(tree, full)
    classes = style == "classes"
    for k in range(1, len(steps) + 1):
        tail = "//" + "/".join(_step(s, classes) for s in steps[-k:])
        if _select(tree, tail) == want:
            return tail
    return full


def generalise(tree: Any, nodes: Sequence[Any], style: str, *, many: bool = False) -> str:
    """One XPath (in `style`: abs, tags or classes) for `nodes`, elements of the page `tree`; "" for none."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")
    groups: dict[tuple[str, ...], list[Any]] = {}
    for n in nodes:
        groups.setdefault(tuple(c.tag for c in _chain(n)), []).append(n)
    return " | ".join(_one(tree, g, style, many) for g in groups.values())
