"""What every task is: a probabilistic automaton P that writes strings, its OOD perturbation Q(δ)
with Q(0) = P, an independent checker of the label, and the seeded, balanced, noisy splits.

The paper's protocol (Sec. 3): each task is a formal language; a generator walks an automaton with
transition probabilities P to write positive and negative strings; 5% of labels are flipped; the
in-distribution (ID) split has 3k train and 2k test items drawn from P, and each out-of-distribution
(OOD) split draws from Q(δ), δ ∈ {0.2, 0.45, 0.65, 0.85}.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_int, check_interval

DELTAS: tuple[float, ...] = (0.2, 0.45, 0.65, 0.85)
NOISE = 0.05  # the fraction of labels flipped (the paper's 5%)


@dataclass(frozen=True)
class Item:
    """One labelled string. `query` is what the model sees (the entry itself, except VM-Sum, whose
    query leaves out the final balance); `clean_label` is the label before the 5% noise."""

    entry: str
    label: int
    delta: float = 0.0
    index: int = 0
    query: str = ""
    clean_label: int | None = None

    @property
    def shown(self) -> str:
        """The text put in front of the model for this item."""
        return self.query or self.entry

    @property
    def is_ood(self) -> bool:
        return self.delta > 0


def kl_rows(p: Sequence[Sequence[float]], q: Sequence[Sequence[float]]) -> float:
    """Mean over states of KL(P_s || Q_s), each row normalised; the distance the OOD shift moves the
    generator's transition probabilities (0 exactly when Q = P)."""
    total = 0.0
    for row_p, row_q in zip(p, q, strict=True):
        sp, sq = sum(row_p), sum(row_q)
        for a, b in zip(row_p, row_q, strict=True):
            if a > 0:
                if b <= 0:
                    return math.inf
                total += (a / sp) * math.log((a / sp) / (b / sq))
    return total / len(p)


class Task(ABC):
    """A task family. Subclasses set `name` and `binary` and implement `sample`, `check` and
    `transitions`; `generate` and `splits` are shared."""

    name: ClassVar[str] = ""
    binary: ClassVar[bool] = True
    description: ClassVar[str] = ""  # one line: what decides the label (our wording)

    @abstractmethod
    def transitions(self, delta: float) -> list[list[float]]:
        """The generator's probability rows under Q(δ) (Q(0) = P), one row per state."""

    @abstractmethod
    def sample(self, rng: random.Random, delta: float, positive: bool) -> str | None:
        """One string from the positive (or negative) generator under Q(δ), or None when rejected."""

    @abstractmethod
    def check(self, entry: str) -> int:
        """The label computed directly from the string (independent of the generator)."""

    def query(self, entry: str) -> str:
        """What the model is shown for `entry` (the entry itself, but for VM-Sum)."""
        return entry

    def noisy(self, label: int, rng: random.Random) -> int:
        """A flipped label (binary tasks); VM-Sum overrides it."""
        return 1 - label

    def kl(self, delta: float) -> float:
        """KL(P || Q(δ)) averaged over the generator's states."""
        return kl_rows(self.transitions(0.0), self.transitions(delta))

    def generate(self, n: int, delta: float, rng: random.Random, *, start_index: int = 0) -> list[Item]:
        """`n` distinct items under Q(δ): half positive, half negative (binary tasks), shuffled, each
        label flipped with probability 5% (the flip is drawn after the string, from the same rng)."""
        check_int("n", n, 1)
        check_interval("delta", delta, 0.0, 1.0, closed=(True, False))
        want = {1: n // 2 + n % 2, 0: n // 2} if self.binary else {1: n}
        have = {k: 0 for k in want}
        seen: set[str] = set()
        items: list[Item] = []
        attempts = 0
        while len(items) < n:
            attempts += 1
            if attempts > 200 * n:
                raise RuntimeError(f"{self.name}: the generator rejected too many strings at delta={delta}")
            positive = not self.binary or (have[1] < want[1] and (have[1] <= have[0] or have[0] >= want[0]))
            entry = self.sample(rng, delta, positive)
            if entry is None or entry in seen:
                continue
            label = self.check(entry)
            if self.binary and label != int(positive):  # the generator must agree with the checker
                continue
            seen.add(entry)
            key = int(positive) if self.binary else 1
            have[key] += 1
            shown = self.noisy(label, rng) if rng.random() < NOISE else label
            items.append(Item(entry, shown, delta, start_index + len(items), self.query(entry), label))
        rng.shuffle(items)
        return items


@dataclass(frozen=True)
class Splits:
    """One task's data: ID train and test from P, and one OOD test list per δ from Q(δ)."""

    task: str
    train: list[Item]
    test: list[Item]
    ood: dict[float, list[Item]] = field(default_factory=dict)

    def split(self, delta: float) -> list[Item]:
        """The test items at shift δ (0: the ID test split)."""
        if delta == 0:
            return self.test
        if delta not in self.ood:
            raise KeyError(f"{self.task}: no OOD split at delta={delta}; have {sorted(self.ood)}")
        return self.ood[delta]


def make_splits(
    task: Task,
    seed: int = 0,
    *,
    n_train: int = 3000,
    n_test: int = 2000,
    n_ood: int = 3000,
    deltas: Sequence[float] = DELTAS,
) -> Splits:
    """The task's splits, deterministic from `seed`: ID items are drawn together and split into the
    first `n_train` and the next `n_test` (as the paper); each δ has its own seed stream."""
    check_int("n_train", n_train, 1)
    check_int("n_test", n_test, 1)
    check_int("n_ood", n_ood, 0)
    id_items = task.generate(n_train + n_test, 0.0, random.Random(derive_seed(seed, task.name, "id")))
    ood = {}
    for d in deltas:
        check_interval("deltas", d, 0.0, 1.0, closed=(False, False))
        if n_ood:
            rng = random.Random(derive_seed(seed, task.name, "ood", f"{d:g}"))
            ood[float(d)] = task.generate(n_ood, float(d), rng, start_index=n_train + n_test)
    return Splits(task.name, id_items[:n_train], id_items[n_train:], ood)
