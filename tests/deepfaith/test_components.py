"""Feature spaces, prior methods, dedup + filter, losses and the dynamic weight, tasks."""

import itertools

import pytest
import torch
from torch import nn

from iclr26.deepfaith.explainer import AmortizedExplainer, ExplainerConfig
from iclr26.deepfaith.objectives import (
    DynamicWeight,
    correlation,
    local_correlation_loss,
    pattern_consistency_loss,
)
from iclr26.deepfaith.priors import PRIOR_METHODS, explain, methods_for
from iclr26.deepfaith.space import FeatureSpace, image_space, tabular_space, token_space
from iclr26.deepfaith.supervision import deduplicate, faithfulness_filter, supervised_pairs
from iclr26.deepfaith.tasks import TASKS, load_task, sentiment_sentences, vader_lexicon

# --- feature spaces ------------------------------------------------------------------------------------


def test_image_space_patches_and_removal():
    space = image_space(1, 4, 4, patch=2, baseline=-1.0)
    assert space.d == 4 and space.group_size == 4
    assert space.groups[0].tolist() == [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]
    x = torch.arange(16.0).view(1, 1, 4, 4)
    out = space.remove(x, torch.tensor([[0.0, 1.0, 0.0, 0.0]]))
    assert out[0, 0, :2, 2:].eq(-1).all() and out[0, 0, :2, :2].equal(x[0, 0, :2, :2])
    many = space.keep(x, torch.ones(1, 3, 4))
    assert many.shape == (1, 3, 1, 4, 4) and many[0, 2].equal(x[0])
    tokens = space.tokens(x)
    assert tokens.shape == (1, 4, 4) and tokens[0, 1].tolist() == [2.0, 3.0, 6.0, 7.0]
    attr = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    assert space.from_elements(space.to_elements(attr)).equal(attr * 4)


def test_token_and_tabular_spaces():
    t = token_space(5, 3)
    assert t.d == 5 and t.group_size == 3 and t.baseline.eq(0).all()
    tab = tabular_space(4, baseline=torch.tensor([1.0, 2, 3, 4]))
    assert tab.remove(torch.zeros(1, 4), torch.ones(1, 4)).tolist() == [[1, 2, 3, 4]]


def test_space_errors():
    with pytest.raises(ValueError, match="equal sizes"):
        FeatureSpace((3,), torch.tensor([0, 0, 1]), torch.zeros(3))
    with pytest.raises(ValueError, match="no gaps"):
        FeatureSpace((2,), torch.tensor([0, 2]), torch.zeros(2))
    with pytest.raises(ValueError, match="must divide"):
        image_space(1, 5, 5, patch=2)
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        tabular_space(3).check([[1, 2, 3]])


# --- prior methods -------------------------------------------------------------------------------------


class Linear2(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = nn.Parameter(w, requires_grad=False)

    def forward(self, x):
        z = x.flatten(1) @ self.w
        return torch.stack([-z, z], -1)


def test_priors_recover_the_linear_contributions():
    gen = torch.Generator().manual_seed(0)
    w, x = torch.randn(6, generator=gen), torch.randn(5, 6, generator=gen)
    model, space, target = Linear2(w), tabular_space(6), torch.ones(5, dtype=torch.long)
    exact = w * x  # baseline 0: each feature's contribution to class 1's logit
    for method in ("input_x_gradient", "integrated_gradients", "deeplift", "occlusion", "kernel_shap"):
        a = explain(method, model, space, x, target)
        assert torch.allclose(a, exact, atol=1e-4), method
    assert torch.allclose(explain("saliency", model, space, x, target), w.expand(5, 6), atol=1e-6)
    lime = explain("lime", model, space, x, target)
    assert (torch.nn.functional.cosine_similarity(lime, exact) > 0.9).all()


def test_priors_on_an_image_model_aggregate_to_patches():
    task_space = image_space(1, 8, 8, patch=4)
    torch.manual_seed(0)
    from iclr26.deepfaith.tasks import SmallCNN

    model = SmallCNN(3, pool=False).eval()
    x = torch.rand(3, 1, 8, 8)
    target = model(x).argmax(-1)
    bg = torch.rand(4, 1, 8, 8)
    for method in methods_for("image"):
        a = explain(method, model, task_space, x, target, background=bg, cam_layer=model.cam_layer)
        assert a.shape == (3, 4) and torch.isfinite(a).all(), method
    # IG is complete: the patch attributions sum to the logit change from the baseline
    ig = explain("integrated_gradients", model, task_space, x, target)
    with torch.no_grad():
        change = model(x).gather(1, target[:, None])[:, 0] - model(torch.zeros_like(x))[:, target].diagonal()
    assert torch.allclose(ig.sum(-1), change, atol=0.05 * change.abs().max())


def test_prior_errors():
    space, x, target = tabular_space(3), torch.zeros(2, 3), torch.zeros(2, dtype=torch.long)
    model = Linear2(torch.ones(3))
    with pytest.raises(ValueError, match="unknown prior method"):
        explain("shap", model, space, x, target)
    with pytest.raises(TypeError, match=r"torch\.nn\.Module or a callable"):
        explain("saliency", 42, space, x, target)
    with pytest.raises(ValueError, match="x must have shape"):
        explain("saliency", model, space, torch.zeros(2, 4), target)
    with pytest.raises(ValueError, match="grad_cam needs an image model"):
        explain("grad_cam", model, space, x, target)
    with pytest.raises(ValueError, match="background"):
        explain("gradient_shap", model, space, x, target)
    assert "grad_cam" not in methods_for("text") and set(methods_for("image")) == set(PRIOR_METHODS)


# --- deduplication and filtering --------------------------------------------------------------------------


def test_deduplicate_in_quality_order():
    from iclr26.deepfaith.supervision import quality_order

    a = torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    maps = {"weak": a, "strong": 2 * a, "other": torch.tensor([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])}
    scores = {
        "FC": torch.tensor([[0.1, 0.9, 0.5], [0.9, 0.1, 0.5]]),
        "DEL": torch.tensor([[0.5, 0.1, 0.3]] * 2),
    }
    order = quality_order(scores, {"FC": True, "DEL": False})
    assert order[0].tolist() == [1, 2, 0]  # strong is best on both metrics for input 0
    keep = deduplicate(maps, 0.9, order=order)
    assert keep.tolist() == [[False, True, True], [True, False, True]]  # the better duplicate survives
    with pytest.raises(ValueError, match="order must have shape"):
        deduplicate(maps, 0.9, order=order[:, :2])


def test_deduplicate_keeps_the_first_of_each_group():
    a = torch.tensor([[1.0, 0.0, 0.0]])
    maps = {
        "a": a,
        "twice_a": 2 * a,
        "b": torch.tensor([[0.0, 1.0, 0.0]]),
        "near_b": torch.tensor([[0.05, 1.0, 0.0]]),
    }
    assert deduplicate(maps, 0.9).tolist() == [[True, False, True, False]]
    reordered = {k: maps[k] for k in ("twice_a", "a", "near_b", "b")}
    assert deduplicate(reordered, 0.9).tolist() == [[True, False, True, False]]
    assert deduplicate(maps, 1.0).tolist() == [[True, False, True, True]]  # only exact duplicates
    # per input: a pair that is a duplicate on one input need not be on another
    two = {"x": torch.tensor([[1.0, 0], [1, 0]]), "y": torch.tensor([[1.0, 0], [0, 1]])}
    assert deduplicate(two, 0.9).tolist() == [[True, False], [True, True]]
    with pytest.raises(ValueError, match="threshold"):
        deduplicate(maps, 0.0)


def test_filter_keeps_methods_passing_every_quantile():
    cand = torch.ones(1, 5, dtype=torch.bool)
    up = torch.tensor([[0.9, 0.8, 0.7, 0.6, 0.1]])  # higher is better: method 4 is worst
    down = torch.tensor([[0.1, 0.2, 0.9, 0.3, 0.2]])  # lower is better: method 2 is worst
    keep = faithfulness_filter({"FC": up, "DEL": down}, {"FC": True, "DEL": False}, cand, p=0.2)
    assert keep.tolist() == [[True, True, False, True, False]]
    assert faithfulness_filter({"FC": up}, {"FC": True}, cand, p=0.0).all()  # quantile 0 is the minimum
    # non-candidates stay out and do not move the quantile
    cand2 = torch.tensor([[True, True, True, True, False]])
    keep2 = faithfulness_filter({"FC": up}, {"FC": True}, cand2, p=0.5)
    assert keep2.tolist() == [[True, True, False, False, False]]
    with pytest.raises(ValueError, match="no direction"):
        faithfulness_filter({"FC": up}, {}, cand)
    with pytest.raises(ValueError, match="expected"):
        faithfulness_filter({"FC": up[:, :3]}, {"FC": True}, cand)


def test_supervised_pairs_are_one_per_kept_map():
    maps = {"a": torch.arange(6.0).view(2, 3), "b": -torch.arange(6.0).view(2, 3)}
    keep = torch.tensor([[True, True], [False, True]])
    pairs = supervised_pairs(maps, keep)
    assert pairs.index.tolist() == [0, 0, 1] and pairs.method.tolist() == [0, 1, 1]
    assert pairs.maps[2].tolist() == [-3.0, -4.0, -5.0] and pairs.counts() == {"a": 1, "b": 2}


# --- losses and the dynamic weight ----------------------------------------------------------------------


def test_correlation_and_pattern_loss():
    a = torch.tensor([[1.0, 2.0, 3.0]])
    assert correlation(a, 2 * a + 1).item() == pytest.approx(1.0, abs=1e-6)
    assert pattern_consistency_loss(a, -a).item() == pytest.approx(1.0, abs=1e-6)
    assert pattern_consistency_loss(a, 3 * a).item() == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="differ in shape"):
        pattern_consistency_loss(a, a[:, :2])


def test_local_correlation_loss_is_zero_for_the_exact_attribution():
    gen = torch.Generator().manual_seed(0)
    w, x = torch.randn(8, generator=gen), torch.randn(4, 8, generator=gen)
    model, space, target = Linear2(w), tabular_space(8), torch.ones(4, dtype=torch.long)
    exact = w * x  # for the logit: Δ(S) = Σ_{i∈S} e_i exactly
    for sampling in ("explainer", "uniform"):
        lc = local_correlation_loss(
            exact, model, space, x, target, runs=32, sampling=sampling, output="logit", generator=gen
        )
        assert lc.item() == pytest.approx(0.0, abs=1e-5)
        anti = local_correlation_loss(
            -exact, model, space, x, target, runs=32, sampling=sampling, output="logit", generator=gen
        )
        assert anti.item() == pytest.approx(1.0, abs=1e-5)
    s = torch.zeros(4, 8, requires_grad=True)
    local_correlation_loss(s + 0.01 * torch.randn(4, 8), model, space, x, target, generator=gen).backward()
    assert s.grad is not None and s.grad.abs().sum() > 0  # gradient reaches the explainer output


def test_straight_through_term_survives_the_correlation():
    # the mask term of the gradient must differ from "no estimator" (a constant ∂m/∂p would cancel)
    gen_w = torch.Generator().manual_seed(1)
    w, x = torch.randn(8, generator=gen_w), torch.randn(4, 8, generator=gen_w)
    model, space, target = Linear2(w), tabular_space(8), torch.ones(4, dtype=torch.long)
    grads = {}
    for name in ("explainer", "uniform"):
        s = torch.full((4, 8), 0.0, requires_grad=True)
        gen = torch.Generator().manual_seed(5)
        # same hard masks in both: σ(0) = ½ = the uniform probability, same random numbers
        local_correlation_loss(
            s + 0.1 * w * x, model, space, x, target, sampling=name, generator=gen
        ).backward()
        grads[name] = s.grad.clone()
    assert (grads["explainer"] - grads["uniform"]).abs().max() > 1e-4


def test_dynamic_weight_follows_algorithm_1():
    w = DynamicWeight(epsilon=1e-4, c=2.0, window=3)
    assert [w.update(t, 0.5 - 0.1 * t) for t in range(3)] == [1.0, 1.0, 1.0]  # still falling: α stays 1
    alphas = [w.update(t, 0.2) for t in range(3, 9)]
    assert w.converged and w.t0 == 5  # the last 3 values equal from t = 5 on
    assert alphas[2] == pytest.approx(0.5)  # α = 1 − 1/(1 + e^0) at t = t0
    assert all(a > b for a, b in itertools.pairwise(alphas[2:])) and alphas[-1] < 0.2
    assert w.update(9, 0.9) == 1.0 and not w.converged  # L_PC jumps: variance > C·ε resets α


# --- explainer ------------------------------------------------------------------------------------------


def test_explainer_shapes_conditioning_and_state():
    torch.manual_seed(0)
    space = image_space(1, 8, 8, patch=2)
    ex = AmortizedExplainer(space, 3, ExplainerConfig(width=16, depth=1, heads=2, ffn=32, dropout=0.0)).eval()
    x = torch.rand(5, 1, 8, 8)
    s0, s1 = ex(x, torch.zeros(5, dtype=torch.long)), ex(x, torch.ones(5, dtype=torch.long))
    assert s0.shape == (5, 16) and not torch.allclose(s0, s1)
    clone = AmortizedExplainer.from_state(ex.state()).eval()
    assert torch.equal(clone(x, torch.zeros(5, dtype=torch.long)), s0)
    with pytest.raises(ValueError, match="x must have shape"):
        ex(torch.rand(5, 1, 4, 4), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match="divide by heads"):
        ExplainerConfig(width=10, heads=3)


# --- tasks ----------------------------------------------------------------------------------------------


def test_sentiment_sentences_mark_the_lexicon_words():
    import numpy as np

    lexicon = vader_lexicon()
    assert lexicon["good"] > 0 and lexicon["horrible"] < 0
    vocab, sentences, labels, relevant = sentiment_sentences(50, 10, np.random.default_rng(0))
    assert vocab[0] == "<pad>" and len(sentences) == 50 and relevant.shape == (50, 10)
    for words, label, mask in zip(sentences, labels, relevant, strict=True):
        marked = [w for w, m in zip(words, mask, strict=True) if m]
        assert 1 <= len(marked) <= 3 and all(w in lexicon for w in marked)
        assert not any(w in lexicon for w, m in zip(words, mask, strict=True) if not m)
        assert label == int(sum(lexicon[w] for w in marked) > 0)


@pytest.mark.parametrize("name", ["wine", "sentiment"])
def test_tasks_train_good_target_models(name):
    task = load_task(name, seed=0)
    assert task.test_accuracy > 0.85
    task.space.check(task.x_test)
    if name == "sentiment":
        assert task.relevant_test.shape == (len(task.x_test), task.space.d)
    again = load_task(name, seed=0)
    assert torch.equal(task.model(task.x_test[:5]), again.model(again.x_test[:5]))  # seeded


def test_unknown_task():
    with pytest.raises(ValueError, match="unknown task"):
        load_task("imagenet")
    assert set(TASKS) == {"breast_cancer", "wine", "digits", "lfw", "sentiment"}
