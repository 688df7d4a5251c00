"""The `lfqa_e` run's config: the comparisons (a release file, or the set built here), which
metrics of the five families to score, the judges' budgets (the judge is the run's model: `--llm`),
and the nested configs of
the two models fine-tuned here (the evaluator and the reward model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.core.config import run_llm_renames
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.lfqa_e.data import LANGUAGES
from iclr26.lfqa_e.evaluator import EvaluatorConfig
from iclr26.lfqa_e.static import STATIC_METRICS

FAMILIES: dict[str, tuple[str, ...]] = {
    "static": STATIC_METRICS,
    "llm_judge": ("judge_pairwise", "judge_pairwise_noref", "judge_logprob"),
    "reasoning_judge": ("judge_reasoning",),
    "rubric_judge": ("judge_rubric",),
    "reward_model": ("reward_model",),
    "trained_evaluator": ("trained_evaluator",),
}
"""the paper's five families (§4.1; LLM and reasoning judges apart) and our metrics in each"""
METRICS = tuple(m for ms in FAMILIES.values() for m in ms)
FAMILY_OF = {m: f for f, ms in FAMILIES.items() for m in ms}
JUDGES = FAMILIES["llm_judge"] + FAMILIES["reasoning_judge"] + FAMILIES["rubric_judge"]
TRAINED = ("reward_model", "trained_evaluator")
EXPERIMENTS = ("metrics", "transfer")
"""metrics: every chosen metric against the labels (the paper's Table 2); transfer: the models trained
here, trained on one compare type and tested on each (the paper's generalisation analysis)"""


@dataclass(frozen=True)
class LFQAConfig:
    """Everything the run uses; the defaults score every metric on every comparison with SmolLM2
    judging (the presets trim the judges and the fine-tuning for a CPU)."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("model", "model_path")

    experiment: str = "metrics"
    """metrics (every chosen metric against the labels) or transfer (the models trained here, trained on
    one compare type and tested on every type: in-type against cross-type, `transfer.py`)"""
    data: str = ""
    """a release file (unified_benchmark*.json or the older X_vs_Y layout); empty: the set built here"""
    language: str = ""
    """en or zh for every record of `data` (empty: guessed per record)"""
    n_questions: int = 0
    """questions in the built-here set, one per Python documentation topic (0: every usable topic)"""
    pairs_per_question: int = 4
    """comparisons per question in the built-here set"""
    model_answers: bool = True
    """add the run's model's closed-book answers to the built-here set (human_vs_model pairs)"""
    limit: int = 0
    """use this many comparisons, drawn with the seed (0: all)"""
    train_share: float = 0.5
    """share of questions whose comparisons train the evaluator and the reward model; every metric is
    scored on the other questions' comparisons"""
    metrics: tuple[str, ...] = METRICS
    """metrics to score (any of the five families' 17)"""
    tie_margin: float = 0.01
    """a static metric calls a pair 'same' when its two scores differ by at most this share of the larger"""
    judge_items: int = 0
    """most test comparisons the LLM judges see (0: all); static and trained metrics see all"""
    max_concurrency: int = 4
    """judge requests in flight at once"""
    both_orders: bool = True
    """ask every pairwise judge in both orders (position bias; disagreeing orders give 'same')"""
    pairwise_tokens: int = 32
    """most tokens of a direct judge's reply (its verdict line)"""
    reasoning_tokens: int = 384
    """most tokens of a reasoning judge's reply (analysis, then the verdict)"""
    rubric_tokens: int = 256
    """most tokens of a rubric judge's reply (feedback, then the score)"""
    logprob_margin: float = 0.1
    """the log-prob judge calls a pair 'same' when the two verdict tokens' log-probs differ by at most this"""
    reward_model: str = ""
    """a local Hugging Face sequence-classification reward model (empty: train a reference-free one here)"""
    evaluator: EvaluatorConfig = field(default_factory=EvaluatorConfig)
    """the reference-based evaluator fine-tuned here"""
    reward: EvaluatorConfig = field(default_factory=lambda: EvaluatorConfig(first="question"))
    """the reference-free reward model fine-tuned here when `reward_model` is empty"""
    n_boot: int = 1000
    """bootstrap resamples for the 95% intervals"""
    seed: int = 0
    """seed of the built set, the split, the subset and the bootstrap"""

    def __post_init__(self) -> None:
        for m in self.metrics:
            check_in("metrics", m, METRICS)
        if not self.metrics:
            raise ValueError("metrics must name at least one metric")
        check_in("experiment", self.experiment, EXPERIMENTS)
        if self.language:
            check_in("language", self.language, LANGUAGES)
        for name in ("pairs_per_question", "max_concurrency", "pairwise_tokens",
                     "reasoning_tokens", "rubric_tokens"):  # fmt: skip
            check_int(name, getattr(self, name), 1)
        for name in ("n_questions", "limit", "judge_items", "n_boot", "seed"):
            check_int(name, getattr(self, name), 0)
        check_interval("train_share", self.train_share, 0.0, 1.0, closed=(True, False))
        check_interval("tie_margin", self.tie_margin, 0.0, 1.0)
        check_interval("logprob_margin", self.logprob_margin, 0.0)
        if self.evaluator.first != "reference":
            raise ValueError(
                "evaluator.first must be 'reference' (the reward model is the reference-free one)"
            )
        trained = [
            m for m in self.metrics if m in TRAINED and not (m == "reward_model" and self.reward_model)
        ]
        if trained and self.train_share == 0:
            raise ValueError(f"metrics {', '.join(trained)} are trained here and need train_share > 0")
        if self.experiment == "transfer":
            others = [m for m in self.metrics if m not in TRAINED]
            if others:
                raise ValueError(
                    f"experiment=transfer scores only the models trained here, not {', '.join(others)}"
                )
            if len(trained) < len(self.metrics):
                raise ValueError(
                    "experiment=transfer trains its models here: leave reward_model (the path) empty"
                )

    @property
    def families(self) -> tuple[str, ...]:
        """The families of the chosen metrics, in the paper's order."""
        return tuple(f for f in FAMILIES if any(FAMILY_OF[m] == f for m in self.metrics))


__all__ = ["EXPERIMENTS", "FAMILIES", "FAMILY_OF", "JUDGES", "METRICS", "TRAINED", "LFQAConfig"]
