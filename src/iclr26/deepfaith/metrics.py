"""The ten faithfulness metrics of DeepFaith, in one notation, batched in torch.

Notation (DeepFaith §3, re-formalized; our reading of it, see the README): an input x with d
features, its explanation e ∈ R^d for the class c the model predicts, f(x) = p_c(x) the softmax
probability of c, and x_{−S} the input with the features in S set to the baseline x̄
(`FeatureSpace.remove`). Every metric compares attribution mass Σ_{i∈S} e_i with the output change
Δ(S) = f(x) − f(x_{−S}) over a family of subsets S — random subsets (FC, INF), single features
(FE, MC), or the prefixes of the attribution order (RP, INS, DEL, NEG, POS, IROF). An explanation
with Σ_{i∈S} e_i = Δ(S) for every S is optimal for all of them at once.

Each function returns one score per input, shape (B,). `METRICS` records each metric's direction
(higher or lower is better) and the modalities it applies to.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.deepfaith.space import FeatureSpace

Model = nn.Module | Callable[[Tensor], Tensor]


MODALITIES = ("tabular", "image", "text")
OUTPUTS = ("probability", "logit")
# other spellings callers use; any other output is an error, never a silent fallback to the logits
OUTPUT_ALIASES = {"prob": "probability", "logits": "logit"}


def check_model(model: object) -> None:
    """Raise if `model` is neither a torch module nor a callable on tensors."""
    if not isinstance(model, nn.Module) and not callable(model):
        raise TypeError(
            f"model must be a torch.nn.Module or a callable on tensors, got {type(model).__name__}"
        )


def check_output(output: object) -> str:
    """The output a metric scores: "probability" (softmax of the logits, also spelt "prob") or
    "logit" (the raw class logit, also "logits"); anything else is an error listing them."""
    if isinstance(output, str):
        output = OUTPUT_ALIASES.get(output, output)
    return check_in("output", output, OUTPUTS)


def check_metric_inputs(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    output: object,
    attr_name: str = "attribution",
) -> str:
    """Check what every metric takes (a model, a batch of inputs of `space`, one target class and one
    (B, d) attribution per input, an output mode) before any work; returns the output mode."""
    check_model(model)
    space.check(x)
    space.check_attribution(attr, len(x), name=attr_name)
    check_target(target, len(x))
    return check_output(output)


def check_target(target: object, batch: int) -> None:
    """Raise unless `target` is a (batch,) tensor of integer class indices."""
    if not isinstance(target, Tensor) or target.shape != (batch,):
        got = tuple(target.shape) if isinstance(target, Tensor) else type(target).__name__
        raise ValueError(f"target must have shape ({batch},), got {got}")
    if target.dtype != torch.long:
        raise ConfigError(f"target must hold class indices as torch.long, got dtype {target.dtype}")


def _logits(model: Model, x: Tensor, chunk: int = 8192) -> Tensor:
    """model(x) as float, in chunks, without gradients."""
    check_model(model)
    with torch.no_grad():
        return torch.cat([model(c).float() for c in x.split(chunk)]) if len(x) else torch.zeros(0, 1)


def _class_scores(logits: Tensor, target: Tensor, output: str) -> Tensor:
    """The target class's softmax probability (or raw logit) per row."""
    output = check_output(output)
    if logits.dim() != 2:
        raise ValueError(f"the model must return logits of shape (batch, classes), got {tuple(logits.shape)}")
    if output == "probability":
        if len(logits) and logits.shape[1] < 2:  # softmax over one logit is 1 whatever the input
            raise ConfigError(
                f"output='probability' needs a model with at least 2 class logits, got logits of shape "
                f"{tuple(logits.shape)}; score the raw logit with output='logit'"
            )
        logits = torch.softmax(logits, -1)
    return logits.gather(1, target[:, None])[:, 0]


def class_probability(
    model: Model, x: Tensor, target: Tensor, output: str = "probability", chunk: int = 8192
) -> Tensor:
    """f(x) = softmax(model(x))[target] (or the raw logit) for a batch, in chunks without gradients."""
    output = check_output(output)
    check_int("chunk", chunk, 1)
    if len(x) == 0:
        return torch.zeros(0)
    return _class_scores(_logits(model, x, chunk), target, output)


def _scores(
    model: Model, space: FeatureSpace, x: Tensor, target: Tensor, keep: Tensor, output: str
) -> Tensor:
    """f(x_S) for every kept-feature mask: keep (B, K, d) -> (B, K)."""
    b, k = keep.shape[:2]
    xs = space.keep(x, keep).reshape(b * k, *space.shape)
    return class_probability(model, xs, target.repeat_interleave(k), output).view(b, k)


def pearson(a: Tensor, b: Tensor, eps: float = 1e-12) -> Tensor:
    """Pearson correlation along the last dimension; 0 where either side is constant."""
    a = a.double() - a.double().mean(-1, keepdim=True)
    b = b.double() - b.double().mean(-1, keepdim=True)
    den = (a.square().sum(-1) * b.square().sum(-1)).sqrt()
    return torch.where(den > eps, (a * b).sum(-1) / den.clamp_min(eps), torch.zeros_like(den)).float()


def spearman(a: Tensor, b: Tensor) -> Tensor:
    """Spearman correlation along the last dimension (ties get their average rank)."""
    from scipy.stats import rankdata

    ra = torch.from_numpy(rankdata(a.double().cpu().numpy(), axis=-1))
    rb = torch.from_numpy(rankdata(b.double().cpu().numpy(), axis=-1))
    return pearson(ra, rb).to(a.device)


def _prefix_masks(order: Tensor, d: int, step: int, include_empty: bool = True) -> Tensor:
    """(B, d) feature order -> (B, T, d) masks of the first 0, step, 2·step, ..., d features."""
    b = order.shape[0]
    counts = [*range(0 if include_empty else step, d, step), d]
    rank = torch.empty_like(order)
    rank.scatter_(1, order, torch.arange(d, device=order.device).expand(b, d))  # position of each feature
    return torch.stack([(rank < c) for c in counts], 1).float()


def _check_subsets(subsets: Tensor | None, attr: Tensor) -> None:
    """Given subsets must be (B, R, d) masks for the (B, d) attribution."""
    if subsets is not None and (
        not isinstance(subsets, Tensor) or subsets.dim() != 3 or subsets.shape[::2] != attr.shape
    ):
        got = tuple(subsets.shape) if isinstance(subsets, Tensor) else type(subsets).__name__
        raise ValueError(f"subsets must have shape ({attr.shape[0]}, runs, {attr.shape[1]}), got {got}")


def _auc(curve: Tensor) -> Tensor:
    """Trapezoid area under a curve sampled at evenly spaced points of [0, 1]."""
    n = curve.shape[-1] - 1
    return (curve[..., 1:] + curve[..., :-1]).sum(-1) / (2 * n)


def faithfulness_correlation(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    runs: int = 64,
    subset_fraction: float = 0.25,
    generator: torch.Generator | None = None,
    subsets: Tensor | None = None,
) -> Tensor:
    """FC (Bhatt et al. 2020): corr over random S with |S| = ⌈fraction·d⌉ of Σ_{i∈S} e_i and Δ(S). ↑"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("runs", runs, 1)
    check_interval("subset_fraction", subset_fraction, 0, 1, closed=(False, True))
    _check_subsets(subsets, attr)
    b, d = attr.shape
    if subsets is None:
        k = max(1, math.ceil(subset_fraction * d))
        noise = torch.rand(b, runs, d, generator=generator)
        subsets = torch.zeros(b, runs, d).scatter_(2, noise.argsort(-1)[..., :k], 1.0)
    subsets = subsets.to(attr.device)
    fx = class_probability(model, x, target, output)
    delta = fx[:, None] - _scores(model, space, x, target, 1 - subsets, output)
    return pearson((subsets * attr[:, None]).sum(-1), delta)


def faithfulness_estimate(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    step: int = 1,
) -> Tensor:
    """FE (Alvarez-Melis & Jaakkola 2018): corr over the groups G_j of `step` features taken in
    descending attribution order of Σ_{i∈G_j} e_i and Δ(G_j), each group removed alone. ↑"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("step", step, 1)
    groups = _step_groups(attr.argsort(-1, descending=True), step)
    fx = class_probability(model, x, target, output)
    delta = fx[:, None] - _scores(model, space, x, target, 1 - groups, output)
    return pearson((groups * attr[:, None]).sum(-1), delta)


def monotonicity_correlation(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    step: int = 1,
    eps: float = 1e-5,
) -> Tensor:
    """MC (Nguyen & Martínez 2020): Spearman corr over groups G_j (ascending attribution order) of
    Σ_{i∈G_j} e_i and the relative squared change (Δ(G_j)/f(x))². ↑"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("step", step, 1)
    check_interval("eps", eps, 0, closed=(False, True))
    groups = _step_groups(attr.argsort(-1), step)
    fx = class_probability(model, x, target, output)
    inv = torch.where(fx.abs() >= eps, 1 / fx.abs().clamp_min(eps), torch.ones_like(fx)) ** 2
    change = (_scores(model, space, x, target, 1 - groups, output) - fx[:, None]).square() * inv[:, None]
    return spearman((groups * attr[:, None]).sum(-1), change)


def _step_groups(order: Tensor, step: int) -> Tensor:
    """(B, d) order -> (B, ⌈d/step⌉, d) one-hot masks of consecutive `step`-sized groups."""
    b, d = order.shape
    n = math.ceil(d / step)
    group_of = torch.empty_like(order)
    group_of.scatter_(1, order, (torch.arange(d, device=order.device) // step).expand(b, d))
    return (group_of[:, None, :] == torch.arange(n, device=order.device)[None, :, None]).float()


def region_perturbation(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    regions: int | None = None,
    region_fraction: float = 0.2,
) -> Tensor:
    """RP (Samek et al. 2015): AOPC, the mean over k = 1..K of Δ(top-k features), most relevant first,
    with K = `regions` or ⌈fraction·d⌉ (over all d regions AOPC would be DEL's curve again). ↑"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("regions", regions, 1, attr.shape[1], optional=True)
    check_interval("region_fraction", region_fraction, 0, 1, closed=(False, True))
    d = attr.shape[1]
    k = regions or max(1, math.ceil(region_fraction * d))
    masks = _prefix_masks(attr.argsort(-1, descending=True), d, 1, include_empty=False)[:, :k]
    fx = class_probability(model, x, target, output)
    return (fx[:, None] - _scores(model, space, x, target, 1 - masks, output)).mean(-1)


def deletion(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    step: int = 1,
) -> Tensor:
    """DEL (Petsiuk et al. 2018): AUC of f(x_{−top k}) as k grows from 0 to d. ↓"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("step", step, 1)
    masks = _prefix_masks(attr.argsort(-1, descending=True), attr.shape[1], step)
    return _auc(_scores(model, space, x, target, 1 - masks, output))


def insertion(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    step: int = 1,
) -> Tensor:
    """INS (Petsiuk et al. 2018): AUC of f(x̄ with the top k features inserted) as k grows. ↑"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("step", step, 1)
    masks = _prefix_masks(attr.argsort(-1, descending=True), attr.shape[1], step)
    return _auc(_scores(model, space, x, target, masks, output))


def _frozen_after_flip(
    model: Model, space: FeatureSpace, x: Tensor, target: Tensor, keep: Tensor, output: str
) -> Tensor:
    """f along a removal path, held at its value from the first step where the prediction leaves c."""
    b, k = keep.shape[:2]
    logits = _logits(model, space.keep(x, keep).reshape(b * k, *space.shape))
    prob = _class_scores(logits, target.repeat_interleave(k), output).view(b, k)
    flipped = (logits.argmax(-1).view(b, k) != target[:, None]).cummax(1).values
    first = torch.where(
        flipped.any(1), flipped.float().argmax(1), torch.full((b,), k - 1, device=prob.device)
    )
    held = prob.gather(1, first[:, None])
    return torch.where(flipped, held, prob)


def positive_perturbation(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    step: int = 1,
) -> Tensor:
    """POS: AUC of f as the most relevant features are removed first, frozen once the class flips. ↓"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("step", step, 1)
    masks = _prefix_masks(attr.argsort(-1, descending=True), attr.shape[1], step)
    return _auc(_frozen_after_flip(model, space, x, target, 1 - masks, output))


def negative_perturbation(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    step: int = 1,
) -> Tensor:
    """NEG: AUC of f as the least relevant features are removed first, frozen once the class flips. ↑"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("step", step, 1)
    masks = _prefix_masks(attr.argsort(-1), attr.shape[1], step)
    return _auc(_frozen_after_flip(model, space, x, target, 1 - masks, output))


def superpixels(x: Tensor, n_segments: int = 100) -> np.ndarray:
    """SLIC segments (B, H, W) of a batch of (C, H, W) images, numbered from 0."""
    check_int("n_segments", n_segments, 1)
    from skimage.segmentation import slic

    out = []
    for img in x.detach().cpu().double().numpy():  # (H, W, C) with channel_axis=-1, as quantus segments
        out.append(slic(np.moveaxis(img, 0, -1), n_segments=n_segments, start_label=0, channel_axis=-1))
    return np.stack(out)


def irof(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    segments: np.ndarray | None = None,
) -> Tensor:
    """IROF (Rieger & Hansen 2020): SLIC superpixels removed in descending mean attribution; the
    area over the curve of f(x_{−segments})/f(x), divided by the number of segments. ↑ (images)"""
    output = check_metric_inputs(model, space, x, target, attr, output)
    if len(space.shape) != 3:
        raise ValueError(
            f"IROF needs images (C, H, W) to segment into superpixels, got input shape {space.shape}"
        )
    segments = superpixels(x) if segments is None else segments
    pixel_attr = space.to_elements(attr).mean(1).cpu().numpy()  # (B, H, W), averaged over channels
    fx = class_probability(model, x, target, output)
    out = []
    for i in range(len(x)):
        seg = segments[i]
        n = int(seg.max()) + 1
        seg_attr = np.array([pixel_attr[i][seg == s].mean() for s in range(n)])
        order = np.argsort(-seg_attr, kind="stable")
        removed = np.cumsum(np.stack([seg == s for s in order]), 0) > 0  # (n, H, W)
        keep = torch.from_numpy(~removed).float()[:, None].expand(n, *space.shape).to(x.device)
        base = space.baseline.to(x)
        xs = keep * x[i] + (1 - keep) * base
        curve = class_probability(model, xs, target[i].expand(n), output) / fx[i]
        out.append(n - float(torch.trapezoid(curve)))  # quantus's form: AOC over n points at spacing 1
    n_segments = torch.tensor([float(segments[i].max() + 1) for i in range(len(x))])
    return (torch.tensor(out) / n_segments).to(x.device)


def infidelity(
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    output: str = "probability",
    runs: int = 64,
    generator: torch.Generator | None = None,
    subsets: Tensor | None = None,
) -> Tensor:
    """INF (Yeh et al. 2019), with removal perturbations S ~ Bernoulli(½) and the optimal scale β:
    E[(β·Σ_{i∈S} e_i − Δ(S))²], β = E[Σ_S e · Δ] / E[(Σ_S e)²] (captum's `normalize=True`). ↓

    The perturbation is the indicator of S, as for attributions that already include the input
    (IG, SHAP, Occlusion): Iᵀe = Σ_{i∈S} e_i. Quantus weights by the input, Σ_{i∈S} e_i (x_i − x̄_i),
    which suits gradient-like maps instead."""
    output = check_metric_inputs(model, space, x, target, attr, output)
    check_int("runs", runs, 1)
    _check_subsets(subsets, attr)
    b, d = attr.shape
    if subsets is None:
        subsets = (torch.rand(b, runs, d, generator=generator) < 0.5).float()
    subsets = subsets.to(attr.device)
    fx = class_probability(model, x, target, output)
    delta = (fx[:, None] - _scores(model, space, x, target, 1 - subsets, output)).double()
    mass = (subsets * attr[:, None]).sum(-1).double()
    beta = (mass * delta).mean(-1) / mass.square().mean(-1).clamp_min(1e-30)
    beta = torch.where(mass.square().mean(-1) > 1e-30, beta, torch.zeros_like(beta))
    return (beta[:, None] * mass - delta).square().mean(-1).float()


@dataclass(frozen=True)
class Metric:
    """A faithfulness metric: its function, its direction, the modalities it applies to."""

    name: str
    fn: Callable[..., Tensor]
    higher_is_better: bool
    modalities: tuple[str, ...] = MODALITIES
    random: bool = False  # takes a `generator`


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("FC", faithfulness_correlation, True, random=True),
        Metric("FE", faithfulness_estimate, True),
        Metric("MC", monotonicity_correlation, True),
        Metric("RP", region_perturbation, True),
        Metric("INS", insertion, True),
        Metric("DEL", deletion, False),
        Metric("NEG", negative_perturbation, True),
        Metric("POS", positive_perturbation, False),
        Metric("IROF", irof, True, modalities=("image",)),
        Metric("INF", infidelity, False, random=True),
    )
}


def metrics_for(modality: str) -> tuple[str, ...]:
    """Names of the metrics that apply to a modality."""
    check_in("modality", modality, MODALITIES)
    return tuple(n for n, m in METRICS.items() if modality in m.modalities)


def evaluate(
    name: str,
    model: Model,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    attr: Tensor,
    *,
    modality: str,
    seed: int = 0,
    **kw,
) -> Tensor:
    """Score `attr` on metric `name` (one value per input), after checking every argument."""
    if name not in METRICS:
        raise ConfigError(f"unknown metric {name!r}; choose from {tuple(METRICS)}")
    metric = METRICS[name]
    check_in("modality", modality, MODALITIES)
    if modality not in metric.modalities:
        raise ConfigError(f"metric {name} does not support {modality} inputs (supports {metric.modalities})")
    kw["output"] = check_metric_inputs(model, space, x, target, attr, kw.get("output", "probability"))
    check_int("seed", seed)
    if metric.random:
        kw.setdefault("generator", torch.Generator().manual_seed(seed))
    return metric.fn(model, space, x, target, attr.float().to(x.device), **kw)
