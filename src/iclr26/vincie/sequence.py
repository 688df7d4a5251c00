"""From a session to the model's input: the three proxy tasks, context dropout, text tokens, and
batches (VINCIE §3.2–3.3).

A training example picks a turn k and one frame of that turn to generate: the current mask M_k0
(current segmentation), the next mask M_k1 (next segmentation) or the next image I_{k+1} (next
image prediction). Earlier turns, the current image I_k and the turn's frames before the target
(order M_k0, M_k1, I_{k+1}) are clean context; later frames are absent. Masks are in the session
for `mask_rate` of the examples; in context, each earlier image is dropped with `drop_image` and
each mask with `drop_current_mask` / `drop_next_mask`. Frame f of turn k sits at index 3k + f
(I_k, M_k0, M_k1), so positions do not move when frames are dropped; block k holds T_k, M_k0,
M_k1 and I_{k+1} (I₀ is in block 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from iclr26.core.validation import check_interval
from iclr26.vincie.model import NULL, PAD, UNK
from iclr26.vincie.video import Session, SessionError, vocabulary, words

TASKS = ("next_image", "current_mask", "next_mask")
ORDERS = ("masks_first", "image_only")  # inference: M_k0 → M_k1 → I_{k+1}, or I_{k+1} alone


class Tokenizer:
    """Word-level ids over the template vocabulary (PAD 0, NULL 1, UNK 2, then the words)."""

    def __init__(self, words: list[str] | None = None) -> None:
        self.words = words or vocabulary()
        self.ids = {w: i + 3 for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words) + 3

    def encode(self, text: str, budget: int, where: str = "instruction") -> list[int]:
        """Ids of the words of `text`, padded with PAD to `budget`; a SessionError naming `where`
        (the session and turn) when it is longer."""
        ws = words(text)
        if len(ws) > budget:
            raise SessionError(f"{where}: instruction has {len(ws)} words, over the text budget of {budget}")
        return [self.ids.get(w, UNK) for w in ws] + [PAD] * (budget - len(ws))


@dataclass(frozen=True)
class ProxyConfig:
    """Which proxy tasks train, and the paper's rates."""

    current_mask: bool = True
    """train current segmentation (generate M_k0)"""
    next_mask: bool = True
    """train next segmentation (generate M_k1)"""
    context: bool = True
    """learn from whole sessions; False trains on single (I_k, T_k, I_{k+1}) pairs (the pairwise baseline)"""
    mask_rate: float = 0.8
    """share of examples whose session shows masks"""
    drop_image: float = 0.2
    """context dropout of each earlier image (never the current one)"""
    drop_current_mask: float = 0.7
    """context dropout of each current-frame mask M_j0"""
    drop_next_mask: float = 0.7
    """context dropout of each next-frame mask M_j1"""
    drop_text: float = 0.1
    """classifier-free guidance dropout: the target turn's words become NULL"""

    def __post_init__(self) -> None:
        for name in ("mask_rate", "drop_image", "drop_current_mask", "drop_next_mask", "drop_text"):
            check_interval(name, getattr(self, name), 0.0, 1.0)

    @property
    def tasks(self) -> tuple[str, ...]:
        """The proxy tasks that train."""
        return tuple(t for t, on in zip(TASKS, (True, self.current_mask, self.next_mask), strict=True) if on)


@dataclass
class Example:
    """One sequence: frames (F, 3, H, W) in [−1, 1], per frame its block, index and whether it is
    the target; per turn its words; the proxy task of the target."""

    frames: Tensor
    block: list[int]
    index: list[int]
    target: list[bool]
    words: list[list[int]]
    task: str


def to_model(image: np.ndarray) -> Tensor:
    """(H, W, 3) in [0, 1], or an (H, W) mask, → (3, H, W) in [−1, 1]."""
    a = np.asarray(image, dtype=np.float32)
    if a.ndim == 2:
        a = np.repeat(a[..., None], 3, axis=-1)
    return torch.from_numpy(a).permute(2, 0, 1) * 2 - 1


def layout(
    session: Session,
    k: int,
    target: str,
    tok: Tokenizer,
    budget: int,
    *,
    keep: dict[tuple[int, int], bool] | None = None,
    null_text: bool = False,
) -> Example:
    """The sequence for generating `target` of turn k: turns < k in full (minus frames `keep` marks
    False; keys (turn, 0/1/2) for image, current mask, next mask), I_k, T_k, and the turn's frames
    before the target. Masks are left out where the session has none."""
    keep = keep or {}
    has_masks = session.masks_current is not None and session.masks_next is not None
    frames, block, index, is_target = [], [], [], []

    def add(turn: int, slot: int, array: np.ndarray, tgt: bool = False) -> None:
        frames.append(to_model(array))
        block.append(max(turn - 1, 0) if slot == 0 else turn)  # I_k belongs to turn k − 1's block
        index.append(3 * turn + slot)
        is_target.append(tgt)

    for j in range(k + 1):
        if j == k or keep.get((j, 0), True):
            add(j, 0, session.images[j])
        if j == k:
            break
        if has_masks and keep.get((j, 1), True):
            add(j, 1, session.masks_current[j])
        if has_masks and keep.get((j, 2), True):
            add(j, 2, session.masks_next[j])
    order = ("current_mask", "next_mask", "next_image")
    for name in order[: order.index(target) + 1]:
        if name != target and not (has_masks and keep.get((k, order.index(name) + 1), True)):
            continue
        if name == "current_mask":
            arr, slot = session.masks_current[k], 1  # type: ignore[index]
        elif name == "next_mask":
            arr, slot = session.masks_next[k], 2  # type: ignore[index]
        else:
            arr, slot = session.images[k + 1], 3
        frames.append(to_model(arr))
        block.append(k)
        index.append(3 * k + slot)
        is_target.append(name == target)
    ids = [
        tok.encode(session.instructions[j], budget, f"session {session.ident}, turn {j}")
        for j in range(k + 1)
    ]
    if null_text:
        ids[k] = [NULL] * budget
    return Example(torch.stack(frames), block, index, is_target, ids, target)


def training_example(
    session: Session, rng: np.random.Generator, cfg: ProxyConfig, tok: Tokenizer, budget: int
) -> Example:
    """A random proxy-task example from `session` with the paper's context dropout."""
    k = int(rng.integers(session.turns))
    if not cfg.context:  # the pairwise baseline: one (I_k, T_k, I_{k+1}) triple, as turn 0
        pair = Session(session.ident, session.images[k : k + 2], session.instructions[k : k + 1])
        return layout(pair, 0, "next_image", tok, budget, null_text=bool(rng.random() < cfg.drop_text))
    with_masks = session.masks_current is not None and rng.random() < cfg.mask_rate
    if not with_masks:
        session = Session(session.ident, session.images, session.instructions)
    target = cfg.tasks[int(rng.integers(len(cfg.tasks)))] if with_masks else "next_image"
    keep: dict[tuple[int, int], bool] = {}
    for j in range(k + 1):
        keep[(j, 0)] = j == k or rng.random() >= cfg.drop_image
        keep[(j, 1)] = cfg.current_mask and rng.random() >= cfg.drop_current_mask
        keep[(j, 2)] = cfg.next_mask and rng.random() >= cfg.drop_next_mask
    return layout(session, k, target, tok, budget, keep=keep, null_text=bool(rng.random() < cfg.drop_text))


@dataclass
class Batch:
    """Padded examples: frames (B, F, 3, H, W), block/index (B, F) (block −1: absent), target (B, F)
    bool, words (B, T, budget)."""

    frames: Tensor
    block: Tensor
    index: Tensor
    target: Tensor
    words: Tensor

    def to(self, device: torch.device) -> Batch:
        return Batch(*(getattr(self, f).to(device) for f in ("frames", "block", "index", "target", "words")))


def collate(examples: list[Example]) -> Batch:
    """Pad a list of examples to the longest in frames and turns."""
    b = len(examples)
    f = max(len(e.block) for e in examples)
    t = max(len(e.words) for e in examples)
    budget = len(examples[0].words[0])
    shape = examples[0].frames.shape[1:]
    frames = torch.zeros(b, f, *shape)
    block = torch.full((b, f), -1, dtype=torch.long)
    index = torch.zeros(b, f, dtype=torch.long)
    target = torch.zeros(b, f, dtype=torch.bool)
    words = torch.full((b, t, budget), PAD, dtype=torch.long)
    for i, e in enumerate(examples):
        n = len(e.block)
        frames[i, :n] = e.frames
        block[i, :n] = torch.tensor(e.block)
        index[i, :n] = torch.tensor(e.index)
        target[i, :n] = torch.tensor(e.target)
        words[i, : len(e.words)] = torch.tensor(e.words)
    return Batch(frames, block, index, target, words)
