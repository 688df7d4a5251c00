"""DeepFaith: a faithfulness-guided amortized explainer (arXiv 2508.03586, ICLR 2026 "Learning for
Highly Faithful Explainability").

Public API:
- `FeatureSpace` and `tabular_space` / `image_space` / `token_space`: what a feature is and how it is removed;
- `METRICS` / `evaluate(name, model, space, x, target, attr, modality=...)`: the ten faithfulness metrics;
- `explain(method, model, space, x, target)`: the captum prior methods as (B, d) attributions;
- `deduplicate`, `faithfulness_filter`, `supervised_pairs`: the supervisory signal;
- `AmortizedExplainer`, `train_explainer`, `local_correlation_loss`, `pattern_consistency_loss`,
  `DynamicWeight`: the explainer and its training;
- `load_task(name)`: the bundled tasks with their trained target models; `SYSTEM` for `iclr26 run deepfaith`.
"""

from dataclasses import replace

from iclr26.catalog import implemented_system
from iclr26.deepfaith.explainer import AmortizedExplainer, ExplainerConfig
from iclr26.deepfaith.metrics import METRICS, evaluate, metrics_for
from iclr26.deepfaith.objectives import DynamicWeight, local_correlation_loss, pattern_consistency_loss
from iclr26.deepfaith.priors import PRIOR_METHODS, PriorConfig, explain, explain_all, methods_for
from iclr26.deepfaith.space import FeatureSpace, image_space, tabular_space, token_space
from iclr26.deepfaith.supervision import deduplicate, faithfulness_filter, supervised_pairs
from iclr26.deepfaith.system import DeepFaithConfig, run
from iclr26.deepfaith.tasks import TASKS, Task, load_task
from iclr26.deepfaith.train import ExplainerTrainConfig, train_explainer

_BENCH = DeepFaithConfig()
PRESETS = {
    "smoke": replace(
        _BENCH,
        tasks=("wine", "digits"),
        methods=("saliency", "integrated_gradients", "occlusion", "kernel_shap", "grad_cam"),
        train_inputs=32,
        test_inputs=16,
        kernel_samples=32,
        metric_runs=16,
        epochs=3,
        min_steps=0,
    ),
    # the tour: DeepFaith vs the priors on two tasks, fewer inputs and shorter training
    "demo": replace(
        _BENCH,
        tasks=("wine", "digits"),
        methods=("saliency", "integrated_gradients", "occlusion", "kernel_shap", "lime", "grad_cam"),
        train_inputs=96,
        test_inputs=48,
        epochs=40,
        min_steps=400,
    ),
    "bench": _BENCH,  # the README figures
    # The paper's explainer shape (6 layers, 768 wide, 8 heads, FFN 1024), more inputs and samples; GPU.
    "paper": replace(
        _BENCH,
        train_inputs=1024,
        test_inputs=500,
        kernel_samples=512,
        ig_steps=64,
        filter_runs=64,
        metric_runs=128,
        width=768,
        depth=6,
        heads=8,
        ffn=1024,
        dropout=0.5,
        epochs=400,
        min_steps=20000,
        lr=1e-4,
        lc_runs=32,
        epsilon=1e-5,
        device="cuda",
        threads=8,
    ),
}

SYSTEM = implemented_system("deepfaith", presets=PRESETS, run=run)

__all__ = [
    "METRICS",
    "PRIOR_METHODS",
    "SYSTEM",
    "TASKS",
    "AmortizedExplainer",
    "DeepFaithConfig",
    "DynamicWeight",
    "ExplainerConfig",
    "ExplainerTrainConfig",
    "FeatureSpace",
    "PriorConfig",
    "Task",
    "deduplicate",
    "evaluate",
    "explain",
    "explain_all",
    "faithfulness_filter",
    "image_space",
    "load_task",
    "local_correlation_loss",
    "methods_for",
    "metrics_for",
    "pattern_consistency_loss",
    "supervised_pairs",
    "tabular_space",
    "token_space",
    "train_explainer",
]
