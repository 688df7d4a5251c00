"""Spatial-DISE ("Spatial-DISE: A Unified Benchmark for Evaluating Spatial Reasoning in
Vision-Language Models", ICLR 2026, arXiv 2510.13394): a verifiable generator of spatial-reasoning
items over the four DISE quadrants, its bench and training splits, a VLM harness and models
trained here.

Public API:
- generation: `TASKS`, `task(name)`, `make_item`, `render_item`, `generate_split`, `BENCH_COUNTS`,
  `TRAIN_SIZES`; the geometry and the verifier's proofs in `geometry`, `cube`, `plane`;
- data: `Record`, `read_csv`, `write_csv`, `load_release` (the authors' CSV schema);
- evaluation: `parse_letter`, `evaluate`, `vlm_predictor`, the heuristics in `baselines`, the
  option scorer `train_scorer` / `predict_scorer` with `ScorerConfig`;
- `SYSTEM` for `iclr26 run spatial_dise`.
"""

from iclr26.core.system import system_attributes
from iclr26.spatial_dise.dataset import BENCH_COUNTS, TRAIN_SIZES, generate_split
from iclr26.spatial_dise.harness import evaluate, parse_letter, vlm_predictor
from iclr26.spatial_dise.items import QUADRANTS, Item, make_item, render_item
from iclr26.spatial_dise.records import Record, load_release, read_csv, write_csv
from iclr26.spatial_dise.scorer import ScorerConfig, predict_scorer, train_scorer
from iclr26.spatial_dise.tasks import QUADRANT_OF, TASKS, task

__all__ = [
    "BENCH_COUNTS",
    "QUADRANTS",
    "QUADRANT_OF",
    "TASKS",
    "TRAIN_SIZES",
    "Item",
    "Record",
    "ScorerConfig",
    "evaluate",
    "generate_split",
    "load_release",
    "make_item",
    "parse_letter",
    "predict_scorer",
    "read_csv",
    "render_item",
    "task",
    "train_scorer",
    "vlm_predictor",
    "write_csv",
]

__getattr__ = system_attributes(__name__)
