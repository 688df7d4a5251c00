"""Evaluating a chat model on a grid of cells (task × style × shots × δ): greedy replies through
`core.llm` (cached, so an interrupted sweep resumes), both scoring modes, and optionally the
log-probability scorer, which compares the label tokens' log-probs and so separates "does not
know" from "cannot follow the output format"."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from iclr26.core.llm import ChatModel, Message
from iclr26.core.llm.pool import RefusalsAsEmpty, chat_many
from iclr26.core.seeding import derive_seed
from iclr26.icl_analysis.prompts import REASONING, build_messages, exemplars, max_tokens
from iclr26.icl_analysis.scoring import Score, parse_reply, score
from iclr26.icl_analysis.tasks import Splits, Task


@dataclass(frozen=True)
class Cell:
    """One point of the sweep."""

    task: str
    style: str
    shots: int
    delta: float = 0.0
    shuffle: bool = False

    @property
    def key(self) -> str:
        return f"{self.task}-{self.style}-{self.shots}-{self.delta:g}" + ("-shuffled" if self.shuffle else "")


@dataclass(frozen=True)
class CellResult:
    """A cell's scores: replies (both modes) and, when asked, the log-prob scorer's."""

    cell: Cell
    score: Score
    logprob: Score | None
    seconds: float
    replies: tuple[str, ...] = ()
    refused: int = 0  # requests the server refused (e.g. a prompt longer than its context)

    def as_dict(self) -> dict:
        out = {
            "key": self.cell.key,
            "task": self.cell.task,
            "style": self.cell.style,
            "shots": self.cell.shots,
            "delta": self.cell.delta,
            "shuffle": self.cell.shuffle,
            "n": self.score.n,
            "punish": self.score.punish,
            "drop": self.score.drop,
            "failure_rate": self.score.failure_rate,
            "seconds": self.seconds,
            "refused": self.refused,
        }
        if self.logprob is not None:
            out["logprob"] = self.logprob.punish
        return out


def cell_messages(
    task: Task, splits: Splits, cell: Cell, n_items: int, seed: int, system: str | None = None
) -> list[tuple[list[Message], int]]:
    """(messages, label) for the first `n_items` test items of the cell's split."""
    shots = exemplars(splits.train, cell.shots, shuffle=cell.shuffle, seed=derive_seed(seed, cell.key))
    items = splits.split(cell.delta)[:n_items]
    out = []
    for i, item in enumerate(items):
        rng = random.Random(derive_seed(seed, cell.key, i))  # the salads are drawn per query
        out.append((build_messages(task, cell.style, shots, item, rng=rng, system=system), item.label))
    return out


def label_logprob_choice(model: ChatModel, messages: Sequence[Message], top: int = 20) -> int | None:
    """The label (0 or 1) whose token has the higher log-prob as the first reply token, or None
    when neither is among the `top` alternatives."""
    (completion,) = model.chat(messages, max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=top)
    if not completion.logprobs:
        return None
    first = completion.logprobs[0]
    best = {0: -math.inf, 1: -math.inf}
    for token, lp in ((first.token, first.logprob), *first.top):
        word = token.strip()
        if word in ("0", "1"):
            best[int(word)] = max(best[int(word)], lp)
    if best[0] == best[1] == -math.inf:
        return None
    return int(best[1] > best[0])


def evaluate_cell(
    model: ChatModel,
    task: Task,
    splits: Splits,
    cell: Cell,
    *,
    n_items: int,
    seed: int = 0,
    system: str | None = None,
    logprobs: bool = False,
    max_concurrency: int = 1,
    keep_replies: bool = False,
    reasoning_tokens: int | None = None,
) -> CellResult:
    """Greedy replies for one cell (max tokens: 3, or 1024 for the reasoning styles unless
    `reasoning_tokens` says otherwise), scored."""
    start = time.perf_counter()
    chats = cell_messages(task, splits, cell, n_items, seed, system)
    labels = [y for _, y in chats]
    reasoning = cell.style in REASONING
    budget = reasoning_tokens if reasoning and reasoning_tokens else max_tokens(cell.style)
    requests = [{"messages": m, "max_tokens": budget, "temperature": 0.0} for m, _ in chats]
    guarded = RefusalsAsEmpty(model)
    replies = [c[0].text for c in chat_many(guarded, requests, max_concurrency=max_concurrency)]
    preds = [parse_reply(r, reasoning=reasoning, binary=task.binary) for r in replies]
    lp = None
    if logprobs and task.binary and not reasoning:
        lp = score([label_logprob_choice(guarded, m) for m, _ in chats], labels)
    return CellResult(
        cell,
        score(preds, labels),
        lp,
        time.perf_counter() - start,
        tuple(replies) if keep_replies else (),
        guarded.refused,
    )
