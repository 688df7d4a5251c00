"""APO: prompt optimisation through the model itself, in the manner of ProTeGi (Pryzant et al.
2023, "Automatic Prompt Optimization with 'Gradient Descent' and Beam Search"), the paper's seventh
prompt style.

Each round, every prompt in the beam is scored on a minibatch of training items (with the same two
exemplars the paper scores with); the model is shown some of the prompt's mistakes and asked for
reasons it failed (the textual "gradient"), then for a rewritten prompt per reason (the "edit");
the candidates and the beam are scored on a fresh minibatch and the best `beam` are kept. Every
call is counted against `budget`; the search stops when the next round would exceed it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from iclr26.core.llm import ChatModel
from iclr26.core.llm.pool import chat_many
from iclr26.core.validation import check_int
from iclr26.icl_analysis.prompts import build_messages, description
from iclr26.icl_analysis.scoring import parse_reply
from iclr26.icl_analysis.tasks import Item, Task


@dataclass(frozen=True)
class APOConfig:
    """The search's size; the defaults keep it to a few hundred calls per task."""

    beam: int = 2
    """prompts kept after each round"""
    rounds: int = 2
    """search depth (the paper's runs used 6)"""
    minibatch: int = 16
    """training items each prompt is scored on per round"""
    reasons: int = 2
    """reasons asked for per prompt (the textual gradient's size)"""
    errors: int = 4
    """mistakes shown to the model per gradient call"""
    exemplars: int = 2
    """exemplars in the chat while a prompt is scored (the paper: 2)"""
    budget: int = 400
    """most model calls for the whole search"""

    def __post_init__(self) -> None:
        for name in ("beam", "rounds", "minibatch", "reasons", "errors", "budget"):
            check_int(name, getattr(self, name), 1)
        check_int("exemplars", self.exemplars, 0)


@dataclass
class APOResult:
    """The best prompt, its minibatch accuracy, and the search's record."""

    prompt: str
    accuracy: float
    calls: int
    history: list[dict] = field(default_factory=list)


_GRADIENT = (
    "I gave a language model this instruction for a classification task:\n\n{prompt}\n\n"
    "It got these examples wrong (input, then the correct answer):\n\n{errors}\n\n"
    "Give {n} distinct reasons why the instruction may have led to these mistakes. "
    "Write each reason on its own line, starting with '- '."
)
_EDIT = (
    "Instruction:\n\n{prompt}\n\nA problem with it: {reason}\n\n"
    "Rewrite the instruction to fix this problem. Keep it short, and keep the required answer "
    "format. Reply with the new instruction only."
)


class _Counter:
    def __init__(self, budget: int) -> None:
        self.left, self.used = budget, 0

    def take(self, n: int) -> bool:
        if n > self.left:
            return False
        self.left -= n
        self.used += n
        return True


def _accuracy(
    model: ChatModel,
    task: Task,
    prompt: str,
    shots: Sequence[Item],
    items: Sequence[Item],
    rng: random.Random,
) -> tuple[float, list[tuple[Item, str]]]:
    chats = [build_messages(task, "apo", shots, it, rng=rng, system=prompt) for it in items]
    replies = [c[0].text for c in chat_many(model, [{"messages": m, "max_tokens": 3} for m in chats])]
    preds = [parse_reply(r, reasoning=False, binary=task.binary) for r in replies]
    wrong = [(it, r) for it, r, p in zip(items, replies, preds, strict=True) if p != it.label]
    return 100.0 * (len(items) - len(wrong)) / len(items), wrong


def _reasons(text: str, n: int) -> list[str]:
    lines = [ln.strip().lstrip("-*0123456789.) ").strip() for ln in text.splitlines()]
    return [ln for ln in lines if len(ln) > 8][:n]


def optimise_prompt(
    model: ChatModel, task: Task, train: Sequence[Item], cfg: APOConfig = APOConfig(), *, seed: int = 0
) -> APOResult:
    """Search for a better instruction than the task description (style `description`), on
    training items after the exemplars; returns the best prompt found within the budget."""
    rng = random.Random(seed)
    shots = list(train[: cfg.exemplars])
    pool = list(train[cfg.exemplars :])
    if len(pool) < cfg.minibatch:
        raise ValueError(
            f"APO needs at least {cfg.minibatch + cfg.exemplars} training items, got {len(train)}"
        )
    calls = _Counter(cfg.budget)
    start = description(task, "description", cfg.exemplars)
    if not calls.take(cfg.minibatch):
        return APOResult(start, float("nan"), 0)
    batch = rng.sample(pool, cfg.minibatch)
    acc, wrong = _accuracy(model, task, start, shots, batch, rng)
    beam = [(acc, start, wrong)]
    history = [{"round": 0, "prompt": start, "accuracy": acc}]
    for rnd in range(1, cfg.rounds + 1):
        candidates: list[str] = []
        for _, prompt, wrong in beam:
            if not wrong or not calls.take(1):
                continue
            shown = "\n".join(
                f"{it.shown!r} -> {it.label}" for it, _ in rng.sample(wrong, min(cfg.errors, len(wrong)))
            )
            msg = _GRADIENT.format(prompt=prompt, errors=shown, n=cfg.reasons)
            (grad,) = model.chat([{"role": "user", "content": msg}], max_tokens=256, temperature=0.0)
            for reason in _reasons(grad.text, cfg.reasons):
                if not calls.take(1):
                    break
                edit = _EDIT.format(prompt=prompt, reason=reason)
                (new,) = model.chat([{"role": "user", "content": edit}], max_tokens=256, temperature=0.0)
                text = new.text.strip()
                if text and text not in candidates and all(text != p for _, p, _ in beam):
                    candidates.append(text)
        if not candidates:
            break
        pool_prompts = [p for _, p, _ in beam] + candidates
        if not calls.take(cfg.minibatch * len(pool_prompts)):
            break
        batch = rng.sample(pool, cfg.minibatch)
        scored = []
        for p in pool_prompts:
            acc, wrong = _accuracy(model, task, p, shots, batch, rng)
            scored.append((acc, p, wrong))
            history.append({"round": rnd, "prompt": p, "accuracy": acc})
        scored.sort(key=lambda t: -t[0])  # stable: ties keep the older prompt first
        beam = scored[: cfg.beam]
    best_acc, best, _ = beam[0]
    return APOResult(best, best_acc, calls.used, history)
