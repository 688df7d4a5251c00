"""The `spatial_dise` run's config: which items to generate (the bench and the training splits),
which models answer them (random, the pixel heuristics, the option scorer trained here, the
run's model when it sees images: `vlm_row` with `--llm http`), and the scorer's nested training config."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.core.config import RUN_LLM, ConfigError
from iclr26.core.validation import check_in, check_int
from iclr26.spatial_dise.render import RENDERERS
from iclr26.spatial_dise.scorer import ScorerConfig
from iclr26.spatial_dise.tasks import TASKS, check_tasks
from iclr26.spatial_dise.teach import TeachConfig

BASELINES = ("random", "pixel_similarity", "least_similar", "odd_one_out", "medoid", "most_ink", "least_ink")
"""The heuristic rows: random choice, and six pixel heuristics (three pairs of opposites) that expose
weak distractors: a heuristic far from chance, either way, says the options give the answer away."""


@dataclass(frozen=True)
class SpatialConfig:
    """Everything the run uses; the defaults are the README's bench (559 items, the 12K splits)."""

    RENAMED: ClassVar[dict[str, str]] = {
        "vlm": "set vlm_row=true for the VLM row, and " + RUN_LLM,
        "vlm_path": RUN_LLM,
    }

    bench_items: int = 559
    """items in the generated bench: 559 uses the paper's size and our per-task counts
    (dataset.BENCH_COUNTS), any other number keeps those proportions"""
    train_items: int = 8647
    """items in the generated training split (the 12K release's train part); 0: train nothing"""
    val_items: int = 1852
    """items in the validation split (the scorer keeps its best epoch on it)"""
    test_items: int = 1853
    """items in the in-distribution test split (the trained scorer is also scored there)"""
    train_tasks: tuple[str, ...] = TASKS
    """tasks of the training splits (the 12K release has the five 3D ones; ours default to all ten)"""
    data_dir: str = ""
    """folder for the generated splits (empty: the run folder's data/); a re-run resumes them"""
    jobs: int = 2
    """worker processes generating items"""
    renderer: str = "painter"
    """draws the 3D panels: painter (ours, numpy + PIL) or blender (Cycles + Freestyle through bpy or
    Debian's blender; about a second per panel); the 2D tasks are drawn with PIL either way"""
    release: str = ""
    """a folder or CSV of the authors' released bench (TACPS-liv/Spatial-DISE) to score the VLM on
    as well (the pixel heuristics and the scorer need our layout, so they skip it)"""
    baselines: tuple[str, ...] = BASELINES
    """heuristic rows to score"""
    scorer: ScorerConfig = field(default_factory=ScorerConfig)
    """the small CNN option scorer trained on the training split (the paper fine-tunes Qwen2.5-VL-7B)"""
    vlm_row: bool = False
    """score the run's model on the bench (the VLM row): it must see images, so run with --llm http and
    a vision server at ICLR26_LLM_BASE_URL, e.g. vLLM with Qwen2.5-VL (none ships offline)"""
    vlm_items: int = 0
    """most bench items the VLM answers (0: all)"""
    vlm_tokens: int = 16
    """most tokens of a VLM reply (the paper asks for one letter)"""
    seed: int = 0
    """seeds the item generators (derive_seed(seed, split, index)) and the random row"""
    experiment: str = "bench"
    """bench: the splits, the scorer and the bench study; teach: does generated data teach? (the
    Siamese scorer's learning curve, `teach`; data_dir then holds its item shards)"""
    teach: TeachConfig = field(default_factory=TeachConfig)
    """the learning-curve experiment (experiment=teach)"""

    def __post_init__(self) -> None:
        check_int("bench_items", self.bench_items, 1)
        for name in ("train_items", "val_items", "test_items", "vlm_items"):
            check_int(name, getattr(self, name), 0)
        check_int("jobs", self.jobs, 1, 64)
        check_int("vlm_tokens", self.vlm_tokens, 1, 4096)
        check_int("seed", self.seed, 0)
        check_tasks(self.train_tasks, "train_tasks")
        if not self.train_tasks:
            raise ConfigError("train_tasks must name at least one task")
        for b in self.baselines:
            check_in("baselines", b, BASELINES)
        check_in("renderer", self.renderer, RENDERERS)
        check_in("experiment", self.experiment, ("bench", "teach"))
        if self.train_items and not self.val_items:
            raise ConfigError("the scorer needs a validation split: set val_items > 0 (or train_items=0)")
