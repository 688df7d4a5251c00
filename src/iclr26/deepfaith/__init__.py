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

from iclr26.core.system import system_attributes
from iclr26.deepfaith.config import DeepFaithConfig
from iclr26.deepfaith.explainer import AmortizedExplainer, ExplainerConfig
from iclr26.deepfaith.metrics import METRICS, evaluate, metrics_for
from iclr26.deepfaith.objectives import DynamicWeight, local_correlation_loss, pattern_consistency_loss
from iclr26.deepfaith.priors import PRIOR_METHODS, PriorConfig, explain, explain_all, methods_for
from iclr26.deepfaith.space import FeatureSpace, image_space, tabular_space, token_space
from iclr26.deepfaith.supervision import deduplicate, faithfulness_filter, supervised_pairs
from iclr26.deepfaith.tasks import TASKS, Task, load_task
from iclr26.deepfaith.train import ExplainerTrainConfig, train_explainer

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

__getattr__ = system_attributes(__name__)  # SYSTEM and PRESETS, loaded from .system on first use
