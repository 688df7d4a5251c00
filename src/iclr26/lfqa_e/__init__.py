"""LFQA-E ("LFQA-E: Carefully Benchmarking Long-form QA Evaluation", ICLR 2026, arXiv
2410.01945): a harness that measures how often an automatic metric or judge agrees with human
pairwise preferences between long-form answers.

Public API:
- data: `Comparison`, `load_comparisons(path)` (the unified release and the older X_vs_Y layout),
  `save_comparisons`, `build_comparisons` (the Python-documentation set with labels by construction);
- metrics: `score_static` (ROUGE, BLEU, chrF, BERTScore, embedding cosine, length), the judges
  `judge_pairs` / `judge_logprob` / `judge_rubric` with `JudgeConfig` and `parse_verdict`, the
  reward-model hook `RewardModel(path)`, the evaluator trained here `train_evaluator`;
- scoring: `preferences` (the tie rule), `agreement` (accuracy, per-class P/R/F1, macro-F1, ties,
  bootstrap CIs), `breakdown`;
- `SYSTEM` for `iclr26 run lfqa_e`.
"""

from iclr26.core.system import system_attributes
from iclr26.lfqa_e.build import build_comparisons
from iclr26.lfqa_e.config import FAMILIES, METRICS, LFQAConfig
from iclr26.lfqa_e.data import LABELS, Comparison, DataError, load_comparisons, save_comparisons
from iclr26.lfqa_e.evaluator import EvaluatorConfig, train_evaluator
from iclr26.lfqa_e.judges import JudgeConfig, judge_logprob, judge_pairs, judge_rubric, parse_verdict
from iclr26.lfqa_e.reward import RewardModel
from iclr26.lfqa_e.scoring import Agreement, agreement, breakdown, preferences
from iclr26.lfqa_e.static import STATIC_METRICS, score_static

__all__ = [
    "FAMILIES",
    "LABELS",
    "METRICS",
    "STATIC_METRICS",
    "Agreement",
    "Comparison",
    "DataError",
    "EvaluatorConfig",
    "JudgeConfig",
    "LFQAConfig",
    "RewardModel",
    "agreement",
    "breakdown",
    "build_comparisons",
    "judge_logprob",
    "judge_pairs",
    "judge_rubric",
    "load_comparisons",
    "parse_verdict",
    "preferences",
    "save_comparisons",
    "score_static",
    "train_evaluator",
]

__getattr__ = system_attributes(__name__)
