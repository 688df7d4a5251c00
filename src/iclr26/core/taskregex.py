"""Regular expressions written in task files, run with a size cap and a time limit.

A task file's pattern is its author's text, and the text it reads is often the agent's (a document
it edited, an app's state). Python's `re` has no time limit: a pattern such as `(a|aa)+$` on forty
`a`s runs for minutes. These functions run the pattern with the `regex` module (the syntax of `re`)
and its `timeout`, refuse a pattern over `MAX_PATTERN` characters, and read at most `MAX_TEXT`
characters; a pattern that does not compile or runs out of time raises `PatternError`, naming it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import regex

from iclr26.core.errors import UserError

MAX_PATTERN = 2000  # characters
MAX_TEXT = 1_000_000  # characters of text a pattern reads
TIMEOUT_S = 0.25  # per call; a task's pattern on a document takes milliseconds


class PatternError(UserError):
    """A task's regular expression is too long, does not compile, or ran out of time."""


def _run(op: str, pattern: Any, string: Any, flags: int) -> Any:
    if not isinstance(pattern, str):
        raise PatternError(f"a pattern must be text, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN:
        raise PatternError(f"a pattern is at most {MAX_PATTERN} characters, got {len(pattern)}")
    if isinstance(string, str):
        string = string[:MAX_TEXT]
    try:
        return getattr(regex, op)(pattern, string, flags=flags, timeout=TIMEOUT_S)
    except regex.error as e:
        raise PatternError(f"pattern {pattern[:80]!r} is not a regular expression: {e}") from None
    except TimeoutError:
        raise PatternError(
            f"pattern {pattern[:80]!r} ran over {TIMEOUT_S:g} s on {len(string)} characters"
        ) from None


def search(pattern: str, string: str, flags: int = 0) -> Any:
    """`re.search`, bounded."""
    return _run("search", pattern, string, flags)


def match(pattern: str, string: str, flags: int = 0) -> Any:
    """`re.match`, bounded."""
    return _run("match", pattern, string, flags)


def fullmatch(pattern: str, string: str, flags: int = 0) -> Any:
    """`re.fullmatch`, bounded."""
    return _run("fullmatch", pattern, string, flags)


def findall(pattern: str, string: str, flags: int = 0) -> Any:
    """`re.findall`, bounded."""
    return _run("findall", pattern, string, flags)


RE = SimpleNamespace(
    search=search, match=match, fullmatch=fullmatch, findall=findall, IGNORECASE=regex.I, I=regex.I
)
"""What a task's code sees as the module `re`: the four functions above and the case flag."""
