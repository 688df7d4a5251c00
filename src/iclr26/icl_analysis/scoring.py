"""Reading a label out of a model's reply, and the paper's two scoring modes: "punish" (a reply
that does not parse counts as wrong) and "drop" (it is left out of the accuracy)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from iclr26.core.validation import check_in

MODES = ("punish", "drop")
_INT = re.compile(r"-?\d+")


def parse_reply(reply: str, *, reasoning: bool, binary: bool) -> int | None:
    """The integer answer in `reply`, or None. A label reply is read from its first word; a
    reasoning reply from the last integer after its last 'answer is' (sign and all digits, where
    the authors kept only the last digit). Binary tasks accept only 0 and 1."""
    text = reply.strip().lower()
    if reasoning:
        _head, sep, tail = text.rpartition("answer is")
        found = _INT.findall(tail if sep else text)
        value = int(found[-1]) if found else None
    else:
        first = text.replace("<s>", "").strip().split()
        word = first[0].strip(".,:;!\"'()[]*") if first else ""
        value = int(word) if _INT.fullmatch(word) else None
    if value is not None and binary and value not in (0, 1):
        return None
    return value


@dataclass(frozen=True)
class Score:
    """Accuracy (%) of one cell in both modes, and how often the reply did not parse."""

    n: int
    parsed: int
    correct: int

    @property
    def punish(self) -> float:
        """Accuracy counting unparsed replies as wrong."""
        return 100.0 * self.correct / self.n if self.n else 0.0

    @property
    def drop(self) -> float:
        """Accuracy over parsed replies only (0 when none parsed, as the paper)."""
        return 100.0 * self.correct / self.parsed if self.parsed else 0.0

    @property
    def failure_rate(self) -> float:
        """Percent of replies that did not parse."""
        return 100.0 * (self.n - self.parsed) / self.n if self.n else 0.0

    def accuracy(self, mode: str) -> float:
        """The accuracy in scoring mode `mode` ("punish" or "drop")."""
        return self.punish if check_in("mode", mode, MODES) == "punish" else self.drop


def score(predictions: Sequence[int | None], labels: Sequence[int]) -> Score:
    """Score predictions (None: did not parse) against labels."""
    if len(predictions) != len(labels):
        raise ValueError(f"{len(predictions)} predictions for {len(labels)} labels")
    parsed = [(p, y) for p, y in zip(predictions, labels, strict=True) if p is not None]
    return Score(len(labels), len(parsed), sum(p == y for p, y in parsed))
