"""The records every part of sci_refine shares: a question with its gold answer, and a corpus passage."""

from __future__ import annotations

from dataclasses import dataclass

ANSWER_TYPES = ("exact", "multiple_choice", "numeric")
"""exact: normalised string match; multiple_choice: the option letter; numeric: within a tolerance"""


@dataclass(frozen=True)
class Question:
    """One question with a gold answer (the authors' JSON fields id, query, gt, category, answer_type)."""

    id: str
    """unique within its set"""
    query: str
    """the question as shown to the model (options included for multiple choice)"""
    gt: str
    """the gold answer as text: the option letter, the string, or the number"""
    answer_type: str
    """one of ANSWER_TYPES"""
    category: str = ""
    """subject, e.g. physics, chemistry, biology"""
    needs_retrieval: bool | None = None
    """True: the answer needs a fact from the corpus; False: reasoning only; None: unknown (loaded sets)"""
    choices: tuple[str, ...] = ()
    """multiple choice: the options' texts, lettered A, B, C, ... in order"""
    rel_tol: float = 0.0
    """numeric: the relative tolerance a prediction may be off by"""
    unit: str = ""
    """numeric: the unit the answer is asked in (empty: none)"""
    evidence: tuple[str, ...] = ()
    """ids of the corpus passages that hold the facts the answer needs (built-here set only)"""


@dataclass(frozen=True)
class Passage:
    """One corpus paragraph."""

    id: str
    """unique within its corpus"""
    text: str
    """the paragraph"""
    topic: str = ""
    """what it is about (an element, a constant, a codon table, ...); distractors have topics too"""
