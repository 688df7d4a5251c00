"""Is in-context learning learning? ("Is In-Context Learning Learning?", ICLR 2026, arXiv
2509.10414): the nine automaton tasks with ID and OOD splits, the seven prompt styles, shot
sweeps of any `core.llm` model, scikit-learn baselines, and a small GPT trained here to learn in
context.

Public API:
- tasks: `TASKS`, `get_task`, `make_splits`, `Item`, `Splits`, `DELTAS`;
- `load_authors_splits(root, task)`: the authors' released corpora from a local copy;
- prompts: `STYLES`, `SHOTS`, `build_messages`, `exemplars`;
- scoring: `parse_reply`, `score` (modes punish / drop);
- `evaluate_cell(model, task, splits, Cell(...))`; `optimise_prompt` (APO);
- baselines: `fit_baseline(task, kind, train)`, `ANCHORS`;
- the trained transformer: `GPTConfig`, `train_icl_gpt`, `evaluate_gpt`;
- `SYSTEM` for `iclr26 run icl_analysis`.
"""

from iclr26.core.system import system_attributes
from iclr26.icl_analysis.apo import APOConfig, optimise_prompt
from iclr26.icl_analysis.baselines import ANCHORS, KINDS, fit_baseline
from iclr26.icl_analysis.config import ICLConfig
from iclr26.icl_analysis.corpus import CorpusError, load_authors_splits, load_jsonl, load_ood
from iclr26.icl_analysis.evaluate import Cell, CellResult, evaluate_cell
from iclr26.icl_analysis.gpt import GPTConfig, evaluate_gpt, train_icl_gpt
from iclr26.icl_analysis.prompts import SHOTS, STYLES, build_messages, exemplars
from iclr26.icl_analysis.scoring import parse_reply, score
from iclr26.icl_analysis.tasks import DELTAS, TASKS, Item, Splits, get_task, make_splits

__all__ = [
    "ANCHORS",
    "DELTAS",
    "KINDS",
    "SHOTS",
    "STYLES",
    "TASKS",
    "APOConfig",
    "Cell",
    "CellResult",
    "CorpusError",
    "GPTConfig",
    "ICLConfig",
    "Item",
    "Splits",
    "build_messages",
    "evaluate_cell",
    "evaluate_gpt",
    "exemplars",
    "fit_baseline",
    "get_task",
    "load_authors_splits",
    "load_jsonl",
    "load_ood",
    "make_splits",
    "optimise_prompt",
    "parse_reply",
    "score",
    "train_icl_gpt",
]

__getattr__ = system_attributes(__name__)
