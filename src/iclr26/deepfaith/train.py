"""Training the amortized explainer on L_OBJ = α·L_PC + (1 − α)·L_LC (DeepFaith Algorithm 1).

Checkpoints after every epoch (weights, optimiser, α's state, RNG) and resumes from the last one.
Under `torchrun` each rank takes its share of every batch and DDP averages the gradients; the
one-process path is the same code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import Tensor

from iclr26.core.checkpoint import load_checkpoint, save_checkpoint
from iclr26.core.distributed import DistInfo, all_reduce_mean
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.deepfaith.explainer import AmortizedExplainer
from iclr26.deepfaith.metrics import Model, check_target
from iclr26.deepfaith.objectives import (
    MASK_SAMPLING,
    DynamicWeight,
    local_correlation_loss,
    pattern_consistency_loss,
)
from iclr26.deepfaith.supervision import SupervisedPairs

OBJECTIVES = ("deepfaith", "pattern", "local")  # the method, and its two single-loss ablations


@dataclass(frozen=True)
class ExplainerTrainConfig:
    """Optimisation of the explainer."""

    epochs: int = 40
    """passes over the training pairs (the system raises it to reach `min_steps` updates)"""
    batch_size: int = 64
    """training pairs per Adam step"""
    lr: float = 1e-3
    """Adam learning rate"""
    weight_decay: float = 1e-5
    """Adam weight decay"""
    lc_runs: int = 16
    """R: sampled subsets per input in L_LC"""
    sampling: str = "explainer"
    """how L_LC samples its subsets: from σ(s) (explainer) or uniform Bernoulli(½) (uniform)"""
    objective: str = "deepfaith"
    """deepfaith (α·L_PC + (1 − α)·L_LC), or one loss alone: pattern (L_PC), local (L_LC)"""
    epsilon: float = 1e-5
    """Algorithm 1's ε: L_PC has converged when its variance over the window falls below ε"""
    c: float = 10.0
    """Algorithm 1's C: the decay time of α, and the variance C·ε that resets α to 1"""
    window: int = 5
    """epochs in Algorithm 1's variance window"""

    def __post_init__(self) -> None:
        check_in("objective", self.objective, OBJECTIVES)
        check_in("sampling", self.sampling, MASK_SAMPLING)
        for name in ("epochs", "batch_size", "lc_runs", "window"):
            check_int(name, getattr(self, name), 1)
        check_interval("lr", self.lr, 0, closed=(False, True))
        check_interval("weight_decay", self.weight_decay, 0)
        check_interval("epsilon", self.epsilon, 0, closed=(False, True))
        check_interval("c", self.c, 0, closed=(False, True))


def train_explainer(
    explainer: AmortizedExplainer,
    model: Model,
    x: Tensor,
    target: Tensor,
    pairs: SupervisedPairs,
    cfg: ExplainerTrainConfig,
    *,
    seed: int = 0,
    checkpoint: Path | None = None,
    on_epoch: Callable[[dict], None] | None = None,
    dist: DistInfo | None = None,
) -> list[dict]:
    """Train `explainer` in place on the supervised pairs; return the per-epoch history."""
    if not isinstance(cfg, ExplainerTrainConfig):
        raise TypeError(f"cfg must be an ExplainerTrainConfig, got {type(cfg).__name__}")
    explainer.space.check(x)
    check_target(target, len(x))
    if len(pairs.index) == 0 and cfg.objective != "local":
        raise ValueError("no supervised pairs survived the filter; lower p, or train with objective='local'")
    dist = dist or DistInfo()
    space = explainer.space
    # the pairs index the inputs; the self-supervised ablation trains on every input once per epoch
    index = torch.arange(len(x)) if cfg.objective == "local" else pairs.index
    maps = None if cfg.objective == "local" else pairs.maps
    net: torch.nn.Module = explainer
    if dist.world_size > 1:
        net = torch.nn.parallel.DistributedDataParallel(explainer)
    opt = torch.optim.Adam(explainer.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    weight = DynamicWeight(cfg.epsilon, cfg.c, cfg.window)
    if cfg.objective != "deepfaith":
        weight.alpha = 1.0 if cfg.objective == "pattern" else 0.0
    order_gen = torch.Generator().manual_seed(seed)
    mask_gen = torch.Generator().manual_seed(seed + 1)
    history: list[dict] = []
    start = 0
    if checkpoint is not None and checkpoint.exists():
        state = load_checkpoint(checkpoint)
        explainer.load_state_dict(state["explainer"])
        opt.load_state_dict(state["optimizer"])
        weight = DynamicWeight(**state["weight"])
        order_gen.set_state(state["order_gen"])
        mask_gen.set_state(state["mask_gen"])
        torch.set_rng_state(state["torch_rng"])
        history, start = state["history"], state["epoch"]
    for epoch in range(start, cfg.epochs):
        t0 = time.perf_counter()
        net.train()
        sums = torch.zeros(3)  # L_PC, L_LC, batches
        alpha = weight.alpha
        for batch in torch.randperm(len(index), generator=order_gen).split(cfg.batch_size):
            if len(batch) < dist.world_size:  # every rank must take part in every DDP step
                continue
            part = batch[dist.rank :: dist.world_size]
            xb, cb = x[index[part]], target[index[part]]
            s = net(xb, cb)
            lc = local_correlation_loss(
                s, model, space, xb, cb, runs=cfg.lc_runs, sampling=cfg.sampling, generator=mask_gen
            )
            pc = pattern_consistency_loss(s, maps[part].to(s)) if maps is not None else torch.zeros(())
            loss = alpha * pc + (1 - alpha) * lc
            opt.zero_grad()
            loss.backward()
            opt.step()
            sums += torch.tensor([float(pc.detach()), float(lc.detach()), 1.0])
        sums = all_reduce_mean(sums.to(dist.device), dist).cpu()  # NCCL reduces CUDA tensors only
        pc_mean, lc_mean = float(sums[0] / sums[2]), float(sums[1] / sums[2])
        if cfg.objective == "deepfaith":
            weight.update(epoch, pc_mean)
        row = {
            "epoch": epoch + 1,
            "alpha": alpha,
            "pattern_loss": pc_mean,
            "local_loss": lc_mean,
            "seconds": time.perf_counter() - t0,
        }
        history.append(row)
        if checkpoint is not None and dist.is_main:
            save_checkpoint(
                checkpoint,
                {
                    "explainer": explainer.state_dict(),
                    "optimizer": opt.state_dict(),
                    "weight": asdict(weight),
                    "order_gen": order_gen.get_state(),
                    "mask_gen": mask_gen.get_state(),
                    "torch_rng": torch.get_rng_state(),
                    "history": history,
                    "epoch": epoch + 1,
                },
            )
        if on_epoch is not None:
            on_epoch(row)
    explainer.eval()
    return history
