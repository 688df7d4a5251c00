"""The page text the HTML-reading methods get, and one model call with an optional reply prefix."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lxml import etree

from iclr26.core.llm import ChatModel, Message
from iclr26.liveweb_ie.wrapper import parse_html

SYSTEM = "You write XPath wrappers that extract data from web pages. Answer briefly, in the format asked."


def compact_html(html: str, max_chars: int) -> str:
    """The page's <body> without scripts, styles and comments, whitespace collapsed, cut at `max_chars`."""
    tree = parse_html(html)
    for bad in tree.xpath("//script | //style | //comment() | //head"):
        parent = bad.getparent()
        if parent is not None:
            parent.remove(bad)
    body = tree.find("body")
    text = etree.tostring(body if body is not None else tree, encoding="unicode", method="html")
    text = re.sub(r">\s+<", "><", re.sub(r"\s+", " ", text))
    return text if len(text) <= max_chars else text[:max_chars] + " ...(cut)"


def ask(
    model: ChatModel,
    messages: Sequence[Message | dict[str, Any]],
    *,
    max_tokens: int,
    seed: int,
    prefix: str = "",
) -> str:
    """One greedy completion; the reply is returned with `prefix` (the text the model continued) in front."""
    reply = model.chat(
        list(messages), max_tokens=max_tokens, temperature=0.0, seed=seed, prefix=prefix or None
    )
    return prefix + reply[0].text
