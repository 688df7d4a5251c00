"""Does generated data teach? The CPU analogue of the paper's fine-tuning result (arXiv 2510.13394: a 7B
VLM fine-tuned on the generated 12K set goes from 26.1% to 47.0% on the bench).

A small Siamese scorer is trained on n generated items of one task (n = 1k, 4k, 16k: the first n of
one nested training split, so a larger set contains the smaller), for a fixed budget of item passes
(the same compute at every n), with the best of `evals` checkpoints kept on a validation split, and
scored on a held-out test split of the same task. A learning curve that rises above the floors
(chance, the majority letter, the same network untrained) says the generated items teach a model
something that carries to new items; a flat one says they do not, at this scale.

The scorer (`SiameseScorer`): one encoder E, shared by every panel (question and options), a small
CNN keeping a coarse spatial map (96 px -> 6 x 6) flattened into an embedding; the question's
embedding q is the mean over its panels. The options are compared jointly: option k's features are
[q * e_k, |q - e_k|, e_k - mean_j e_j] (the last term is its difference from the other options), a
small MLP scores each, and the softmax over the four scores is trained with cross-entropy:

    s_k = MLP([q * e_k, |q - e_k|, e_k - (1/4) sum_j e_j]),   L = -log softmax(s)_answer

Items are drawn, proved and passed through the answerability gate exactly as the splits are
(`items.make_item`), with their own seeds (`derive_seed(seed, "teach", task, split, i)`), and kept
as uint8 ink arrays in shards (`shard_items` per .npz) so that a rerun resumes.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.config import ConfigError
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_int, check_interval
from iclr26.spatial_dise.baselines import Panels
from iclr26.spatial_dise.items import DIFFICULTIES, LETTERS, make_item
from iclr26.spatial_dise.scorer import _encode
from iclr26.spatial_dise.tasks import check_tasks, task

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TeachConfig:
    """The learning-curve experiment: which tasks, how many training items, how long to train."""

    tasks: tuple[str, ...] = ("2d_rotation", "fold_punch", "3d_rotation")
    """tasks, each trained and tested alone (the issue's three: two 2D, one 3D)"""
    sizes: tuple[int, ...] = (1000, 4000, 16000)
    """training-set sizes of the learning curve (nested: the first n items of one split)"""
    caps: tuple[str, ...] = ()
    """'task:n' entries: the largest size that task trains at (e.g. 3d_rotation:4000 when its items
    are too slow to draw 16k in the time)"""
    seeds: int = 2
    """training seeds per (task, size): weights and shuffles; a test item's value is the mean over them"""
    test_items: int = 300
    """held-out test items per task (the units of the study)"""
    val_items: int = 200
    """validation items per task (the best of `evals` checkpoints is kept on them)"""
    image_size: int = 96
    """side of each panel given to the encoder"""
    width: int = 8
    """channels of the encoder's first conv (the next three have 2x)"""
    embed: int = 64
    """size of a panel's embedding"""
    budget: int = 16000
    """item passes per training run, the same at every size (1k: 16 epochs; 16k: 1)"""
    batch_size: int = 32
    """items per gradient step"""
    lr: float = 2e-3
    """AdamW learning rate"""
    evals: int = 4
    """validation checks per run (evenly spaced; the best is kept)"""
    shard_items: int = 500
    """items per cached .npz shard"""
    seed: int = 0
    """seeds the items (derive_seed(seed, 'teach', task, split, i)) and, with a run's seed index, training"""

    def __post_init__(self) -> None:
        check_tasks(self.tasks, "teach.tasks")
        if not self.tasks or not self.sizes:
            raise ConfigError("teach.tasks and teach.sizes must each name at least one")
        for n in self.sizes:
            check_int("teach.sizes", n, 1)
        if list(self.sizes) != sorted(set(self.sizes)):
            raise ConfigError(f"teach.sizes must be increasing and distinct, got {self.sizes}")
        for name in ("seeds", "test_items", "val_items", "width", "embed", "budget", "batch_size", "evals"):
            check_int(f"teach.{name}", getattr(self, name), 1)
        check_int("teach.image_size", self.image_size, 16)
        check_int("teach.shard_items", self.shard_items, 1)
        check_int("teach.seed", self.seed, 0)
        check_interval("teach.lr", self.lr, 0, None, closed=(False, True))
        self.cap_of()  # validates the caps

    def cap_of(self) -> dict[str, int]:
        """The caps as {task: largest size}."""
        out = {}
        for entry in self.caps:
            name, _, n = entry.partition(":")
            if name not in self.tasks or not n.isdigit():
                raise ConfigError(f"teach.caps: {entry!r} is not 'task:n' with a task of teach.tasks")
            out[name] = int(n)
        return out

    def sizes_of(self, name: str) -> tuple[int, ...]:
        """The training sizes `name` runs at (those under its cap)."""
        cap = self.cap_of().get(name)
        return tuple(n for n in self.sizes if cap is None or n <= cap)


# --- data -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Items:
    """Items as uint8 ink: questions (N, 3, S, S) zero-padded, options (N, 4, S, S), answers (N,) 0-3."""

    questions: torch.Tensor
    options: torch.Tensor
    answers: torch.Tensor
    rejected: int = 0  # drafts the verifier or the gate refused while these were drawn

    def __len__(self) -> int:
        return int(self.answers.shape[0])

    def head(self, n: int) -> Items:
        """The first n items."""
        return Items(self.questions[:n], self.options[:n], self.answers[:n], self.rejected)

    def blanked(self) -> Items:
        """The same items with blank question panels: what a model can learn from the options alone."""
        return Items(torch.zeros_like(self.questions), self.options, self.answers, self.rejected)


def _draw(name: str, split: str, start: int, stop: int, seed: int, size: int) -> dict[str, np.ndarray]:
    """Items start..stop-1 of a task's split, drawn, proved, gated and drawn as ink arrays."""
    t = task(name)
    panels, answers, rejected = [], [], 0
    for i in range(start, stop):
        rng = np.random.default_rng(derive_seed(seed, "teach", name, split, i))
        item = make_item(t, rng, DIFFICULTIES[i % len(DIFFICULTIES)])
        question, options = t.panels(item.draft)
        panels.append(Panels(tuple(question), tuple(options[k] for k in item.order)))
        answers.append(LETTERS.index(item.answer))
        rejected += item.rejected
    arrays = _encode(panels, size)
    return {**arrays, "answers": np.array(answers, dtype=np.int64), "rejected": np.array(rejected)}


def _shards(root: Path | str, name: str, split: str, n: int, cfg: TeachConfig) -> list[Path]:
    """The shard files holding a task's first n items of `split`, drawn where missing (a rerun resumes
    and a larger n extends a smaller one)."""
    folder = Path(root) / f"{name}-{cfg.image_size}px-seed{cfg.seed}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in range(math.ceil(n / cfg.shard_items)):
        start, stop = s * cfg.shard_items, (s + 1) * cfg.shard_items
        path = folder / f"{split}-{start:06d}-{stop:06d}.npz"
        if not path.is_file():
            arrays = _draw(name, split, start, stop, cfg.seed, cfg.image_size)
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, **arrays)
            tmp.replace(path)
        paths.append(path)
    return paths


def rejected_drafts(root: Path | str, name: str, split: str, n: int, cfg: TeachConfig) -> int:
    """Drafts the verifier or the gate refused while the shards of a task's first n items were drawn."""
    total = 0
    for path in _shards(root, name, split, n, cfg):
        with np.load(path) as z:
            total += int(z["rejected"])
    return total


def load_items(root: Path | str, name: str, split: str, n: int, cfg: TeachConfig) -> Items:
    """The first n items of a task's split (drawn shard by shard where missing, see `_shards`); the
    question channels no item uses are dropped."""
    parts = []
    for path in _shards(root, name, split, n, cfg):
        with np.load(path) as z:
            parts.append({k: z[k] for k in ("questions", "options", "answers", "rejected")})
    cat = {k: np.concatenate([p[k] for p in parts])[:n] for k in ("questions", "options", "answers")}
    used = cat["questions"].reshape(*cat["questions"].shape[:2], -1).max(axis=2).max(axis=0) > 0
    k = max(1, int(np.flatnonzero(used).max()) + 1) if used.any() else 1
    return Items(
        torch.from_numpy(np.ascontiguousarray(cat["questions"][:, :k])),
        torch.from_numpy(cat["options"]),
        torch.from_numpy(cat["answers"]),
        int(sum(int(p["rejected"]) for p in parts)),
    )


# --- the scorer -----------------------------------------------------------------------------------


class SiameseScorer(nn.Module):
    """A shared panel encoder and a joint comparison of the four options (see the module docstring)."""

    def __init__(self, width: int = 8, embed: int = 64, image_size: int = 96) -> None:
        super().__init__()
        w, side = width, math.ceil(image_size / 16)
        self.encoder = nn.Sequential(
            nn.Conv2d(1, w, 5, stride=2, padding=2),
            nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(2 * w, 2 * w, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(2 * w, 2 * w, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(2 * w * side * side, embed),
            nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Linear(3 * embed, embed), nn.ReLU(), nn.Linear(embed, 1))

    def embed(self, panels: torch.Tensor) -> torch.Tensor:
        """(B, K, S, S) uint8 panels -> (B, K, E) embeddings, one encoder for all."""
        b, k = panels.shape[:2]
        x = panels.reshape(b * k, 1, *panels.shape[2:]).float() / 255.0
        return self.encoder(x).reshape(b, k, -1)

    def forward(self, questions: torch.Tensor, options: torch.Tensor) -> torch.Tensor:
        """Scores (B, 4) of questions (B, 3, S, S) and options (B, 4, S, S)."""
        present = questions.flatten(2).amax(dim=2) > 0  # (B, 3): panels with ink
        present[:, 0] = True
        k = int(present.sum(dim=1).max())
        mask = present[:, :k].float().unsqueeze(2)
        q = (self.embed(questions[:, :k]) * mask).sum(dim=1, keepdim=True) / mask.sum(dim=1, keepdim=True)
        e = self.embed(options)  # (B, 4, E)
        joint = torch.cat([q * e, (q - e).abs(), e - e.mean(dim=1, keepdim=True)], dim=2)
        return self.head(joint).squeeze(2)


def make_scorer(cfg: TeachConfig, seed: int) -> SiameseScorer:
    """A freshly initialised scorer; its weights depend only on (cfg.seed, seed)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(cfg.seed, "teach-init", seed))
        return SiameseScorer(cfg.width, cfg.embed, cfg.image_size)


@torch.no_grad()
def predict(model: SiameseScorer, data: Items, batch_size: int = 128) -> np.ndarray:
    """The chosen option (0-3) per item."""
    model.eval()
    out = [
        model(data.questions[s : s + batch_size], data.options[s : s + batch_size]).argmax(dim=1)
        for s in range(0, len(data), batch_size)
    ]
    return torch.cat(out).numpy() if out else np.zeros(0, dtype=np.int64)


def accuracy(model: SiameseScorer, data: Items) -> float:
    """Share of items whose answer the model picks."""
    return float((predict(model, data) == data.answers.numpy()).mean()) if len(data) else math.nan


@dataclass
class Trained:
    """A training run's best model (by validation accuracy) and its history."""

    model: SiameseScorer
    best_step: int
    best_val: float
    history: list[dict[str, float]] = field(default_factory=list)


def train(train_items: Items, val_items: Items, cfg: TeachConfig, seed: int, out_dir: Path | str) -> Trained:
    """Train for `cfg.budget` item passes (multiple-choice cross-entropy), checking validation accuracy
    `cfg.evals` times and keeping the best; checkpoints at each check, and resumes from the last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    last, best_path = out / "last.pt", out / "best.pt"
    model = make_scorer(cfg, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    steps = max(1, cfg.budget // cfg.batch_size)
    checks = sorted({max(1, round(steps * (i + 1) / cfg.evals)) for i in range(cfg.evals)})
    step, best_step, best_val, history = 0, -1, -1.0, []
    if last.is_file():
        state = load_checkpoint(last, "cpu")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        step, best_step, best_val, history = (
            state["step"],
            state["best_step"],
            state["best_val"],
            state["history"],
        )
    n = len(train_items)
    per_epoch = max(1, math.ceil(n / cfg.batch_size))
    while step < steps:
        epoch, b = divmod(step, per_epoch)
        order = torch.randperm(
            n, generator=torch.Generator().manual_seed(derive_seed(cfg.seed, "teach-shuffle", seed, epoch))
        )
        idx = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
        model.train()
        scores = model(train_items.questions[idx], train_items.options[idx])
        loss = nn.functional.cross_entropy(scores, train_items.answers[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        if step in checks:
            val = accuracy(model, val_items)
            history.append({"step": step, "loss": float(loss.detach()), "val_accuracy": val})
            log.info(
                "teach n=%d seed %d step %d/%d: loss %.3f val %.3f", n, seed, step, steps, loss.item(), val
            )
            if val > best_val:
                best_step, best_val = step, val
                save_checkpoint(best_path, {"model": model.state_dict()})
            state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step,
                     "best_step": best_step, "best_val": best_val, "history": history}  # fmt: skip
            save_checkpoint(last, state)
    best = make_scorer(cfg, seed)
    best.load_state_dict(load_checkpoint(best_path, "cpu")["model"])
    best.eval()
    return Trained(best, best_step, best_val, history)


def majority_letter(answers: Sequence[int]) -> int:
    """The answer position most frequent in `answers` (first on ties): the constant floor's letter."""
    return int(np.bincount(np.asarray(answers, dtype=np.int64), minlength=len(LETTERS)).argmax())


__all__ = [
    "Items",
    "SiameseScorer",
    "TeachConfig",
    "Trained",
    "accuracy",
    "load_items",
    "majority_letter",
    "make_scorer",
    "predict",
    "rejected_drafts",
    "train",
]
