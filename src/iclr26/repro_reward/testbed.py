"""An overthinking testbed on the `rlvr` arithmetic tasks.

The warm-start data append 0..`max_rechecks` re-check lines after the scratchpad, each a copy of
an earlier column line marked `c:` (`7+9+0=16` → `c:7+9+0=16`):

    Q:347+589
    7+9+0=16
    4+8+1=13
    3+5+1=9
    c:4+8+1=13        ← re-checks: the answer was already determined by the line above
    A:936

so the pretrained policy "keeps thinking" after its answer is fixed, as an LLM that re-verifies
does. Overthinking of a completion = the tokens of its reasoning lines after the `level`-th one
(the last column line) and before the `A:` line; for the character policy, one token a character.

A pretrained chat model writes prose in the natural prompt style (`rlvr.tasks`). There the answer
is determined where the response first states its final answer (the number the lenient reader
takes, `rlvr.answers.final_number`), and overthinking is the text after that statement, up to the
last "Answer" marker (the answer line itself is not overthinking).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import numpy as np

from iclr26.core.validation import check_int, check_interval
from iclr26.rlvr.answers import final_number
from iclr26.rlvr.tasks import Problem

RECHECK = "c:"


def with_rechecks(problem: Problem, rng: np.random.Generator, p: float, max_rechecks: int) -> Problem:
    """`problem` whose worked solution ends with 1..max_rechecks re-check lines, with probability p."""
    check_interval("p", p, 0, 1)
    check_int("max_rechecks", max_rechecks, 1)
    if rng.random() >= p:
        return problem
    k = int(rng.integers(1, max_rechecks + 1))
    picks = rng.integers(0, len(problem.steps), size=k)
    return dataclasses.replace(problem, steps=(*problem.steps, *(RECHECK + problem.steps[i] for i in picks)))


def overthinking_tokens(problem: Problem, completion: str, count: Callable[[str], int] = len) -> int:
    """Tokens of the reasoning after the answer is determined: for the scratchpad, the lines after
    the last column line (the `level`-th) and before `A:`; for prose, the text after the first
    statement of the final answer, up to the last "Answer" marker. `count` maps text to tokens
    (default: characters, the character policy's tokens)."""
    if problem.style == "natural":
        return count(_after_first_answer(completion))
    lines = completion.split("\n")
    end = next((i for i, line in enumerate(lines) if line.startswith("A:")), len(lines))
    return sum(count(line) + 1 for line in lines[problem.level : end])


def _after_first_answer(completion: str) -> str:
    """The text between the first standalone mention of the final answer and the last "Answer"
    marker after it (or the end), thousands separators dropped; empty without a final answer."""
    final = final_number(completion)
    if final is None:
        return ""
    text = completion.replace(",", "")
    first = re.search(rf"(?<!\d){re.escape(str(final))}(?!\d)", text)
    if first is None:
        return ""
    marks = [m.start() for m in re.finditer("answer", text, re.IGNORECASE) if m.start() >= first.end()]
    return text[first.end() : marks[-1] if marks else len(text)]
