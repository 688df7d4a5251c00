"""The `icl_analysis` run's config: which cells to sweep (tasks × styles × shots × δ), the
data sizes, the model's budget (the model is the run's: `--llm`), and the nested configs of the
baselines' runs, APO and the trained GPT."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.core.config import RUN_LLM
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.icl_analysis.apo import APOConfig
from iclr26.icl_analysis.baselines import KINDS
from iclr26.icl_analysis.corpus import AUTHORS_FILES
from iclr26.icl_analysis.gpt import FAMILY_OF_TASK, GPTConfig
from iclr26.icl_analysis.prompts import STYLES
from iclr26.icl_analysis.tasks import DELTAS, TASKS


@dataclass(frozen=True)
class ICLConfig:
    """Everything the run uses; defaults are the `bench` preset (CPU, the embedded SmolLM2)."""

    RENAMED: ClassVar[dict[str, str]] = {
        "model": RUN_LLM + "; model=none is now sweep=false",
        "model_path": RUN_LLM,
        "parallel": "where cells run is the run's: iclr26 run icl_analysis --parallel process|threads|ray",
        "cpus_per_cell": "a Ray cell takes one CPU: iclr26 run icl_analysis --parallel ray --jobs N",
    }

    tasks: tuple[str, ...] = tuple(TASKS)
    """tasks to evaluate (any of the nine)"""
    styles: tuple[str, ...] = ("modus_ponens", "description", "automaton", "word_salad", "cot")
    """prompt styles for the language model (apo, salad_of_thought also available)"""
    shots: tuple[int, ...] = (0, 2, 5, 10, 20)
    """exemplar counts (the paper: 0, 2, 5, 10, 20, 50, 100; each style's exceptions are skipped)"""
    deltas: tuple[float, ...] = (0.0, 0.85)
    """test splits: 0 is the ID test split, others the OOD split at that δ"""
    shuffle: bool = False
    """also evaluate every cell with the exemplars really reordered"""
    items: int = 100
    """test items per cell (the paper: 1000)"""
    n_train: int = 3000
    """ID training items per task (the exemplars are the first k)"""
    n_test: int = 2000
    """ID test items per task"""
    n_ood: int = 1000
    """items per OOD split (the paper: 3000)"""
    data: str = "ours"
    """the splits: "ours" (generated here, labels checked) or the path of the authors' released
    `datasets/` folder (a local copy of adewynter/is-icl-learning; nothing is downloaded; their
    train/test/OOD files as released, so n_train, n_test and n_ood do not apply)"""
    seed: int = 0
    """seed of the data, the exemplar shuffles, the salads and the trained GPT"""
    sweep: bool = True
    """ask the run's model (`--llm`) every cell; false: the data, the baselines and the trained GPT only"""
    max_concurrency: int = 4
    """requests in flight to an HTTP server"""
    logprobs: bool = True
    """also score binary label cells by the label tokens' log-probs"""
    reasoning_items: int = 20
    """test items per cell for the reasoning styles (1024-token replies are slow on CPU)"""
    reasoning_tokens: int = 1024
    """most tokens of a reasoning reply (the paper: 1024)"""
    baselines: tuple[str, ...] = KINDS
    """scikit-learn baselines, trained on the same exemplars and on the whole training split"""
    apo: APOConfig = field(default_factory=APOConfig)
    """the prompt search of style apo"""
    gpt_tasks: tuple[str, ...] = ("parity", "pattern_matching")
    """tasks a small GPT is trained for from scratch (one per task family: parity, pattern_matching, stack,
    reversal, vending_machine; `gpt.py`, `families.py`); () to skip"""
    gpt: GPTConfig = field(default_factory=GPTConfig)
    """the trained GPT (its family is set per task)"""

    def __post_init__(self) -> None:
        for name, options in (("tasks", TASKS), ("styles", STYLES), ("baselines", KINDS)):
            for v in getattr(self, name):
                check_in(name, v, options)
        if not self.tasks:
            raise ValueError("tasks must name at least one task")
        if not self.data:
            raise ValueError('data must be "ours" or the path of the authors\' datasets/ folder')
        if self.data != "ours":
            for t in self.tasks:
                if t not in AUTHORS_FILES:
                    raise ValueError(f"data: the authors released no corpus for {t!r}; drop it from tasks")
        for k in self.shots:
            check_int("shots", k, 0, self.n_train)
        for d in self.deltas:
            check_interval("deltas", d, 0.0, 1.0, closed=(True, False))
        if any(d > 0 for d in self.deltas) and not self.n_ood:
            raise ValueError("deltas has OOD splits but n_ood is 0")
        for name in ("items", "n_train", "n_test", "max_concurrency", "reasoning_items", "reasoning_tokens"):
            check_int(name, getattr(self, name), 1)
        check_int("n_ood", self.n_ood, 0)
        check_int("seed", self.seed, 0)
        for t in self.gpt_tasks:
            check_in("gpt_tasks", t, FAMILY_OF_TASK)
        if self.items > self.n_test or (self.n_ood and self.items > self.n_ood):
            raise ValueError(f"items={self.items} is more than a test split holds (n_test, n_ood)")

    @property
    def ood_deltas(self) -> tuple[float, ...]:
        """The OOD shifts among `deltas`."""
        return tuple(d for d in self.deltas if d > 0) or ()


__all__ = ["DELTAS", "ICLConfig"]
