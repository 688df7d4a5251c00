"""GLoW's reply parsers on hostile model text: the same matches as the original patterns, in linear time.

The original patterns are kept here only, as the reference the rewritten ones must agree with.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr26.glow import prompts as P

OLD_INSIGHT = re.compile(r"^[\s>*_#\-\d.)]*(.{3,}?)\s*(?:->|=>|:|—| - )\s*(.{3,})$", re.M)
OLD_SCORE = re.compile(
    r"^[\s>*_#\-]*(?:candidate|state|option|#)?\s*(\d+)\s*[*_]*\s*[:=)\-.]\s*[*_]*\s*(-?\d+(?:\.\d+)?)",
    re.I | re.M,
)
OLD_ACTION = re.compile(
    r"^[\s>*_#`\-]*(?:next\s+)?(?:action|command)\s*(?:\d+\s*)?[*_]*\s*[:=]\s*(.*)$", re.I | re.M
)

# the characters the patterns treat specially, a Unicode digit and blank, and a few letters
_CHARS = st.sampled_from([*" \n\t>*_#-.)=:—`1٣\xa0\x1cab", "candidate", "state", "action", "next "])
_TEXT = st.lists(_CHARS, max_size=24).map("".join)


@settings(max_examples=1500, deadline=None)
@given(_TEXT)
def test_insight_lines_agree_with_the_original_pattern(text):
    assert P._insight_lines(text) == [m.groups() for m in OLD_INSIGHT.finditer(text)]


@settings(max_examples=1000, deadline=None)
@given(_TEXT)
def test_score_and_action_patterns_agree_with_the_originals(text):
    for new, old in ((P._SCORE_LINE, OLD_SCORE), (P._ACTION, OLD_ACTION)):
        assert [(m.span(), m.groups()) for m in new.finditer(text)] == [
            (m.span(), m.groups()) for m in old.finditer(text)
        ]


@pytest.mark.parametrize(
    ("parse", "reply"),
    [
        (P.parse_reflection, " " * 1000 + "x"),  # the original: 4 s (cubic in the blanks)
        (P.parse_reflection, "1." + " " * 1000 + "ab" + "\n" * 10),
        (lambda r: P.parse_scores(r, 3), "\n" * 900 + "x"),  # the original: 4 s
        (lambda r: P.parse_scores(r, 3), " \n" * 100 + "1:" + " " * 300 + "x"),
        (P.parse_action, "\n" * 12000 + "x"),  # the original: 6 s (quadratic, no length cap)
    ],
)
def test_a_hostile_reply_is_parsed_within_a_second(parse, reply):
    start = time.perf_counter()
    result = parse(reply)
    assert time.perf_counter() - start < 1.0
    assert not result.ok and result.error
