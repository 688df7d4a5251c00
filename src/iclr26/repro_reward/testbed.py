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
"""

from __future__ import annotations

import dataclasses

import numpy as np

from iclr26.core.validation import check_int, check_interval
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


def overthinking_tokens(problem: Problem, completion: str) -> int:
    """Characters of the reasoning lines after the last column line (the `level`-th) and before `A:`."""
    lines = completion.split("\n")
    end = next((i for i, line in enumerate(lines) if line.startswith("A:")), len(lines))
    return sum(len(line) + 1 for line in lines[problem.level : end])
