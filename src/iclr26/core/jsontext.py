"""JSON objects inside a model's free-text reply: the balanced `{...}` spans (braces inside
double-quoted strings ignored) and the ones that parse as objects. Model output is only parsed here,
never evaluated."""

from __future__ import annotations

import json
from typing import Any


def balanced_spans(text: str) -> list[str]:
    """Each top-level balanced `{...}` span of `text`, in order."""
    out: list[str] = []
    depth, start, in_str, esc = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append(text[start : i + 1])
    return out


def json_objects(text: str, *, single_quotes: bool = False) -> list[dict[str, Any]]:
    """The balanced spans of `text` that parse as JSON objects; with `single_quotes`, a span that does
    not parse is tried again with ' read as " (small models write Python-style dicts)."""
    out = []
    for span in balanced_spans(text):
        for candidate in (span, span.replace("'", '"')) if single_quotes else (span,):
            try:
                value = json.loads(candidate)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                out.append(value)
            break
    return out
