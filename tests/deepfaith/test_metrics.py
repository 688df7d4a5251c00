"""The faithfulness metrics: analytic values on a linear model, agreement with quantus and captum."""

import math
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from iclr26.deepfaith.metrics import (
    METRICS,
    _prefix_masks,
    class_probability,
    deletion,
    evaluate,
    faithfulness_correlation,
    faithfulness_estimate,
    infidelity,
    insertion,
    irof,
    metrics_for,
    monotonicity_correlation,
    negative_perturbation,
    positive_perturbation,
    region_perturbation,
    superpixels,
)
from iclr26.deepfaith.space import image_space, tabular_space
from iclr26.deepfaith.tasks import SmallCNN


class Linear2(nn.Module):
    """logits = [0, w·x]: class 1's logit is linear, so Δ(S) = Σ_{i∈S} w_i x_i with baseline 0."""

    def __init__(self, w: torch.Tensor) -> None:
        super().__init__()
        self.w = w

    def forward(self, x):
        z = x.flatten(1) @ self.w
        return torch.stack([torch.zeros_like(z), z], -1)


@pytest.fixture
def linear():
    gen = torch.Generator().manual_seed(0)
    d = 10
    w = torch.rand(d, generator=gen) + 0.5  # positive weights and inputs: every contribution positive
    x = torch.rand(6, d, generator=gen) + 0.5
    space = tabular_space(d)
    target = torch.ones(6, dtype=torch.long)
    exact = w * x  # the faithful attribution: Σ_{i∈S} e_i = Δ(S) for every S
    return Linear2(w), space, x, target, exact


def test_exact_attribution_is_optimal_on_correlation_metrics(linear):
    model, space, x, target, exact = linear
    kw = {"output": "logit"}
    gen = torch.Generator().manual_seed(1)
    assert torch.allclose(
        faithfulness_correlation(model, space, x, target, exact, generator=gen, **kw), torch.ones(6)
    )
    assert torch.allclose(
        faithfulness_correlation(model, space, x, target, -exact, generator=gen, **kw), -torch.ones(6)
    )
    assert torch.allclose(faithfulness_estimate(model, space, x, target, exact, **kw), torch.ones(6))
    # MC: Spearman(e_j, (Δ_j / f)²) = 1 when every contribution is positive
    assert torch.allclose(monotonicity_correlation(model, space, x, target, exact, **kw), torch.ones(6))
    assert torch.allclose(
        infidelity(model, space, x, target, exact, generator=gen, **kw), torch.zeros(6), atol=1e-9
    )
    noisy = exact + torch.randn(6, 10, generator=gen)
    assert (infidelity(model, space, x, target, noisy, generator=gen, **kw) > 1e-3).all()


def test_infidelity_is_scale_free(linear):
    model, space, x, target, exact = linear
    subsets = (torch.rand(6, 32, 10, generator=torch.Generator().manual_seed(2)) < 0.5).float()
    a = infidelity(model, space, x, target, exact + 0.3, subsets=subsets, output="logit")
    b = infidelity(model, space, x, target, 7.0 * (exact + 0.3), subsets=subsets, output="logit")
    assert torch.allclose(a, b, rtol=1e-5)


def test_deletion_insertion_region_values_and_order(linear):
    model, space, x, target, exact = linear
    kw = {"output": "logit"}
    # DEL's curve: f(x) minus the k largest contributions, k = 0..d; trapezoid on [0, 1]
    sorted_e = exact.sort(-1, descending=True).values
    removed = torch.cat([torch.zeros(6, 1), sorted_e.cumsum(-1)], 1)
    f = exact.sum(-1, keepdim=True)
    expected = ((f - removed)[:, 1:] + (f - removed)[:, :-1]).sum(-1) / (2 * 10)
    assert torch.allclose(deletion(model, space, x, target, exact, **kw), expected, atol=1e-5)
    ins_expected = ((removed[:, 1:] + removed[:, :-1]).sum(-1)) / (2 * 10)
    assert torch.allclose(insertion(model, space, x, target, exact, **kw), ins_expected, atol=1e-5)
    # RP = mean over k = 1..⌈0.2·d⌉ of the removed mass
    full = region_perturbation(model, space, x, target, exact, regions=10, **kw)
    assert torch.allclose(full, removed[:, 1:].mean(-1), atol=1e-5)
    assert torch.allclose(
        region_perturbation(model, space, x, target, exact, **kw), removed[:, 1:3].mean(-1), atol=1e-5
    )
    # the exact order is the best possible for an additive model
    for seed in range(5):
        perm = torch.rand(6, 10, generator=torch.Generator().manual_seed(seed))
        assert (
            deletion(model, space, x, target, exact, **kw)
            <= deletion(model, space, x, target, perm, **kw) + 1e-6
        ).all()
        assert (
            insertion(model, space, x, target, exact, **kw)
            >= insertion(model, space, x, target, perm, **kw) - 1e-6
        ).all()
        assert (
            region_perturbation(model, space, x, target, exact, **kw)
            >= region_perturbation(model, space, x, target, perm, **kw) - 1e-6
        ).all()


def test_positive_negative_perturbation_order():
    # a model whose class flips: logits [1, w·x] with probability output
    gen = torch.Generator().manual_seed(3)
    w, x = torch.rand(8, generator=gen) + 0.5, torch.rand(5, 8, generator=gen) + 0.5
    model = lambda z: torch.stack([torch.ones(len(z)), z @ w], -1)  # noqa: E731
    space, target, exact = tabular_space(8), torch.ones(5, dtype=torch.long), w * x
    pos, pos_rev = (positive_perturbation(model, space, x, target, a) for a in (exact, -exact))
    neg, neg_rev = (negative_perturbation(model, space, x, target, a) for a in (exact, -exact))
    assert (pos <= pos_rev + 1e-6).all() and (neg >= neg_rev - 1e-6).all()
    assert (pos < pos_rev).any()


def test_frozen_after_flip_holds_the_value():
    # remove features one by one; once class 0 wins, POS's curve stays at the flip value
    w = torch.tensor([3.0, 1.0, 1.0])
    model = lambda z: torch.stack([torch.full((len(z),), 2.5), z @ w], -1)  # noqa: E731
    space, x, target = tabular_space(3), torch.ones(1, 3), torch.ones(1, dtype=torch.long)
    attr = torch.tensor([[3.0, 2.0, 1.0]])  # removes feature 0 first: logit 5 -> 2 < 2.5 flips
    p = torch.sigmoid(torch.tensor([5 - 2.5, 2 - 2.5]))  # before, at the flip
    expected = (p[0] + p[1]) / 2 / 3 + (p[1] + p[1]) / 2 * 2 / 3
    assert positive_perturbation(model, space, x, target, attr).item() == pytest.approx(
        expected.item(), rel=1e-5
    )


def test_irof_prefers_the_exact_attribution():
    gen = torch.Generator().manual_seed(4)
    w = torch.rand(64, generator=gen)
    x = torch.rand(3, 1, 8, 8, generator=gen)
    space = image_space(1, 8, 8)
    model, target = Linear2(w), torch.ones(3, dtype=torch.long)
    exact = w * x.flatten(1)
    assert (irof(model, space, x, target, exact) > irof(model, space, x, target, -exact)).all()


def test_prefix_masks():
    order = torch.tensor([[2, 0, 1]])
    m = _prefix_masks(order, 3, 1)
    assert m.tolist() == [[[0, 0, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1]]]


# --- agreement with quantus (and captum's infidelity) on a small CNN ------------------------------------


@pytest.fixture(scope="module")
def cnn_case():
    quantus = pytest.importorskip("quantus")
    if not hasattr(np, "trapz"):  # quantus 0.6 calls np.trapz, removed in numpy 2
        np.trapz = np.trapezoid
    torch.manual_seed(0)
    model = SmallCNN(10, pool=False).eval()
    with torch.no_grad():  # sharpen the random net, so output changes are well above float32 noise
        for p in model.parameters():
            p.mul_(4.0)
    x = torch.rand(12, 1, 8, 8, generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        target = model(x).argmax(-1)
    attr = torch.randn(12, 64, generator=torch.Generator().manual_seed(6))
    space = image_space(1, 8, 8)
    kw = {
        "model": model,
        "x_batch": x.numpy(),
        "y_batch": target.numpy(),
        "a_batch": attr.view(12, 1, 8, 8).numpy(),
        "device": "cpu",
        "softmax": True,
        "channel_first": True,
    }
    common = {"abs": False, "normalise": False, "perturb_baseline": 0.0, "disable_warnings": True}
    return quantus, model, space, x, target, attr, kw, common


def _q(metric, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(metric(**kw), dtype=float)


def test_faithfulness_estimate_matches_quantus(cnn_case):
    quantus, model, space, x, target, attr, kw, common = cnn_case
    ref = _q(quantus.FaithfulnessEstimate(features_in_step=1, **common), kw)
    assert np.allclose(faithfulness_estimate(model, space, x, target, attr).numpy(), ref, atol=1e-5)


def test_monotonicity_correlation_matches_quantus(cnn_case):
    quantus, model, space, x, target, attr, kw, common = cnn_case
    ref = _q(quantus.MonotonicityCorrelation(nr_samples=2, features_in_step=1, **common), kw)
    assert np.allclose(monotonicity_correlation(model, space, x, target, attr).numpy(), ref, atol=1e-5)


def test_region_perturbation_matches_quantus(cnn_case):
    quantus, model, space, x, target, attr, kw, common = cnn_case
    ref = _q(quantus.RegionPerturbation(patch_size=1, regions_evaluation=64, **common), kw).mean(1)
    assert np.allclose(region_perturbation(model, space, x, target, attr, regions=64).numpy(), ref, atol=1e-5)


def test_deletion_matches_quantus_pixel_flipping(cnn_case):
    quantus, model, space, x, target, attr, kw, common = cnn_case
    curve = _q(quantus.PixelFlipping(features_in_step=1, **common), kw)  # f after each removal
    full = np.concatenate([class_probability(model, x, target).numpy()[:, None], curve], 1)
    expected = (full[:, 1:] + full[:, :-1]).sum(1) / (2 * 64)
    assert np.allclose(deletion(model, space, x, target, attr).numpy(), expected, atol=1e-5)


def test_irof_matches_quantus(cnn_case):
    quantus, model, space, x, target, attr, kw, common = cnn_case
    ref = _q(quantus.IROF(return_aggregate=False, **common), kw)
    segments = superpixels(x)
    n = segments.reshape(len(x), -1).max(1) + 1
    assert np.allclose(irof(model, space, x, target, attr).numpy() * n, ref, atol=1e-4)


def test_faithfulness_correlation_matches_quantus_on_the_same_subsets(cnn_case):
    quantus, model, space, x, target, attr, kw, common = cnn_case
    runs, size = 20, 16
    np.random.seed(7)
    ref = _q(
        quantus.FaithfulnessCorrelation(nr_runs=runs, subset_size=size, return_aggregate=False, **common), kw
    )
    np.random.seed(7)  # replay quantus's draws: per run, one choice per input
    draws = [[np.random.choice(64, size, replace=False) for _ in range(len(x))] for _ in range(runs)]
    subsets = torch.zeros(len(x), runs, 64)
    for r, per_input in enumerate(draws):
        for i, idx in enumerate(per_input):
            subsets[i, r, torch.from_numpy(idx)] = 1.0
    ours = faithfulness_correlation(model, space, x, target, attr, subsets=subsets)
    assert np.allclose(ours.numpy(), ref, atol=1e-5)


def test_infidelity_matches_captum():
    from captum.metrics import infidelity as captum_infidelity

    torch.manual_seed(0)
    model = SmallCNN(2, pool=True).eval()
    space = image_space(1, 25, 25, patch=5)
    x = torch.rand(4, 1, 25, 25, generator=torch.Generator().manual_seed(8))
    with torch.no_grad():
        target = model(x).argmax(-1)
    attr = torch.randn(4, 25, generator=torch.Generator().manual_seed(9))
    runs = 10
    subsets = (torch.rand(4, runs, 25, generator=torch.Generator().manual_seed(10)) < 0.5).float()

    def perturb(inputs):  # captum repeats each input `runs` times in a row; our removal, zero baseline
        mask = space.expand(subsets.reshape(4 * runs, 25))
        return mask, inputs - inputs * mask

    ref = captum_infidelity(
        lambda z: torch.softmax(model(z), -1),
        perturb,
        x,
        space.to_elements(attr) / space.group_size,  # Σ over a feature's pixels = its attribution
        target=target,
        n_perturb_samples=runs,
        normalize=True,
    )
    assert torch.allclose(
        infidelity(model, space, x, target, attr, subsets=subsets), ref.float(), rtol=1e-4, atol=1e-8
    )


# --- the registry and its errors -----------------------------------------------------------------------


def test_registry_directions_and_modalities():
    assert len(METRICS) == 10
    assert {n for n, m in METRICS.items() if not m.higher_is_better} == {"DEL", "POS", "INF"}
    assert "IROF" not in metrics_for("tabular") and "IROF" in metrics_for("image")
    assert len(metrics_for("text")) == 9


def test_evaluate_errors(linear):
    model, space, x, target, exact = linear
    with pytest.raises(ValueError, match="does not support tabular"):
        evaluate("IROF", model, space, x, target, exact, modality="tabular")
    with pytest.raises(ValueError, match="unknown metric"):
        evaluate("AUC", model, space, x, target, exact, modality="tabular")
    with pytest.raises(TypeError, match=r"torch\.nn\.Module or a callable"):
        evaluate("FC", "not a model", space, x, target, exact, modality="tabular")
    with pytest.raises(ValueError, match=r"x must have shape \(batch, 10\)"):
        evaluate("FC", model, space, x[:, :5], target, exact, modality="tabular")
    with pytest.raises(ValueError, match="one value per feature"):
        evaluate("FC", model, space, x, target, exact[:, :3], modality="tabular")
    with pytest.raises(ValueError, match="output must be one of"):
        evaluate("FE", model, space, x, target, exact, modality="tabular", output="log")
    with pytest.raises(ValueError, match="IROF needs images"):
        irof(model, space, x, target, exact)


def test_evaluate_is_seeded(linear):
    model, space, x, target, _ = linear
    attr = torch.randn(6, 10, generator=torch.Generator().manual_seed(11))
    a = evaluate("FC", model, space, x, target, attr, modality="tabular", seed=3)
    b = evaluate("FC", model, space, x, target, attr, modality="tabular", seed=3)
    assert torch.equal(a, b) and not math.isnan(float(a.sum()))


PUBLIC_METRICS = [m.fn for m in METRICS.values() if m.name != "IROF"]


@pytest.mark.parametrize("fn", PUBLIC_METRICS, ids=lambda f: f.__name__)
def test_every_metric_validates_its_output_mode_first(linear, fn):
    model, space, x, target, exact = linear
    random = fn in (faithfulness_correlation, infidelity)
    kw = {"generator": torch.Generator().manual_seed(0)} if random else {}
    with pytest.raises(ValueError, match=r"output must be one of 'probability', 'logit', got 'probabilty'"):
        fn(model, space, x, target, exact, output="probabilty", **kw)
    # "prob" scores the probability, as it says (it used to fall through to the logits)
    kw2 = {"generator": torch.Generator().manual_seed(0)} if kw else {}
    assert torch.equal(
        fn(model, space, x, target, exact, output="prob", **kw), fn(model, space, x, target, exact, **kw2)
    )


@pytest.mark.parametrize(
    "fn",
    [
        faithfulness_estimate,
        monotonicity_correlation,
        deletion,
        insertion,
        positive_perturbation,
        negative_perturbation,
    ],
    ids=lambda f: f.__name__,
)
def test_step_must_be_a_positive_int(linear, fn):
    model, space, x, target, exact = linear
    for bad in (0, -2, 1.5):
        with pytest.raises(ValueError, match=rf"step must be an int >= 1, got {bad}"):
            fn(model, space, x, target, exact, step=bad)


def test_metric_argument_errors(linear):
    model, space, x, target, exact = linear
    with pytest.raises(ValueError, match="runs must be an int >= 1, got 0"):
        faithfulness_correlation(model, space, x, target, exact, runs=0)
    with pytest.raises(ValueError, match=r"subset_fraction must be a finite number in \(0, 1\]"):
        faithfulness_correlation(model, space, x, target, exact, subset_fraction=1.5)
    with pytest.raises(ValueError, match=r"subsets must have shape \(6, runs, 10\)"):
        infidelity(model, space, x, target, exact, subsets=torch.ones(6, 4, 3))
    with pytest.raises(ValueError, match=r"regions must be an int in \[1, 10\]"):
        region_perturbation(model, space, x, target, exact, regions=11)
    with pytest.raises(ValueError, match=r"target must have shape \(6,\)"):
        deletion(model, space, x, target[:3], exact)
    with pytest.raises(ValueError, match=r"torch\.long"):
        deletion(model, space, x, target.float(), exact)
    with pytest.raises(ValueError, match="chunk must be an int >= 1"):
        class_probability(model, x, target, chunk=0)


def test_probability_of_a_single_logit_is_refused(linear):
    _, space, x, _, exact = linear
    one = lambda z: z.sum(-1, keepdim=True)  # noqa: E731  (one output column)
    zeros = torch.zeros(6, dtype=torch.long)
    with pytest.raises(ValueError, match=r"output='probability' needs a model with at least 2 class logits"):
        deletion(one, space, x, zeros, exact)
    assert deletion(one, space, x, zeros, exact, output="logit").shape == (6,)
