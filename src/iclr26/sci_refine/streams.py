"""Templated reasoning streams of the paper's length that name the fact they need at a known offset.

A stream is the assistant text of one long reasoning step (1-8k characters): sentences of bookkeeping
and arithmetic that need no looked-up fact, and, ending at a known offset, one sentence that names the
fact the next step needs (an element's standard atomic weight, a CODATA constant's value, a free amino
acid's average mass). The fact's canonical corpus passage is the gold passage and its value as the
corpus writes it is the gold value. The streams are built here, not written by a model: they test the
Monitor stack's detection, querying and injection on text of a known shape, not a model's reasoning.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from iclr26.core.errors import UserError
from iclr26.core.validation import check_int, check_interval
from iclr26.sci_refine import facts as F
from iclr26.sci_refine.dataset import show_number

KINDS = ("element", "constant", "amino")
"""the facts a stream can need, in the order units cycle through them"""
MAX_NAME = 40
"""constants with longer names are left out (the need sentence must fit in one Monitor window)"""


@dataclass(frozen=True)
class Need:
    """The fact a stream needs."""

    key: str
    """the canonical passage's key ('element:Cl', 'constant:Planck constant', 'amino:W')"""
    value: str
    """the gold value as the corpus writes it"""
    question: str
    """the task the stream works on (the user message)"""
    sentence: str
    """the sentence of the stream that names the need"""


@dataclass(frozen=True)
class Stream:
    """One templated stream: its text and where the need sentence sits."""

    text: str
    need: Need
    need_start: int
    """offset of the need sentence's first character"""
    need_end: int
    """offset just past the need sentence"""

    def holds_need(self, end: int, window: int) -> bool:
        """Whether the window `text[end - window:end]` shows the whole need sentence."""
        return self.need_end <= end and self.need_start >= max(0, end - window)


def _need(kind: str, rng: random.Random) -> Need:
    if kind == "element":
        el = rng.choice([e for e in F.elements() if e.mass is not None and e.number <= 86])
        grams = round(rng.uniform(1, 90), 1)
        return Need(
            f"element:{el.symbol}",
            show_number(el.mass),
            f"How many moles of {el.name} atoms are in a {grams} g sample of pure {el.name}?",
            f"To turn the {grams} g sample into moles I now need the standard atomic weight of {el.name}.",
        )
    if kind == "constant":
        c = rng.choice([c for c in F.constants() if len(c.name) <= MAX_NAME and c.unit])
        factor = round(rng.uniform(2, 9), 2)
        return Need(
            f"constant:{c.name}",
            show_number(c.value),
            f"What is {factor} times the {c.name}, in {c.unit}?",
            f"The next step multiplies by the {c.name}, so I need its recommended value in {c.unit}.",
        )
    if kind == "amino":
        aa = rng.choice(list(F.amino_acids()))
        n = rng.randint(2, 9)
        return Need(
            f"amino:{aa.letter}",
            show_number(aa.average_mass),
            f"What is the total average mass of {n} free {aa.code} molecules, in Da?",
            f"To finish the sum I need the average mass of the free amino acid {aa.code}.",
        )
    raise UserError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


def _filler(rng: random.Random) -> str:
    """One sentence of bookkeeping or arithmetic that needs no looked-up fact."""
    a, b = round(rng.uniform(1, 99), 2), round(rng.uniform(1, 99), 2)
    return rng.choice(
        [
            f"Multiplying {a} by {b} gives {a * b:.4g}.",
            f"Adding {a} and {b} gives {a + b:.4g}, which I keep for later.",
            f"Dividing {a} by {b} leaves {a / b:.4g}.",
            f"Subtracting {b} from {a} gives {a - b:.4g}.",
            f"I carry {a} forward without rounding so that no precision is lost.",
            "Let me restate what is known so far before going on.",
            "The units cancel as they should, so the intermediate result is a pure number.",
            "Checking the previous line once more, the arithmetic holds.",
            "I keep every intermediate value to four significant figures.",
            f"As a sanity check, {a} is of the same order as {b}, so nothing is off by a power of ten.",
        ]
    )


def build_stream(kind: str, length: int, seed: int, need_range: tuple[float, float] = (0.3, 0.9)) -> Stream:
    """A stream of about `length` characters that names its need so that the need sentence ends near a
    uniform draw from `need_range` × length (seeded)."""
    check_int("length", length, 200)
    check_interval("need_range[0]", need_range[0], 0.0, 1.0)
    check_interval("need_range[1]", need_range[1], need_range[0], 1.0)
    rng = random.Random(seed)
    need = _need(kind, rng)
    target = int(rng.uniform(*need_range) * length)
    parts = ["Let me work through this step by step."]
    while sum(len(p) + 1 for p in parts) + len(need.sentence) < target:
        parts.append(_filler(rng))
    start = sum(len(p) + 1 for p in parts)
    parts.append(need.sentence)
    end = start + len(need.sentence)
    while sum(len(p) + 1 for p in parts) < length:
        parts.append(_filler(rng))
    text = " ".join(parts)
    assert text[start:end] == need.sentence
    return Stream(text, need, start, end)


@dataclass(frozen=True)
class StreamsConfig:
    """`experiment=streams`: the streams' lengths and number, and the Monitor's schedule on them."""

    lengths: tuple[int, ...] = (1000, 2000, 4000, 8000)
    """stream lengths in characters (the paper's steps run to thousands of characters)"""
    per_length: int = 3
    """streams per length (their fact kinds cycle through element, constant, amino acid)"""
    need_range: tuple[float, float] = (0.3, 0.9)
    """the need sentence ends at a uniform draw from this share of the stream's length"""
    window: int = 512
    """the Monitor's window on these streams (the paper's 512)"""
    overlap: int = 128
    """the windows' overlap (the paper's 128)"""

    def __post_init__(self) -> None:
        if not self.lengths:
            raise UserError("streams.lengths: name at least one length")
        for n in self.lengths:
            check_int("streams.lengths", n, 200, 100_000)
        check_int("streams.per_length", self.per_length, 1)
        check_interval("streams.need_range[0]", self.need_range[0], 0.0, 1.0)
        check_interval("streams.need_range[1]", self.need_range[1], self.need_range[0], 1.0)
        check_int("streams.window", self.window, 16)
        check_int("streams.overlap", self.overlap, 0, self.window - 1)
