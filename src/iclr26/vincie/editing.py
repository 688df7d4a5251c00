"""Multi-turn editing with a trained session model, the pairwise editor and copy-previous, on a
batch of sessions at once (every session of a batch has the same turn structure).

At turn k the session model sees the source image, its own earlier outputs, every instruction so
far and, with `order="masks_first"`, generates the current mask, then the next mask, then the next
image, each as a clean context frame for the following one (the paper's best order). The
pairwise editor sees only its previous output and the current instruction.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_in
from iclr26.vincie.flow import sample
from iclr26.vincie.model import NULL, SessionDiT
from iclr26.vincie.sequence import ORDERS, TASKS, Tokenizer, collate, layout
from iclr26.vincie.video import Session


@dataclass(frozen=True)
class SamplerConfig:
    """The Euler sampler and the inference order."""

    steps: int = 20
    """Euler steps (the authors: 50)"""
    shift: float = 3.0
    """timestep shift s of t' = s·t / (1 + (s − 1)·t) (the authors: 12 at their latent size)"""
    guidance: float = 2.0
    """classifier-free guidance scale on the text (the authors: 7.5)"""
    order: str = "masks_first"
    """masks_first (current mask → next mask → image) or image_only"""
    context_masks: bool = False
    """keep earlier turns' generated masks in the context (longer sequences)"""

    def __post_init__(self) -> None:
        check_in("order", self.order, ORDERS)
        if self.steps < 1:
            raise ValueError(f"steps must be ≥ 1, got {self.steps}")


@dataclass
class Outputs:
    """Per session: the images generated at turns 1..K, and generated masks (None when not made)."""

    images: list[list[np.ndarray]] = field(default_factory=list)
    masks_current: list[list[np.ndarray | None]] = field(default_factory=list)
    masks_next: list[list[np.ndarray | None]] = field(default_factory=list)
    seconds_per_turn: float = 0.0


def to_image(frame: torch.Tensor) -> np.ndarray:
    """(3, H, W) in [−1, 1] → (H, W, 3) in [0, 1]."""
    return ((frame.clamp(-1, 1) + 1) / 2).permute(1, 2, 0).numpy()


def to_mask(frame: torch.Tensor) -> np.ndarray:
    """A generated mask frame → a binary (H, W) mask (channel mean above 0)."""
    return (frame.mean(0) > 0).numpy()


def _order(cfg: SamplerConfig, pairwise: bool, tasks: tuple[str, ...]) -> tuple[str, ...]:
    """The frames made at each turn: the image alone, or the trained masks first, then the image."""
    if pairwise or cfg.order == "image_only":
        return ("next_image",)
    return tuple(t for t in ("current_mask", "next_mask", "next_image") if t in tasks)


def edit_turn(
    model: SessionDiT,
    cfg: SamplerConfig,
    sessions: list[Session],
    k: int,
    imgs: list[list[np.ndarray]],
    cur: list[list],
    nxt: list[list],
    gen: torch.Generator,
    *,
    pairwise: bool = False,
    tasks: tuple[str, ...] = TASKS,
    tok: Tokenizer | None = None,
) -> dict[str, list[np.ndarray]]:
    """Turn k of every session: from the images I_0..I_k in `imgs` (the model's own or the true
    ones), the instructions T_0..T_k and the earlier turns' generated masks (`cur`, `nxt`; None where
    not made), sample the turn's frames in the inference order; returns them by task."""
    tok = tok or Tokenizer()
    budget = model.cfg.max_words
    n, size = len(sessions), sessions[0].images.shape[1]
    blank = np.zeros((size, size, 3), np.float32)
    made: dict[str, list[np.ndarray]] = {}
    for target in _order(cfg, pairwise, tasks):
        examples, nulls = [], []
        for i, s in enumerate(sessions):
            if pairwise:
                view = Session(s.ident, np.stack([imgs[i][k], blank]), [s.instructions[k]])
                turn = 0
            else:
                mc = [*cur[i][:k], made.get("current_mask", [None] * n)[i]]
                mn = [*nxt[i][:k], made.get("next_mask", [None] * n)[i]]
                zero = np.zeros((size, size), bool)
                view = Session(
                    s.ident, np.stack([*imgs[i][: k + 1], blank]), list(s.instructions[: k + 1]),
                    np.stack([zero if m is None else m for m in mc]),
                    np.stack([zero if m is None else m for m in mn]),
                )  # fmt: skip
                turn = k
            keep = {}
            for j in range(turn + 1):
                earlier = cfg.context_masks and j < turn  # only masks that were generated
                keep[(j, 1)] = (earlier and cur[i][j] is not None) or (j == turn and "current_mask" in made)
                keep[(j, 2)] = (earlier and nxt[i][j] is not None) or (j == turn and "next_mask" in made)
            ex = layout(view, turn, target, tok, budget, keep=keep)
            examples.append(ex)
            nulls.append([*ex.words[:-1], [NULL] * budget])  # the current turn's words nulled
        batch = collate(examples)
        null_words = torch.tensor(nulls)
        out = sample(model, batch, cfg.steps, cfg.shift, cfg.guidance, null_words, gen)
        last = batch.target.float().argmax(dim=1)
        frames = out[torch.arange(n), last]
        made[target] = [to_mask(f) if target != "next_image" else to_image(f) for f in frames]
    return made


def model_editor(
    model: SessionDiT,
    cfg: SamplerConfig,
    *,
    pairwise: bool = False,
    seed: int = 0,
    tasks: tuple[str, ...] = TASKS,
    tok: Tokenizer | None = None,
) -> Callable[[list[Session], int], Outputs]:
    """Edit every session for `turns` turns with `model` (or as a single-turn editor). With the
    masks-first order, only the masks of the proxy tasks the model trained on (`tasks`) are made."""
    tok = tok or Tokenizer()

    def run(sessions: list[Session], turns: int) -> Outputs:
        n = len(sessions)
        # the noise depends on the sessions, so batches of different sessions draw different noise
        gen = torch.Generator().manual_seed(derive_seed(seed, *[s.ident for s in sessions]))
        imgs = [[s.images[0]] for s in sessions]
        cur: list[list] = [[] for _ in sessions]
        nxt: list[list] = [[] for _ in sessions]
        t0 = time.perf_counter()
        for k in range(turns):
            made = edit_turn(
                model, cfg, sessions, k, imgs, cur, nxt, gen, pairwise=pairwise, tasks=tasks, tok=tok
            )
            for i in range(n):
                imgs[i].append(made["next_image"][i])
                cur[i].append(made.get("current_mask", [None] * n)[i])
                nxt[i].append(made.get("next_mask", [None] * n)[i])
        elapsed = (time.perf_counter() - t0) / max(1, turns)
        return Outputs([im[1:] for im in imgs], cur, nxt, elapsed / n)

    return run


def copy_previous(sessions: list[Session], turns: int) -> Outputs:
    """The baseline that returns its input unchanged at every turn."""
    return Outputs(
        [[s.images[0]] * turns for s in sessions],
        [[None] * turns for _ in sessions],
        [[None] * turns for _ in sessions],
    )
