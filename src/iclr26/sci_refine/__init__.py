"""Eigen-1 ("Adaptive Multi-Agent Refinement with Monitor-Based RAG for Scientific Reasoning", ICLR 2026,
arXiv 2509.21193): implicit retrieval by a Monitor / Querier / Injector stack watching the main model's
stream, hierarchical solution refinement (HSR) and quality-aware iterative reasoning (QAIR), against
explicit tool-call RAG.

Public API:
- data: `dataset.build` (the built-here QA set and corpus from CODATA, periodictable and Biopython
  facts), `load_questions` / `load_corpus` (the authors' JSON, HLE, SuperGPQA, TRQA by path);
- grading: `grade` (rules, or the JSON-schema LLM judge);
- retrieval: `Retriever` (BM25, dense, hybrid), `PassageFilter`;
- reasoning: `ImplicitRAG` (the Monitor stack on a stream), `ExplicitRAG` (the search-tool baseline);
- refinement: `Refiner` (proposers, corrector, HSR, QAIR, selector), `quality_score`;
- `SYSTEM` for `iclr26 run sci_refine`.
"""

from iclr26.core.system import system_attributes
from iclr26.sci_refine.explicit_rag import ExplicitRAG, ExplicitRAGConfig
from iclr26.sci_refine.grading import Grade, grade
from iclr26.sci_refine.loaders import load_corpus, load_questions
from iclr26.sci_refine.monitor import ImplicitRAG, MonitorConfig
from iclr26.sci_refine.question import Passage, Question
from iclr26.sci_refine.refine import RefineConfig, Refiner, quality_score
from iclr26.sci_refine.retrieval import PassageFilter, Retriever, RetrieverConfig

__all__ = [
    "ExplicitRAG",
    "ExplicitRAGConfig",
    "Grade",
    "ImplicitRAG",
    "MonitorConfig",
    "Passage",
    "PassageFilter",
    "Question",
    "RefineConfig",
    "Refiner",
    "Retriever",
    "RetrieverConfig",
    "grade",
    "load_corpus",
    "load_questions",
    "quality_score",
]

__getattr__ = system_attributes(__name__)
