"""Prior explanation methods (captum), returned as (B, d) feature attributions.

Gradient methods give one value per input element; a feature's attribution is the sum over its
elements (so completeness-style methods stay complete at the feature level). Perturbation
methods (Occlusion, KernelSHAP, LIME) perturb whole features through a captum `feature_mask`, so
every element of a feature carries the same value; a feature's attribution is that value.
Grad-CAM (image tasks only) is the class-activation map of the last convolution, upsampled to the
input and averaged over each feature's pixels.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from iclr26.core.config import ConfigError
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.deepfaith.metrics import MODALITIES, check_model, check_target
from iclr26.deepfaith.space import FeatureSpace

PRIOR_METHODS = (
    "saliency",
    "input_x_gradient",
    "integrated_gradients",
    "deeplift",
    "gradient_shap",
    "occlusion",
    "kernel_shap",
    "lime",
    "grad_cam",
)
IMAGE_ONLY = frozenset({"grad_cam"})


@dataclass(frozen=True)
class PriorConfig:
    """Sample budgets of the sampling-based methods."""

    ig_steps: int = 32
    """Riemann steps of Integrated Gradients"""
    shap_baselines: int = 8
    """GradientSHAP: training inputs used as the baseline distribution"""
    shap_samples: int = 8
    """GradientSHAP: noisy samples per baseline draw"""
    kernel_samples: int = 128
    """KernelSHAP / LIME: perturbed inputs per explained input"""
    lime_width: float = 0.75
    """LIME's exponential kernel width on the cosine distance"""
    batch: int = 64
    """inputs per captum call"""

    def __post_init__(self) -> None:
        for name in ("ig_steps", "shap_baselines", "shap_samples", "kernel_samples", "batch"):
            check_int(name, getattr(self, name), 1)
        check_interval("lime_width", self.lime_width, 0, closed=(False, True))


def methods_for(modality: str) -> tuple[str, ...]:
    """The prior methods that apply to a modality (Grad-CAM needs a convolutional image model)."""
    check_in("modality", modality, MODALITIES)
    return tuple(m for m in PRIOR_METHODS if m not in IMAGE_ONLY or modality == "image")


def explain(
    method: str,
    model: nn.Module | Callable[[Tensor], Tensor],
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    *,
    background: Tensor | None = None,
    cam_layer: nn.Module | None = None,
    cfg: PriorConfig = PriorConfig(),
    seed: int = 0,
) -> Tensor:
    """Attributions (B, d) of `method` for the logits of `target` at inputs `x`."""
    import captum.attr as ca

    check_model(model)
    if method not in PRIOR_METHODS:
        raise ConfigError(f"unknown prior method {method!r}; choose from {PRIOR_METHODS}")
    space.check(x)
    check_target(target, len(x))
    if not isinstance(cfg, PriorConfig):
        raise TypeError(f"cfg must be a PriorConfig, got {type(cfg).__name__}")
    forward = model if isinstance(model, nn.Module) else _Wrapped(model)
    base = space.baseline.unsqueeze(0).to(x)
    feature_mask = space.groups.unsqueeze(0).to(x.device)
    gen = torch.Generator().manual_seed(seed)
    out = []
    warnings.filterwarnings(
        "ignore", message="You are providing multiple inputs for Lime"
    )  # one fit per input is intended
    for start in range(0, len(x), cfg.batch):
        xb = x[start : start + cfg.batch].detach().clone().requires_grad_(True)
        tb = target[start : start + cfg.batch]
        torch.manual_seed(
            int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
        )  # captum samples with torch's RNG
        if method == "saliency":
            a = ca.Saliency(forward).attribute(xb, target=tb, abs=False)
            out.append(space.from_elements(a))
        elif method == "input_x_gradient":
            out.append(space.from_elements(ca.InputXGradient(forward).attribute(xb, target=tb)))
        elif method == "integrated_gradients":
            a = ca.IntegratedGradients(forward).attribute(xb, baselines=base, target=tb, n_steps=cfg.ig_steps)
            out.append(space.from_elements(a))
        elif method == "deeplift":
            with _quiet("Setting forward, backward hooks"):  # a general caution; no module is reused here
                out.append(space.from_elements(ca.DeepLift(forward).attribute(xb, baselines=base, target=tb)))
        elif method == "gradient_shap":
            if background is None:
                raise ValueError("gradient_shap needs `background` inputs for its baseline distribution")
            bg = background[: cfg.shap_baselines].to(x)
            a = ca.GradientShap(forward).attribute(xb, baselines=bg, target=tb, n_samples=cfg.shap_samples)
            out.append(space.from_elements(a))
        elif method == "occlusion":
            a = ca.FeatureAblation(forward).attribute(
                xb, baselines=base, target=tb, feature_mask=feature_mask
            )
            out.append(space.from_elements(a) / space.group_size)
        elif method == "kernel_shap":
            with _quiet("You are providing multiple inputs for Lime"):  # one surrogate per input is intended
                a = ca.KernelShap(forward).attribute(
                    xb, baselines=base, target=tb, feature_mask=feature_mask, n_samples=cfg.kernel_samples
                )
            out.append(space.from_elements(a) / space.group_size)
        elif method == "lime":
            lime = ca.Lime(
                forward,
                similarity_func=ca._core.lime.get_exp_kernel_similarity_function("cosine", cfg.lime_width),
            )
            a = lime.attribute(
                xb, baselines=base, target=tb, feature_mask=feature_mask, n_samples=cfg.kernel_samples
            )
            out.append(space.from_elements(a) / space.group_size)
        else:  # grad_cam
            if cam_layer is None or len(space.shape) != 3:
                raise ValueError("grad_cam needs an image model and its last convolution as `cam_layer`")
            cam = ca.LayerGradCam(forward, cam_layer).attribute(xb, target=tb, relu_attributions=True)
            cam = ca.LayerAttribution.interpolate(cam, space.shape[1:], interpolate_mode="bilinear")
            cam = cam.expand(-1, *space.shape)
            out.append(space.from_elements(cam) / space.group_size)
    return torch.cat(out).detach().float()


@contextmanager
def _quiet(message: str) -> Iterator[None]:
    """Silence one captum warning that does not apply here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=message)
        yield


class _Wrapped(nn.Module):
    """A plain callable as a module, so captum can hook it."""

    def __init__(self, fn: Callable[[Tensor], Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: Tensor) -> Tensor:
        return self.fn(x)


def explain_all(
    methods: tuple[str, ...],
    model: nn.Module,
    space: FeatureSpace,
    x: Tensor,
    target: Tensor,
    **kw,
) -> tuple[dict[str, Tensor], dict[str, float]]:
    """Attributions of every method and each method's wall time per input (seconds)."""
    maps, seconds = {}, {}
    for m in methods:
        t0 = time.perf_counter()
        maps[m] = explain(m, model, space, x, target, **kw)
        if x.is_cuda:
            torch.cuda.synchronize()  # time the work, not its launch
        seconds[m] = (time.perf_counter() - t0) / max(len(x), 1)
    return maps, seconds
