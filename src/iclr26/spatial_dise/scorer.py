"""A small trained option scorer: the fine-tuning experiment of Spatial-DISE (arXiv 2510.13394), in small.

The paper fine-tunes Qwen2.5-VL-7B on the 12K synthetic items (26.1% -> 47.0% on the benchmark).
We ask the same question of a model we can train on CPU in seconds: does the synthetic data
teach anything that transfers? `OptionScorer` is a CNN that reads the question panels (grey ink,
`size` x `size` each, zero-padded to 3 channels since tasks have 1-3 question panels) stacked
with ONE option panel, plus an optional task embedding, and returns a scalar score s. The four
options' scores go through a softmax and cross-entropy with the answer:

    p(k | x) = exp(s_k) / sum_j exp(s_j),   L = -log p(answer | x)        (multiple-choice CE)

`prepare` decodes the composed PNGs once into uint8 tensors (cached as .npz beside the images),
`train_scorer` checkpoints every epoch, resumes from the last checkpoint and keeps the best
epoch by validation accuracy, and `predict_scorer` returns letters.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from einops import rearrange
from PIL import Image
from torch import nn

from iclr26.core.checkpoint import atomic_write, load_checkpoint, save_checkpoint, write_text_atomic
from iclr26.core.distributed import init_distributed
from iclr26.core.errors import UserError
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_int, check_interval
from iclr26.spatial_dise.baselines import Panels, grey_square, load_panels
from iclr26.spatial_dise.items import LETTERS
from iclr26.spatial_dise.records import Record, csv_text

log = logging.getLogger(__name__)

MAX_QUESTION_PANELS = 3
"""Question panels are zero-padded to this many channels."""


@dataclass(frozen=True)
class ScorerConfig:
    """Training settings of the option scorer (CPU-sized; the paper fine-tunes a 7B VLM instead)."""

    epochs: int = 8
    """Passes over the training items."""
    batch_size: int = 64
    """Items (of four options each) per gradient step."""
    lr: float = 2e-3
    """Adam learning rate."""
    weight_decay: float = 0.0
    """Adam (decoupled, AdamW) weight decay."""
    width: int = 16
    """Channels of the first conv layer (the next two have 2x)."""
    task_dim: int = 8
    """Size of the learned task embedding joined to the image features (0: no task input)."""
    seed: int = 0
    """Seeds the initial weights and the per-epoch shuffles."""
    image_size: int = 64
    """Side of the square each panel is resized to."""

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "width"):
            check_int(f"scorer.{name}", getattr(self, name), 1)
        check_int("scorer.image_size", self.image_size, 16)  # three stride-2 convs
        check_int("scorer.task_dim", self.task_dim, 0)
        check_int("scorer.seed", self.seed, 0)
        check_interval("scorer.lr", self.lr, 0, None, closed=(False, True))
        check_interval("scorer.weight_decay", self.weight_decay, 0, None)


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """Decoded items: ink as uint8 (0 = white paper).

    questions: (N, 3, S, S), zero channels past each item's question panels;
    options: (N, 4, S, S) in letter order; answers: (N,) int64 in 0-3; tasks: N task names.
    """

    questions: torch.Tensor
    options: torch.Tensor
    answers: torch.Tensor
    tasks: tuple[str, ...]
    ids: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return int(self.answers.shape[0])


def _ink_u8(panel: Image.Image, size: int) -> np.ndarray:
    return np.round(grey_square(panel, size) * 255).astype(np.uint8)


def _encode(panels: Iterable[Panels], size: int) -> dict[str, np.ndarray]:
    """Panels as uint8 ink arrays: questions (N, 3, S, S) zero-padded, options (N, 4, S, S).

    `panels` may be a generator, so that only one item's images are held at a time.
    """
    questions, options = [], []
    for i, p in enumerate(panels):
        if len(p.options) != len(LETTERS):
            raise ValueError(f"item {i} has {len(p.options)} option panels, not {len(LETTERS)}")
        q = np.zeros((MAX_QUESTION_PANELS, size, size), dtype=np.uint8)
        for j, panel in enumerate(p.question[:MAX_QUESTION_PANELS]):
            q[j] = _ink_u8(panel, size)
        questions.append(q)
        options.append(np.stack([_ink_u8(o, size) for o in p.options]))
    if not questions:
        raise ValueError("no items to encode")
    return {"questions": np.stack(questions), "options": np.stack(options)}


def from_panels(
    panels: Sequence[Panels], answers: Sequence[str], tasks: Sequence[str], *, size: int = 64
) -> Prepared:
    """`Prepared` tensors of in-memory items (`baselines.panels_of` of composed images, or raw panels)."""
    if not len(panels) == len(answers) == len(tasks):
        raise ValueError(
            f"got {len(panels)} items, {len(answers)} answers and {len(tasks)} tasks; give one each"
        )
    arrays = _encode(panels, size)
    return Prepared(
        questions=torch.from_numpy(arrays["questions"]),
        options=torch.from_numpy(arrays["options"]),
        answers=torch.tensor([LETTERS.index(a) for a in answers], dtype=torch.int64),
        tasks=tuple(tasks),
    )


def cache_path(records: Sequence[Record], image_root: Path | str, size: int) -> Path:
    """Where `prepare` caches these records: beside the images, keyed by a hash of their CSV bytes."""
    digest = hashlib.sha256(csv_text(records, strict=False).encode() + f"|size={size}".encode()).hexdigest()[
        :16
    ]
    return Path(image_root) / f".scorer-cache-{size}-{digest}.npz"


def prepare(
    records: Sequence[Record], image_root: Path | str, *, size: int = 64, cache: bool = True
) -> Prepared:
    """Decode `records`' composed images once into `Prepared` tensors (cached as .npz with `cache`).

    The cache key is the SHA-256 of the records written as our CSV (for a whole CSV read with
    `read_csv`, its bytes) and `size`, so a regenerated dataset is decoded afresh.
    """
    records = list(records)
    if not records:
        raise UserError("prepare: no records to decode")
    root = Path(image_root)
    path = cache_path(records, root, size)
    arrays: dict[str, np.ndarray] | None = None
    if cache and path.is_file():
        try:
            with np.load(path) as z:
                arrays = {"questions": z["questions"], "options": z["options"]}
        except (OSError, ValueError, KeyError) as e:
            log.warning("ignoring unreadable scorer cache %s (%s)", path, e)
    if arrays is None:
        arrays = _encode((load_panels(r, root) for r in records), size)
        if cache:

            def write(f: Any) -> None:
                buf = io.BytesIO()
                np.savez(buf, **arrays)
                f.write(buf.getvalue())

            atomic_write(path, write)
    return Prepared(
        questions=torch.from_numpy(arrays["questions"]),
        options=torch.from_numpy(arrays["options"]),
        answers=torch.tensor([LETTERS.index(r.answer) for r in records], dtype=torch.int64),
        tasks=tuple(r.category for r in records),
        ids=tuple(r.id for r in records),
    )


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------


class OptionScorer(nn.Module):
    """Score s(question panels, option panel, task) -> R; a CNN over 3 + 1 stacked ink channels."""

    def __init__(
        self, tasks: Sequence[str], width: int = 16, task_dim: int = 8, image_size: int = 64
    ) -> None:
        super().__init__()
        self.tasks = tuple(sorted(set(tasks)))
        self.width, self.task_dim, self.image_size = width, task_dim, image_size
        w = width
        self.features = nn.Sequential(
            nn.Conv2d(MAX_QUESTION_PANELS + 1, w, 5, stride=2, padding=2),
            nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(2 * w, 2 * w, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        # row 0 is an unseen task; the embedding is concatenated to the pooled features
        self.task_embedding = nn.Embedding(len(self.tasks) + 1, task_dim) if task_dim else None
        self.head = nn.Sequential(nn.Linear(2 * w + task_dim, 2 * w), nn.ReLU(), nn.Linear(2 * w, 1))

    def task_index(self, tasks: Sequence[str]) -> torch.Tensor:
        """Embedding rows of task names (0 for a task not seen in training)."""
        lookup = {t: i + 1 for i, t in enumerate(self.tasks)}
        return torch.tensor([lookup.get(t, 0) for t in tasks], dtype=torch.int64)

    def forward(
        self, questions: torch.Tensor, options: torch.Tensor, task: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Scores (B, 4) of uint8 or float questions (B, 3, S, S) and options (B, 4, S, S)."""
        b, k = options.shape[:2]
        q = questions.float() / 255.0
        o = options.float() / 255.0
        x = torch.cat([q.unsqueeze(1).expand(b, k, *q.shape[1:]), o.unsqueeze(2)], dim=2)  # (B, 4, 3+1, S, S)
        h = self.features(rearrange(x, "b k c h w -> (b k) c h w"))
        if self.task_embedding is not None:
            t = torch.zeros(b, dtype=torch.int64) if task is None else task
            h = torch.cat([h, self.task_embedding(t).repeat_interleave(k, dim=0)], dim=1)
        return rearrange(self.head(h), "(b k) 1 -> b k", b=b, k=k)


def _make_model(tasks: Sequence[str], cfg: ScorerConfig) -> OptionScorer:
    """A freshly initialised scorer; the weights depend only on `cfg.seed`."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(cfg.seed, "init"))
        return OptionScorer(tasks, width=cfg.width, task_dim=cfg.task_dim, image_size=cfg.image_size)


@torch.no_grad()
def _scores(model: OptionScorer, data: Prepared, batch_size: int = 256) -> torch.Tensor:
    model.eval()
    out = []
    for s in range(0, len(data), batch_size):
        sl = slice(s, s + batch_size)
        out.append(model(data.questions[sl], data.options[sl], model.task_index(data.tasks[sl])))
    return torch.cat(out) if out else torch.zeros(0, len(LETTERS))


def _accuracy(model: OptionScorer, data: Prepared) -> float:
    if len(data) == 0:
        return float("nan")
    return float((_scores(model, data).argmax(dim=1) == data.answers).float().mean())


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------


@dataclass
class TrainResult:
    """The best model by validation accuracy, and the per-epoch history."""

    model: OptionScorer
    best_epoch: int
    best_val_accuracy: float
    history: list[dict[str, float]]


def _as_prepared(data: Sequence[Record] | Prepared, image_root: Path | str | None, size: int) -> Prepared:
    if isinstance(data, Prepared):
        if data.options.shape[-1] != size:
            raise ValueError(
                f"prepared panels are {data.options.shape[-1]} px; ScorerConfig.image_size is {size}"
            )
        return data
    if image_root is None:
        raise ValueError(
            "image_root is needed to decode records' images; pass the CSV's folder (or Prepared data)"
        )
    return prepare(data, image_root, size=size)


def _resume_key(cfg: ScorerConfig) -> dict[str, Any]:
    """The settings a resumed run must share with the checkpoint (all but the epoch count)."""
    d = dataclasses.asdict(cfg)
    d.pop("epochs")
    return d


def _model_from_state(state: dict[str, Any]) -> OptionScorer:
    cfg = ScorerConfig(**state["config"])
    model = OptionScorer(state["tasks"], width=cfg.width, task_dim=cfg.task_dim, image_size=cfg.image_size)
    model.load_state_dict(state["model"])
    return model


def load_scorer(path: Path | str) -> OptionScorer:
    """A scorer saved by `train_scorer` (`best.pt` or `last.pt` in its out_dir)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"no scorer checkpoint at {path}")
    return _model_from_state(load_checkpoint(path, "cpu"))


def train_scorer(
    train: Sequence[Record] | Prepared,
    val: Sequence[Record] | Prepared,
    cfg: ScorerConfig,
    out_dir: Path | str,
    *,
    image_root: Path | str | None = None,
) -> TrainResult:
    """Train the option scorer with cross-entropy over the four options' softmax.

    Every epoch writes `out_dir/last.pt` (model, optimizer, epoch, history: enough to resume) and,
    when validation accuracy improves, `out_dir/best.pt`; `config.json` records the settings.
    Called again on the same `out_dir`, it resumes after the last finished epoch (more `epochs`
    extend a finished run); a checkpoint from other settings is refused. Shuffles are seeded per
    epoch from `cfg.seed`, so an interrupted and resumed run ends with the same weights as an
    uninterrupted one.
    """
    train_data = _as_prepared(train, image_root, cfg.image_size)
    val_data = _as_prepared(val, image_root, cfg.image_size)
    if len(train_data) == 0:
        raise UserError("train_scorer: no training items")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    last, best = out / "last.pt", out / "best.pt"

    info = init_distributed("cpu")  # under torchrun: data parallel; alone: rank 0 of 1
    model = _make_model(train_data.tasks, cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    start, history = 0, []
    best_epoch, best_acc = -1, -1.0
    if last.is_file():
        state = load_checkpoint(last, "cpu")
        saved = ScorerConfig(**state["config"])
        if _resume_key(saved) != _resume_key(cfg) or tuple(state["tasks"]) != model.tasks:
            raise UserError(
                f"{last} was trained with other settings ({json.dumps(_resume_key(saved))}); "
                "use a new out_dir or delete that folder to start afresh"
            )
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start, history = state["epoch"] + 1, list(state["history"])
        best_epoch, best_acc = state["best_epoch"], state["best_val_accuracy"]
        log.info("resuming the option scorer from %s after epoch %d", last, start)
    if info.is_main:
        write_text_atomic(out / "config.json", json.dumps(dataclasses.asdict(cfg), indent=2) + "\n")

    task_idx = model.task_index(train_data.tasks)
    n = len(train_data)
    step_model: nn.Module = model
    if info.world_size > 1:  # each rank scores its share of every batch; DDP averages the gradients
        step_model = nn.parallel.DistributedDataParallel(model)
    for epoch in range(start, cfg.epochs):
        model.train()
        gen = torch.Generator().manual_seed(derive_seed(cfg.seed, "shuffle", epoch))
        order = torch.randperm(n, generator=gen)
        total, hits, seen = 0.0, 0, 0
        for s in range(0, n, cfg.batch_size):
            idx = order[s : s + cfg.batch_size][info.rank :: info.world_size]
            if len(idx) == 0:  # a last batch smaller than the number of ranks
                idx = order[s : s + 1]
            scores = step_model(train_data.questions[idx], train_data.options[idx], task_idx[idx])  # (B, 4)
            loss = nn.functional.cross_entropy(scores, train_data.answers[idx])  # multiple-choice CE
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            hits += int((scores.detach().argmax(dim=1) == train_data.answers[idx]).sum())
            seen += len(idx)
        train_acc, val_acc = hits / seen, _accuracy(model, val_data)  # train accuracy during the epoch
        history.append(
            {"epoch": epoch, "loss": total / seen, "train_accuracy": train_acc, "val_accuracy": val_acc}
        )
        log.info(
            "scorer epoch %d: loss %.4f, train acc %.3f, val acc %.3f",
            epoch,
            total / seen,
            train_acc,
            val_acc,
        )
        state = {
            "config": dataclasses.asdict(cfg),
            "tasks": list(model.tasks),
            "model": model.state_dict(),
            "optimizer": opt.state_dict(),
            "epoch": epoch,
            "history": history,
            "best_epoch": best_epoch,
            "best_val_accuracy": best_acc,
        }
        if not val_acc <= best_acc:  # improves (or the first epoch, or no validation items)
            best_epoch, best_acc = epoch, val_acc
            state.update(best_epoch=best_epoch, best_val_accuracy=best_acc)
            if info.is_main:
                save_checkpoint(best, state)
        if info.is_main:
            save_checkpoint(last, state)

    best_model = load_scorer(best) if best.is_file() else model
    best_model.eval()
    return TrainResult(best_model, best_epoch, best_acc, history)


def predict_scorer(
    model: OptionScorer, data: Sequence[Record] | Prepared, *, image_root: Path | str | None = None
) -> list[str]:
    """The letter of the highest-scoring option for each item."""
    prepared = _as_prepared(data, image_root, model.image_size)
    return [LETTERS[int(k)] for k in _scores(model, prepared).argmax(dim=1)]
