"""Candidate pools of known quality for the refinement study: scripted proposers (no model).

Each scripted proposer returns the gold solution with probability p, else a perturbed one whose
final answer is wrong. The wrong answers of a question come from two fixed perturbations, so two wrong
candidates agree half the time: a majority can form around a wrong answer, which is the case the
paper's "anchor repair beats averaging" is about. Every candidate has the same wording; only the
stated result and the final answer differ, so whatever picks or repairs a candidate must judge the
answer itself (the scripted texts carry no worked steps to check).

- numeric: the wrong results are the gold value × 10 (a unit slip) and × 0.8 (a wrong constant),
  both outside the grader's 1% tolerance and written as the gold answers are (6 significant digits);
- multiple choice: two other option letters, drawn once per question;
- exact-string answers have no natural perturbation and are left out (`perturbable`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from iclr26.core.errors import UserError
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_int, check_interval
from iclr26.sci_refine.question import Question

LETTERS = "ABCDEFGHIJ"
NUMERIC_SLIPS = (10.0, 0.8)
"""the two perturbations of a numeric answer: a unit slip and a wrong constant"""
GOLD_FORMAT = ".6g"
"""how the built-here set writes a numeric gold answer; wrong answers are written the same way"""


def perturbable(q: Question) -> bool:
    """Numeric (with a number as gold) and multiple-choice questions (with at least 3 options)."""
    if q.answer_type == "multiple_choice":
        return len(q.choices) >= 3
    if q.answer_type == "numeric":
        try:
            float(q.gt)
        except ValueError:
            return False
        return float(q.gt) != 0.0
    return False


def wrong_answers(q: Question, seed: int) -> tuple[str, str]:
    """The question's two wrong answers (fixed per question and seed)."""
    if not perturbable(q):
        raise UserError(f"question {q.id}: a {q.answer_type} answer cannot be perturbed")
    if q.answer_type == "numeric":
        x = float(q.gt)
        return format(x * NUMERIC_SLIPS[0], GOLD_FORMAT), format(x * NUMERIC_SLIPS[1], GOLD_FORMAT)
    rng = random.Random(derive_seed(seed, "wrong", q.id))
    others = [LETTERS[i] for i in range(len(q.choices)) if LETTERS[i] != q.gt.strip().upper()]
    a, b = rng.sample(others, 2)
    return a, b


def solution_text(q: Question, answer: str) -> str:
    """A scripted proposer's solution that states `answer` (the same wording for every answer)."""
    unit = f" {q.unit}" if q.unit and q.answer_type == "numeric" else ""
    if q.answer_type == "multiple_choice":
        i = LETTERS.index(answer)
        result = f"the option that fits is {answer} ({q.choices[i]})"
    else:
        result = f"the result is {answer}{unit}"
    return f"I work through the question step by step; {result}.\nAnswer: {answer}"


@dataclass(frozen=True)
class Pool:
    """One question's candidate pool: the texts and which of them are gold."""

    candidates: tuple[str, ...]
    good: tuple[bool, ...]

    @property
    def n_good(self) -> int:
        """How many candidates state the gold answer."""
        return sum(self.good)


def scripted_pool(q: Question, p: float, size: int, seed: int) -> Pool:
    """`size` scripted proposers on `q`: each gold with probability `p`, else one of the two wrong
    answers at random (seeded by question, p and seed: every arm sees the same pool)."""
    check_interval("p", p, 0.0, 1.0)
    check_int("size", size, 1, 20)
    wrong = wrong_answers(q, seed)
    rng = random.Random(derive_seed(seed, "pool", q.id, f"{p:.6g}"))
    good, texts = [], []
    for _ in range(size):
        ok = rng.random() < p
        good.append(ok)
        texts.append(solution_text(q, q.gt.strip() if ok else rng.choice(wrong)))
    return Pool(tuple(texts), tuple(good))


@dataclass(frozen=True)
class PoolsConfig:
    """The refinement-on-known-pools study (`experiment=pools`): scripted proposers, then selector-only,
    majority vote, HSR + selector and QAIR on the same pools."""

    p: tuple[float, ...] = (0.25, 0.5, 0.75)
    """probabilities that a scripted proposer returns the gold solution (units: questions × p)"""
    size: int = 3
    """candidates per pool (scripted proposers)"""
    n_questions: int = 6
    """questions: the first numeric or multiple-choice questions of the built-here set"""

    def __post_init__(self) -> None:
        if not self.p:
            raise UserError("pools.p: name at least one probability")
        for v in self.p:
            check_interval("pools.p", v, 0.0, 1.0)
        check_int("pools.size", self.size, 2, 20)
        check_int("pools.n_questions", self.n_questions, 1)
