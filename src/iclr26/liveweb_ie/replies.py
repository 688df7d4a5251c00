"""Parsers for the models' replies, written for messy output: prose around the answer, code fences,
quotes, numbers spelt out. Each returns what it found or a stated default; none raises on text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from iclr26.agents.actions import ParseError, parse_json_action
from iclr26.liveweb_ie.sites import KINDS

_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    )
}
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)


@dataclass(frozen=True)
class AttributeSpec:
    """Stage 1's reading of one attribute: its kind, whether the page shows many values, a description."""

    name: str
    kind: str
    many: bool
    description: str
    parsed: bool  # False: the defaults were used (the reply did not say)


def default_kind(name: str) -> str:
    """The kind an attribute's name suggests (used when the model does not say)."""
    n = name.lower()
    if any(w in n for w in ("image", "img", "photo", "picture", "thumbnail", "logo")):
        return "image"
    if any(w in n for w in ("link", "url", "href")):
        return "link"
    return "text"


def asks_for_many(query: str) -> bool:
    """Whether a query's wording asks for every value on the page (all, every, each, list ...)."""
    return bool(re.search(r"\b(all|every|each|list|collect|set of)\b", query.lower()))


def parse_attributes(reply: str, attributes: tuple[str, ...], query: str) -> list[AttributeSpec]:
    """Stage 1: `name | kind | one or many | description` lines (any separator, any order)."""
    lines = [ln.strip(" -*\t") for ln in reply.splitlines() if ln.strip()]
    out = []
    for name in attributes:
        key = name.lower().replace("_", " ")
        line = next((ln for ln in lines if name.lower() in ln.lower() or key in ln.lower()), "")
        low = line.lower()
        kind = next((k for k in KINDS if re.search(rf"\b{k}s?\b", low)), None)
        many = (
            True
            if re.search(r"\b(many|multiple|several|list|all)\b", low)
            else False
            if re.search(r"\b(one|single)\b", low)
            else None
        )
        desc = re.split(r"[|:]", line)[-1].strip() if line else ""
        out.append(
            AttributeSpec(
                name,
                kind or default_kind(name),
                asks_for_many(query) if many is None else many,
                desc[:200] or name.replace("_", " "),
                parsed=bool(line) and kind is not None,
            )
        )
    return out


def _numbers(reply: str) -> list[int]:
    found = []
    for tok in re.findall(r"\d+|[a-zA-Z]+", reply):
        if tok.isdigit():
            found.append(int(tok))
        elif tok.lower() in _NUMBER_WORDS:
            found.append(_NUMBER_WORDS[tok.lower()])
    return found


def parse_region(reply: str, n_regions: int) -> int | None:
    """Stage 2: the first region number in range (digits or a number word), or None."""
    return next((k for k in _numbers(reply) if 0 <= k < n_regions), None)


def parse_marks(reply: str, valid: set[int], *, many: bool) -> list[int]:
    """Stage 3: the mark ids named that exist (all of them, or the first when one value is wanted)."""
    ids: list[int] = []
    for k in _numbers(reply):
        if k in valid and k not in ids:
            ids.append(k)
    return ids if many else ids[:1]


def is_xpath(text: str) -> bool:
    """Whether lxml compiles `text` as an XPath."""
    try:
        etree.XPath(text)
    except (etree.XPathSyntaxError, etree.XPathError, ValueError):
        return False
    return True


def _clean(candidate: str) -> str:
    c = candidate.strip().strip("`").strip()
    c = re.sub(r"^(xpath|answer)\s*[:=]\s*", "", c, flags=re.I).strip()
    c = c.rstrip(".,;").strip()
    if len(c) >= 2 and c[0] == c[-1] and c[0] in "\"'":
        c = c[1:-1]
    for q in "\"'":  # an unbalanced quote at either end is punctuation, not part of the XPath
        if c.count(q) % 2:
            c = c.strip(q)
    return c.strip()


def _longest_xpath(text: str) -> str:
    """The longest run of leading words of `text` that compiles as an XPath ("" if none)."""
    words = text.split(" ")
    for k in range(len(words), 0, -1):
        c = _clean(" ".join(words[:k]))
        if c and is_xpath(c):
            return c
    return ""


def parse_xpath(reply: str) -> str:
    """Stage 4 / CoT: the first XPath in the reply (in a fenced block, on its own line, or inline
    after prose); the first that lxml compiles, else the first XPath-looking text, else ""."""
    spans = [b for m in _FENCE.finditer(reply) for b in m.group(1).splitlines()] + reply.splitlines()
    starts = []
    for span in spans:
        c = _clean(span)
        hits = [
            i for i in (c.find("//"), c.find("/html"), 0 if c.startswith(("/", "(", "./")) else -1) if i >= 0
        ]
        if hits:
            starts.append(c[min(hits) :])
    for s in starts:
        found = _longest_xpath(s)
        if found:
            return found
    return _clean(starts[0]) if starts else ""


_MAP_SCHEMA = {"type": "object", "additionalProperties": {"type": "string"}}


def parse_xpath_map(reply: str, attributes: tuple[str, ...]) -> dict[str, str]:
    """CoT / Reflexion: attribute -> XPath from a JSON object or `attribute: xpath` lines ("" if absent)."""
    out = {a: "" for a in attributes}
    try:
        found = parse_json_action(reply, _MAP_SCHEMA).content
        for a in attributes:
            if isinstance(found.get(a), str):
                out[a] = found[a].strip()
    except ParseError:
        pass
    for line in reply.splitlines():
        for a in attributes:
            m = re.search(rf"[\"'`]?\b{re.escape(a)}\b[\"'`]?\s*[:=]\s*(.+)", line, re.I)
            if not out[a] and m:
                out[a] = parse_xpath(m.group(1).rstrip(" ,}").strip())
    return out
