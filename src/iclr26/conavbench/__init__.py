"""CoNavBench and NavCraft ("CoNavBench: Collaborative Long-Horizon Vision-Language Navigation
Benchmark", ICLR 2026): graph-grounded generation of single and collaborative navigation episodes
over generated houses, a two-robot 2D simulator, planners, an LLM agent and LH-VLN's metrics.

Public API:
- scenes: `Scene`, `generate_scene`, `label_regions` (the four-step labelling), `habitat.scene_from_habitat`;
- missions: `build_split`, `acceptance` (the NavCraft-C rule), `validate`, `episode_to_json`;
- tools: `conflicts`, `repair`, `timed_path`, `travel_time`;
- evaluation: `evaluate` with the agents `OraclePolicy`, `NullPolicy`, `RandomPolicy`,
  `GreedySinglePolicy`, `CollaborativePlanner`, `LLMPolicy`; `metrics` (SR, SPL, NE, ISR, CSR, CGT, TAR);
- `SYSTEM` for `iclr26 run conavbench`.
"""

from iclr26.conavbench.agents import (
    CollaborativePlanner,
    EvalConfig,
    GreedySinglePolicy,
    LLMPolicy,
    NullPolicy,
    OraclePolicy,
    RandomPolicy,
    evaluate,
)
from iclr26.conavbench.episode import Episode, SubTask
from iclr26.conavbench.house import generate_scene
from iclr26.conavbench.labelling import label_regions
from iclr26.conavbench.missions import acceptance
from iclr26.conavbench.scene import Scene
from iclr26.conavbench.splits import build_split
from iclr26.conavbench.tools import conflicts, repair, timed_path, travel_time
from iclr26.conavbench.validate import episode_to_json, validate
from iclr26.core.system import system_attributes

__all__ = [
    "CollaborativePlanner",
    "Episode",
    "EvalConfig",
    "GreedySinglePolicy",
    "LLMPolicy",
    "NullPolicy",
    "OraclePolicy",
    "RandomPolicy",
    "Scene",
    "SubTask",
    "acceptance",
    "build_split",
    "conflicts",
    "episode_to_json",
    "evaluate",
    "generate_scene",
    "label_regions",
    "repair",
    "timed_path",
    "travel_time",
    "validate",
]

__getattr__ = system_attributes(__name__)
