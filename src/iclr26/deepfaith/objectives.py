"""DeepFaith's two losses and the dynamic weight between them (§4, Algorithm 1).

- Local correlation L_LC (self-supervised): for R sampled subsets S of removed features,
  L_LC = (1 − corr_R(Σ_{i∈S} s_i, f(x) − f(x_{−S}))) / 2, averaged over the batch. Subsets are
  sampled from the explainer itself, feature i kept with probability σ(s_i), through a
  straight-through estimator (`BernoulliStraightThrough`). The target model is only queried,
  never differentiated, so any black box works.
- Pattern consistency L_PC: (1 − corr_d(s, a)) / 2 to a filtered prior map a.
- L_OBJ = α·L_PC + (1 − α)·L_LC with α from `DynamicWeight`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.deepfaith.metrics import Model, check_metric_inputs, class_probability
from iclr26.deepfaith.space import FeatureSpace

MASK_SAMPLING = ("explainer", "uniform")


def correlation(a: Tensor, b: Tensor, eps: float = 1e-8) -> Tensor:
    """Differentiable Pearson correlation along the last dimension."""
    a = a - a.mean(-1, keepdim=True)
    b = b - b.mean(-1, keepdim=True)
    return (a * b).sum(-1) / (a.square().sum(-1).sqrt() * b.square().sum(-1).sqrt() + eps)


class BernoulliStraightThrough(torch.autograd.Function):
    """Forward: the hard Bernoulli sample m. Backward: ∂m/∂p := m·p, clipped to [−1, 1] (the released
    code's estimator). Because it depends on the sample, it differs between runs and so survives
    the correlation, unlike the plain estimator ∂m/∂p := 1, whose term is the same in every run and
    cancels (a correlation ignores a shift shared by all runs)."""

    @staticmethod
    def forward(ctx, prob: Tensor, hard: Tensor) -> Tensor:
        ctx.save_for_backward(prob, hard)
        return hard

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        prob, hard = ctx.saved_tensors
        return (grad * hard * prob).clamp(-1.0, 1.0), None


def local_correlation_loss(
    s: Tensor,
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    *,
    runs: int = 16,
    sampling: str = "explainer",
    generator: torch.Generator | None = None,
    output: str = "probability",
) -> Tensor:
    """L_LC for explainer output s (B, d) at inputs x: removal subsets vs the model's output drop."""
    output = check_metric_inputs(model, space, x, target, s, output, attr_name="explainer output s")
    check_in("sampling", sampling, MASK_SAMPLING)
    check_int("runs", runs, 1)
    b, d = s.shape
    keep_prob = (
        torch.sigmoid(s)[:, None].expand(b, runs, d)
        if sampling == "explainer"
        else torch.full((b, runs, d), 0.5, device=s.device)
    )
    u = torch.rand(b, runs, d, generator=generator).to(s.device)
    hard = (u < keep_prob.detach()).float()
    keep = BernoulliStraightThrough.apply(keep_prob, hard) if sampling == "explainer" else hard
    with torch.no_grad():
        fx = class_probability(model, x, target, output)
        xs = space.keep(x, hard).reshape(b * runs, *space.shape)
        drop = fx[:, None] - class_probability(model, xs, target.repeat_interleave(runs), output).view(
            b, runs
        )
    removed_mass = (s[:, None] * (1 - keep)).sum(-1)  # Σ_{i∈S} s_i, S = the removed features
    return (1 - correlation(removed_mass, drop.to(s))).mean() / 2


def pattern_consistency_loss(s: Tensor, prior: Tensor) -> Tensor:
    """L_PC = (1 − corr(s, a)) / 2 per pair, averaged."""
    if s.shape != prior.shape:
        raise ValueError(
            f"explainer output {tuple(s.shape)} and prior maps {tuple(prior.shape)} differ in shape"
        )
    return (1 - correlation(s, prior)).mean() / 2


@dataclass
class DynamicWeight:
    """Algorithm 1's α: 1 until L_PC has converged, then a sigmoid decay towards 0.

    After each epoch t with mean pattern loss L_t: σ² = variance of the last `window` values.
    If not converged and σ² < ε: converged, t0 = t. If σ² > C·ε: not converged, α = 1.
    While converged: α = 1 − 1 / (1 + exp(−(t − t0)/C)).
    """

    epsilon: float = 1e-5
    c: float = 10.0
    window: int = 5
    alpha: float = 1.0
    converged: bool = False
    t0: int = 0
    history: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_interval("epsilon", self.epsilon, 0, closed=(False, True))
        check_interval("c", self.c, 0, closed=(False, True))
        check_int("window", self.window, 1)

    def update(self, t: int, pattern_loss: float) -> float:
        """Record epoch t's mean L_PC; return α for the next epoch."""
        self.history.append(float(pattern_loss))
        if len(self.history) < self.window:
            return self.alpha
        recent = self.history[-self.window :]
        mean = sum(recent) / len(recent)
        var = sum((v - mean) ** 2 for v in recent) / len(recent)
        if not self.converged and var < self.epsilon:
            self.converged, self.t0 = True, t
        if var > self.c * self.epsilon:
            self.converged, self.alpha = False, 1.0
        if self.converged:
            self.alpha = 1.0 - 1.0 / (1.0 + math.exp(-(t - self.t0) / self.c))
        return self.alpha
