"""A trained evaluator (the paper's fifth family, trained models such as Auto-J and Prometheus, at
CPU scale): all-MiniLM-L6-v2 with a one-logit head, fine-tuned here on the training part of the
comparisons to score a response, then compared pairwise.

Each response gets a score s = f(first, response), where `first` is the reference (a
reference-based evaluator) or the question (a reference-free reward model). The loss over a batch
of training comparisons is Bradley–Terry on pairs with a winner and a squared gap on ties:

    L = −log σ(s_win − s_lose)            (a winner)
    L = w_tie · (s_a − s_b)²               (same)

After training, the tie margin τ is picked on the training pairs (the |s_a − s_b| quantile that
maximises their macro-F1) and saved with the model, whose folder is a Hugging Face
sequence-classification model that `reward.RewardModel` loads like any other reward model.
Training checkpoints every `checkpoint_every` steps; an interrupted run resumes.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint, write_text_atomic
from iclr26.core.config import ConfigError
from iclr26.core.schedule import warmup_cosine
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.lfqa_e.data import Comparison
from iclr26.lfqa_e.reward import FIRST_TEXTS, INPUT_FILE, RewardModel, pair_texts
from iclr26.lfqa_e.scoring import agreement, preferences


@dataclass(frozen=True)
class EvaluatorConfig:
    """The fine-tuning run; the defaults are the bench's CPU run."""

    first: str = "reference"
    """text paired with each response: 'reference' (an evaluator) or 'question' (a reward model)"""
    steps: int = 150
    """optimizer steps"""
    batch_size: int = 8
    """comparisons per step (two sequences each)"""
    lr: float = 5e-5
    """peak AdamW learning rate"""
    warmup: int = 15
    """linear warm-up steps before the cosine decay"""
    max_length: int = 256
    """word pieces per (first, response) sequence; longer pairs are truncated longest first"""
    tie_weight: float = 1.0
    """weight of the squared gap on tied pairs"""
    seed: int = 0
    """seed of the head's initial weights and the batch order"""
    checkpoint_every: int = 50
    """steps between training checkpoints"""

    def __post_init__(self) -> None:
        check_in("first", self.first, FIRST_TEXTS)
        for name in ("steps", "batch_size", "max_length", "checkpoint_every"):
            check_int(name, getattr(self, name), 1)
        check_int("warmup", self.warmup, 0)
        check_int("seed", self.seed, 0)
        check_interval("lr", self.lr, 0.0, closed=(False, True))
        check_interval("tie_weight", self.tie_weight, 0.0)


def pair_loss(s_a, s_b, labels: Sequence[str], tie_weight: float = 1.0):
    """The mean loss over a batch: Bradley–Terry on winners, w_tie · gap² on ties (module docstring)."""
    import torch
    import torch.nn.functional as F

    sign = torch.tensor([{"response_a": 1.0, "response_b": -1.0, "same": 0.0}[y] for y in labels])
    tie = sign == 0
    bt = -F.logsigmoid(sign * (s_a - s_b))
    return torch.where(tie, tie_weight * (s_a - s_b) ** 2, bt).mean()


def pick_tie_margin(scores: np.ndarray, labels: Sequence[str]) -> float:
    """The absolute margin τ (0 or a quantile of |s_a − s_b|) that maximises macro-F1 on these pairs."""
    gaps = np.abs(scores[:, 0] - scores[:, 1])
    candidates = [0.0, *np.quantile(gaps, np.linspace(0.02, 0.5, 25)).tolist()]
    best = max(
        candidates, key=lambda t: (agreement(preferences(scores, t, relative=False), labels).macro_f1, -t)
    )
    return float(best)


def train_evaluator(
    train: Sequence[Comparison],
    out_dir: Path | str,
    cfg: EvaluatorConfig = EvaluatorConfig(),
    on_progress: Callable[[int, float], None] | None = None,
) -> Path:
    """Fine-tune the scorer on `train` (resuming from `out_dir`'s checkpoint) and save it as a
    Hugging Face model in `out_dir/model`; returns that folder. A finished folder is reused."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from iclr26.core.embed import model_dir, quiet_transformers

    if not train:
        raise ConfigError("the trained evaluator needs training comparisons; got none")
    out_dir = Path(out_dir)
    final = out_dir / "model"
    spec_path = final / INPUT_FILE
    if spec_path.is_file():
        spec = json.loads(spec_path.read_text())
        if spec.get("config") == asdict(cfg) and spec.get("n_train") == len(train):
            return final
        raise ConfigError(f"{final} holds an evaluator trained with another config; use a new folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(derive_seed(cfg.seed, "evaluator head"))
    with quiet_transformers():
        tok = AutoTokenizer.from_pretrained(model_dir())
        net = AutoModelForSequenceClassification.from_pretrained(model_dir(), num_labels=1)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_cosine(s, cfg.warmup, cfg.steps, 0.1))
    ckpt, start, losses = out_dir / "checkpoint.pt", 0, []
    if ckpt.is_file():
        state = load_checkpoint(ckpt)
        if state["config"] != asdict(cfg) or state["n_train"] != len(train):
            raise ConfigError(f"{ckpt} is from a run with another config or training set; use a new folder")
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        start, losses = state["step"], state["losses"]

    def scores(batch: Sequence[Comparison]) -> tuple[torch.Tensor, torch.Tensor]:
        firsts, responses = pair_texts(batch, cfg.first)
        enc = tok(firsts, responses, truncation="longest_first", max_length=cfg.max_length,
                  padding=True, return_tensors="pt")  # fmt: skip
        s = net(**enc).logits[:, 0].view(len(batch), 2)
        return s[:, 0], s[:, 1]

    net.train()
    for step in range(start, cfg.steps):
        rng = random.Random(derive_seed(cfg.seed, "evaluator batch", step))
        batch = [train[rng.randrange(len(train))] for _ in range(cfg.batch_size)]
        torch.manual_seed(derive_seed(cfg.seed, "evaluator dropout", step))  # a resumed run repeats it
        s_a, s_b = scores(batch)
        loss = pair_loss(s_a, s_b, [c.label for c in batch], cfg.tie_weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        done = step + 1
        if done % cfg.checkpoint_every == 0 and done < cfg.steps:
            save_checkpoint(ckpt, {"config": asdict(cfg), "n_train": len(train), "model": net.state_dict(),
                                   "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                                   "step": done, "losses": losses})  # fmt: skip
        if on_progress is not None:
            on_progress(done, losses[-1])
    partial = out_dir / "model.partial"
    shutil.rmtree(partial, ignore_errors=True)
    net.eval()
    with quiet_transformers():
        net.save_pretrained(partial)
        tok.save_pretrained(partial)
    write_text_atomic(partial / INPUT_FILE, json.dumps({"first": cfg.first}))
    rm = RewardModel(partial, max_length=cfg.max_length)
    tau = pick_tie_margin(rm.score_pairs(train), [c.label for c in train])
    spec = {
        "first": cfg.first,
        "tie_margin": tau,
        "config": asdict(cfg),
        "n_train": len(train),
        "losses": losses,
    }
    write_text_atomic(partial / INPUT_FILE, json.dumps(spec))
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    ckpt.unlink(missing_ok=True)
    return final


def fit_preferences(
    train: Sequence[Comparison],
    test: Sequence[Comparison],
    out_dir: Path | str,
    cfg: EvaluatorConfig = EvaluatorConfig(),
    on_progress: Callable[[int, float], None] | None = None,
) -> list[str]:
    """Train on `train` (`train_evaluator`, resumable from `out_dir`), then the model's preference on
    each of `test`: the higher score wins, "same" within the tie margin it picked on `train`."""
    folder = train_evaluator(train, out_dir, cfg, on_progress)
    scores = RewardModel(folder, max_length=cfg.max_length).score_pairs(test)
    return preferences(scores, tie_margin_of(folder), relative=False)


def tie_margin_of(model_folder: Path | str) -> float:
    """The tie margin saved with a model trained here (0 for any other reward model)."""
    spec = Path(model_folder) / INPUT_FILE
    return float(json.loads(spec.read_text()).get("tie_margin", 0.0)) if spec.is_file() else 0.0


__all__ = [
    "EvaluatorConfig",
    "fit_preferences",
    "pair_loss",
    "pick_tie_margin",
    "tie_margin_of",
    "train_evaluator",
]
