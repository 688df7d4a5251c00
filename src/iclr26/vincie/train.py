"""Training the session transformer on video sessions with the three proxy tasks (VINCIE §3.3):
the rectified-flow velocity loss at logit-normal timesteps, AdamW with warm-up and cosine decay.

The data are `sessions` videos made here, session i drawn from its own seed, so the dataset has a
size (the paper's data-scaling axis) and needs no storage. Every (step, row) has its own seed for
its session, proxy task, dropout, timestep and noise: a run repeats bit for bit on one machine,
does not depend on the number of processes, and resumes from its checkpoint exactly. Under
`torchrun` each rank takes its rows of every batch and DDP averages the gradients.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.config import ConfigError
from iclr26.core.distributed import DistInfo, all_reduce_mean
from iclr26.core.optim import OptimConfig, adamw_warmup_cosine, clip_gradients
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import check_int
from iclr26.vincie.flow import flow_loss, logit_normal
from iclr26.vincie.model import ModelConfig, SessionDiT
from iclr26.vincie.sequence import Batch, ProxyConfig, Tokenizer, collate, training_example
from iclr26.vincie.video import Session, video_session


@dataclass(frozen=True)
class TrainConfig(OptimConfig):
    """Data size and optimisation (AdamW, warm-up then cosine to 0.1 x lr, clip: `core.optim`)."""

    sessions: int = 20_000
    """training sessions (videos made here; session i comes from its own seed)"""
    max_images: int = 4
    """images per training session at most (the paper: 2–20)"""
    steps: int = 1800
    """optimiser steps"""
    batch: int = 16
    """examples per step (split over processes under torchrun)"""
    warmup: int = 50
    """linear warm-up steps before the cosine decay"""
    checkpoint_every: int = 100
    """steps between checkpoints"""

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("sessions", "steps", "batch", "checkpoint_every"):
            check_int(name, getattr(self, name), 1)
        check_int("max_images", self.max_images, 2)


def session_for(seed: int, index: int, size: int, max_images: int, max_words: int) -> Session:
    """Training session `index` of the dataset of run `seed`."""
    rng = np.random.default_rng(derive_seed(seed, "session", index))
    return video_session(rng, size, f"train-{index}", max_images=max_images, max_words=max_words)


def make_batch(
    seed: int,
    step: int,
    rows: range,
    train: TrainConfig,
    proxy: ProxyConfig,
    model: ModelConfig,
    tok: Tokenizer,
    data: Sequence[Session] | None = None,
    t_mean: float = 0.0,
) -> tuple[Batch, Tensor, Tensor]:
    """The examples, timesteps and noise of `rows` of step `step`, each from its own seed; sessions
    come from `data` when given, else from the videos made here; `t_mean` is the mean of the
    logit-normal timesteps' normal (0: centred; > 0: more steps near the noise, SD3's shift)."""
    examples, ts, noises = [], [], []
    for r in rows:
        rng = np.random.default_rng(derive_seed(seed, "example", step, r))
        if data:
            session = data[int(rng.integers(len(data)))]
        else:
            index = int(rng.integers(train.sessions))
            session = session_for(seed, index, model.image_size, train.max_images, model.max_words)
        examples.append(training_example(session, rng, proxy, tok, model.max_words))
        gen = torch.Generator().manual_seed(derive_seed(seed, "noise", step, r))
        ts.append(logit_normal(1, gen, mean=t_mean))
        noises.append(gen)
    batch = collate(examples)
    noise = torch.stack([torch.randn(batch.frames.shape[1:], generator=g) for g in noises])
    return batch, torch.cat(ts), noise


def train_session_model(
    model_cfg: ModelConfig,
    proxy: ProxyConfig,
    cfg: TrainConfig,
    *,
    seed: int = 0,
    checkpoint: Path | None = None,
    info: DistInfo | None = None,
    on_step: Callable[[int, float], None] | None = None,
    data: Sequence[Session] | None = None,
    tok: Tokenizer | None = None,
    t_mean: float = 0.0,
) -> tuple[SessionDiT, list[float]]:
    """Train a SessionDiT (resuming from `checkpoint`) on `data` or on videos made here; returns it
    and the loss of every step. `tok`: the text vocabulary (default: the video templates'); `t_mean`: the
    timesteps' logit-normal mean (`make_batch`)."""
    if model_cfg.max_turns < cfg.max_images - 1:
        raise ConfigError(
            f"model.max_turns={model_cfg.max_turns} is below the {cfg.max_images - 1} turns of a session"
        )
    info = info or DistInfo()
    if cfg.batch % info.world_size:
        raise ConfigError(f"train.batch={cfg.batch} must be a multiple of the {info.world_size} processes")
    tok = tok or Tokenizer()
    torch.manual_seed(derive_seed(seed, "init"))
    net = SessionDiT(model_cfg, len(tok)).to(info.device)
    opt, sched = adamw_warmup_cosine(net.parameters(), cfg, cfg.steps, floor=0.1)
    losses: list[float] = []
    start, seconds = 0, 0.0  # seconds: wall time of the training steps, kept across resumes
    if data:  # sessions from a folder: cut to max_images, like the videos made here
        data = [s.truncated(min(s.turns, cfg.max_images - 1)) for s in data]
    optimisation = {k: v for k, v in asdict(cfg).items() if k != "checkpoint_every"}
    sessions = [s.ident for s in data] if data else cfg.sessions
    identity = {"model": asdict(model_cfg), "proxy": asdict(proxy), "seed": seed}
    identity |= {"sessions": sessions, "train": optimisation}
    if t_mean:
        identity["t_mean"] = t_mean
    if checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint, info.device)
        if state["identity"] != identity:
            raise ConfigError(
                f"checkpoint {checkpoint} holds another model, proxy set, seed, dataset or optimisation; "
                "use a new --out"
            )
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        losses, start = list(state["losses"]), int(state["step"])
        seconds = float(state.get("seconds", 0.0))
    model: torch.nn.Module = net
    if info.world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(net)
    rows = range(info.rank, cfg.batch, info.world_size)
    net.train()
    for step in range(start, cfg.steps):
        t0 = time.perf_counter()
        batch, t, noise = make_batch(seed, step, rows, cfg, proxy, model_cfg, tok, data, t_mean)
        batch = batch.to(info.device)
        loss = flow_loss(model, batch, t.to(info.device), noise.to(info.device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        clip_gradients(net.parameters(), cfg)
        opt.step()
        sched.step()
        value = float(all_reduce_mean(loss.detach().clone(), info))
        if not math.isfinite(value):
            raise FloatingPointError(f"training loss is {value} at step {step + 1}; lower train.lr")
        losses.append(value)
        done = step + 1
        seconds += time.perf_counter() - t0
        if (
            checkpoint is not None
            and info.is_main
            and (done % cfg.checkpoint_every == 0 or done == cfg.steps)
        ):
            save_checkpoint(
                checkpoint,
                {
                    "identity": identity,
                    "model": net.state_dict(),
                    "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(),
                    "losses": losses,
                    "step": done,
                    "seconds": seconds,
                },
            )
        if on_step is not None and info.is_main:
            on_step(done, time.perf_counter() - t0)
    net.eval()
    return net, losses
