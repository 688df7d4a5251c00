"""The `sci_refine` run's config: the questions and corpus (the built-here set, or files by path), the
rows of the paper's build-up table, the LLM calls' budgets (the model is the run's: `--llm`), and each
part's nested settings (retrieval, passage
filter, Monitor stack, explicit RAG, refinement)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from iclr26.core.config import ConfigError, run_llm_renames
from iclr26.core.validation import check_in, check_int, check_interval
from iclr26.sci_refine.explicit_rag import ExplicitRAGConfig
from iclr26.sci_refine.loaders import FORMATS
from iclr26.sci_refine.monitor import MonitorConfig
from iclr26.sci_refine.pools import PoolsConfig
from iclr26.sci_refine.refine import RefineConfig
from iclr26.sci_refine.retrieval import FilterConfig, RetrieverConfig
from iclr26.sci_refine.streams import StreamsConfig

ROWS: tuple[str, ...] = ("baseline", "explicit_rag", "monitor", "querier", "injector", "hsr", "qair")
"""the paper's build-up, each row adding one part: no retrieval; the model's own search tool; the
Monitor (window as query, passages verbatim); + Querier; + Injector; + HSR; + QAIR"""
JUDGES = ("rule", "llm")
EXPERIMENTS = ("buildup", "pools", "streams")
"""buildup: the paper's build-up table; pools: refinement on scripted candidate pools of known quality
(`pool_study`); streams: the Monitor stack against explicit RAG on templated streams (`stream_study`)"""


@dataclass(frozen=True)
class SciRefineConfig:
    """Everything the run uses; the defaults are the paper's protocol on the built-here set (the
    `bench` preset sizes it for SmolLM2 on 2 cores)."""

    RENAMED: ClassVar[dict[str, str]] = run_llm_renames("llm", "llm_path")

    experiment: str = "buildup"
    """buildup (the paper's build-up rows), pools (refinement on scripted pools) or streams (the token
    claim on templated reasoning streams); see EXPERIMENTS"""
    rows: tuple[str, ...] = ROWS
    """build-up rows to run (see ROWS); every row answers the same questions"""
    data: str = "builtin"
    """builtin (the generated set from CODATA, periodictable and Biopython facts) or a question file"""
    data_format: str = "authors"
    """format of a question file: authors (the Eigen-1 JSON), hle, supergpqa, trqa"""
    corpus: str = ""
    """with a question file: a corpus file (JSON list of strings or of {id, text}); empty: the
    built-here corpus"""
    n_questions: int = 40
    """built-here questions (half need retrieval, half are reasoning only; see retrieval_fraction)"""
    limit: int = 0
    """answer only the first `limit` questions of a loaded file (0: all)"""
    n_distractors: int = 1000
    """distractor paragraphs added to the built-here corpus (up to dataset.corpus_capacity())"""
    retrieval_fraction: float = 0.5
    """share of built-here questions that need a fact from the corpus"""
    seed: int = 0
    """seeds the built-here set and every model call"""
    max_tokens: int = 384
    """completion tokens of one reasoning call (both streams of a monitored call together)"""
    temperature: float = 0.5
    """sampling temperature of the reasoning calls (the proposers must differ; the authors' 0.5)"""
    judge: str = "rule"
    """grading: rule (exact / option letter / numeric tolerance) or llm (the JSON-schema judge, the
    run's own model)"""
    filter_passages: bool = True
    """score retrieved passages with the model (−1..2) and keep the best 1–2, as the authors do"""
    retrieval: RetrieverConfig = field(default_factory=RetrieverConfig)
    """the index: bm25, dense (MiniLM + FAISS) or hybrid, and k"""
    passage_filter: FilterConfig = field(default_factory=FilterConfig)
    """the passage filter's thresholds"""
    monitor: MonitorConfig = field(default_factory=MonitorConfig)
    """the Monitor stack: window 512, overlap 128, one injection per step (its mode is set per row)"""
    explicit: ExplicitRAGConfig = field(default_factory=lambda: ExplicitRAGConfig(search_first=True))
    """the explicit-RAG baseline's loop (steps and tool calls per reasoning call; the first turn is a
    search, as the authors' prompt demands)"""
    refine: RefineConfig = field(default_factory=RefineConfig)
    """proposers, corrector, QAIR rounds (its hsr and qair switches are ignored: each row sets them)"""
    pools: PoolsConfig = field(default_factory=PoolsConfig)
    """experiment=pools: p values, pool size, questions"""
    streams: StreamsConfig = field(default_factory=StreamsConfig)
    """experiment=streams: stream lengths and count, the Monitor's window on them"""

    def __post_init__(self) -> None:
        if not self.rows:
            raise ConfigError("name at least one row (rows=...)")
        check_in("experiment", self.experiment, EXPERIMENTS)
        for r in self.rows:
            check_in("rows", r, ROWS)
        if self.data != "builtin" and not self.data.strip():
            raise ConfigError("data must be 'builtin' or the path of a question file")
        check_in("data_format", self.data_format, tuple(FORMATS))
        check_int("n_questions", self.n_questions, 1)
        check_int("limit", self.limit, 0)
        check_int("n_distractors", self.n_distractors, 0)
        check_interval("retrieval_fraction", self.retrieval_fraction, 0.0, 1.0)
        check_int("seed", self.seed, 0)
        check_int("max_tokens", self.max_tokens, 1)
        check_interval("temperature", self.temperature, 0.0, 2.0)
        check_in("judge", self.judge, JUDGES)
        if {"hsr", "qair"} & set(self.rows) and self.refine.proposers < 2:
            raise ConfigError(
                "refine.proposers must be at least 2 when rows include hsr or qair "
                "(HSR repairs an anchor with the other candidates)"
            )
