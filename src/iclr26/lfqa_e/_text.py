"""Plain-text helpers for the built-here comparison set: prose sentences out of the reST-like text
of Python's own documentation topics (`pydoc_data.topics`), and a sentence splitter whose output
joins back with single spaces and splits again into the same sentences."""

from __future__ import annotations

import re

_UNDERLINE = re.compile(r"^\s*([*=\-~^\"'`#+])\1{2,}\s*$")
_FOOTNOTE = re.compile(r"\s*\[\d+\]")
_EMPHASIS = re.compile(r"\*{1,2}([^*\s][^*]*?)\*{1,2}")
_BOUNDARY = re.compile(r"(?<=[.!?])\s+")
_ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "cf.", "approx.", "resp.")
_SKIP_STARTS = ("See ", "Changed in", "New in", "Added in", "Deprecated", "Note:", "Warning:")
_DEICTIC = re.compile(
    r"\b(below|above|following|previous|sections?|table|example|described in|as follows|FAQ)\b", re.IGNORECASE
)
_SUBJECTLESS = ("Called ", "Can ", "Return ", "Returns ", "Suspend ", "Same as ")


def split_sentences(text: str) -> list[str]:
    """The sentences of one line of prose: a break after `.`, `!` or `?` and white space, except
    after a few abbreviations (`e.g.`, `i.e.`, ...)."""
    text = " ".join(text.split())
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        head = text[start : m.start()]
        if head.endswith(_ABBREVIATIONS) or head.split()[-1] in _ABBREVIATIONS:
            continue
        out.append(head)
        start = m.end()
    out.append(text[start:])
    return [s for s in out if s]


def join_sentences(sentences: list[str]) -> str:
    """One paragraph from sentences (the inverse of `split_sentences` on its own output)."""
    return " ".join(sentences)


def title_of(raw: str) -> str:
    """A topic's heading: its first line, when an underline follows it."""
    lines = raw.strip("\n").splitlines()
    if len(lines) >= 2 and _UNDERLINE.match(lines[1]):
        return lines[0].strip()
    return ""


def blocks(raw: str) -> list[str]:
    """The topic text cut at blank lines (raw, markup kept)."""
    return [b for b in re.split(r"\n\s*\n", raw.strip("\n")) if b.strip()]


def _looks_like_prose(block: str) -> bool:
    lines = block.splitlines()
    if any(_UNDERLINE.match(ln) for ln in lines):  # a heading with its underline
        return False
    first = lines[0]
    if first.lstrip().startswith(("+", "|", "* ", "- ", ">>>", "..", "#")) or re.match(r"\s*\d+\.\s", first):
        return False
    if "::=" in block or ">>>" in block:
        return False
    indent = len(first) - len(first.lstrip())
    if any(len(ln) - len(ln.lstrip()) != indent for ln in lines if ln.strip()):
        return False  # ragged indentation: code, or a definition-list term with its body
    text = " ".join(block.split())
    if indent and not text.endswith("."):
        return False
    words = text.split()
    wordy = sum(bool(re.fullmatch(r"[A-Za-z][a-z\-’']*[,;.]?", w)) for w in words)
    return len(words) >= 6 and wordy >= 0.6 * len(words)


def clean(text: str) -> str:
    """Prose with the markup taken out: footnote marks, `*emphasis*`, curly apostrophes, runs of
    white space."""
    text = re.sub(r"(?<=[a-z]-)\n\s*", "", text)  # a word hyphenated across a line break
    text = _FOOTNOTE.sub("", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = text.replace("’", "'").replace("“", '"').replace("”", '"')
    return " ".join(text.split())


def is_key_fact(sentence: str) -> bool:
    """Whether a sentence reads as a self-contained statement fit for a long-form answer."""
    words = sentence.split()
    if not 6 <= len(words) <= 45 or not sentence.endswith("."):
        return False
    if not (sentence[0].isalnum() or sentence[0] == '"'):
        return False
    if sentence.startswith(_SKIP_STARTS + _SUBJECTLESS) or _DEICTIC.search(sentence) or "?" in sentence:
        return False
    if sentence.count('"') % 2 or sentence.count("(") != sentence.count(")"):
        return False
    if ":" in sentence.replace('":"', "") or "::" in sentence:
        return False
    quoted = sum(len(q) for q in re.findall(r'"[^"]*"', sentence))
    return quoted <= 0.4 * len(sentence)


def prose_sentences(raw: str) -> list[tuple[int, str]]:
    """(block index, sentence) for every key-fact sentence of a topic, in document order."""
    out = []
    for i, block in enumerate(blocks(raw)):
        if i == 0 and title_of(raw):
            continue
        if not _looks_like_prose(block):
            continue
        for s in split_sentences(clean(block)):
            if is_key_fact(s):
                out.append((i, s))
    return out
