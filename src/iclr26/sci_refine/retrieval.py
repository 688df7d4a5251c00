"""The retrieval substrate of Eigen-1 (arXiv 2509.21193): a local corpus index and the passage filter.

`Retriever` searches a list of `Passage`s three ways:
- "bm25": Okapi BM25 (`core.embed.BM25Index`, bm25s, Lucene variant); passages sharing no term with
  the query are not returned;
- "dense": exact cosine over all-MiniLM-L6-v2 embeddings (`core.embed.DenseIndex`, FAISS), as the
  authors' FAISS retriever (their k = 15, over OpenAI embeddings);
- "hybrid": reciprocal-rank fusion of the two (Cormack, Clarke & Büttcher, SIGIR 2009):
  RRF(d) = Σ_m 1 / (k0 + rank_m(d)), rank 1-based over each ranker's top `depth`, k0 = 60.

`PassageFilter` is the authors' LLM filter (mcp_sandbox/MCP/rag_tool_emb_llm_judge.py): the model
scores each retrieved passage for the query on −1..2 (−1 misleading, 0 irrelevant, 1 helpful,
2 directly answers); we keep the best `max_keep` (2) with score ≥ `min_score` (1). A reply with no
score counts as −1 and is counted. The prompt is `FILTER_PROMPT`, in our words.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iclr26.core.config import ConfigError
from iclr26.core.embed import BM25Index, DenseIndex, embed
from iclr26.core.errors import UserError
from iclr26.core.llm.base import ChatModel
from iclr26.core.llm.pool import chat_many
from iclr26.sci_refine.question import Passage

RETRIEVAL_MODES = ("bm25", "dense", "hybrid")
"""bm25: sparse lexical; dense: MiniLM cosine; hybrid: reciprocal-rank fusion of both"""

FILTER_SCORES = (-1, 0, 1, 2)
"""the passage filter's scale: −1 misleading, 0 irrelevant, 1 helpful, 2 directly answers"""


@dataclass(frozen=True)
class RetrieverConfig:
    """How a `Retriever` searches."""

    mode: str = "hybrid"
    """one of RETRIEVAL_MODES"""
    k: int = 5
    """passages returned per query (the paper: HippoRAG k = 5, or FAISS k = 15)"""
    rrf_k0: float = 60.0
    """hybrid: the RRF constant k0 in 1 / (k0 + rank) (60 in Cormack et al. 2009)"""
    depth: int = 50
    """hybrid: how many of each ranker's best passages are fused (at least k are)"""

    def __post_init__(self) -> None:
        if self.mode not in RETRIEVAL_MODES:
            raise ConfigError(f"mode must be one of {', '.join(RETRIEVAL_MODES)}; got {self.mode!r}")
        for name in ("k", "depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer; got {value!r}")
        if not self.rrf_k0 >= 0:
            raise ConfigError(f"rrf_k0 must be >= 0 (the RRF constant in 1/(k0 + rank)); got {self.rrf_k0!r}")


@dataclass(frozen=True)
class RetrievedPassage:
    """One search result."""

    passage: Passage
    """the corpus passage"""
    score: float
    """the mode's score: BM25, cosine, or the RRF sum (higher is better)"""
    rank: int
    """1-based position in the result list"""


@dataclass(frozen=True)
class RetrievalStats:
    """What building and querying a `Retriever` cost."""

    mode: str
    """the retriever's mode"""
    n_passages: int
    """corpus size"""
    build_s: dict[str, float]
    """seconds to build each index ("bm25"; "embed" and "dense" for the dense index)"""
    queries: int
    """queries answered so far"""
    query_s: float
    """seconds spent answering them"""

    @property
    def build_total_s(self) -> float:
        """Seconds to build everything the mode needs."""
        return sum(self.build_s.values())

    @property
    def queries_per_s(self) -> float:
        """Queries answered per second of query time (0 before the first query)."""
        return self.queries / self.query_s if self.query_s > 0 else 0.0


def _with_overrides(config: Any, overrides: dict[str, Any]) -> Any:
    """`config` with the keyword `overrides` applied; a ConfigError naming an unknown field."""
    names = {f.name for f in dataclasses.fields(config)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ConfigError(
            f"{type(config).__name__} has no field {', '.join(unknown)}; fields: {', '.join(sorted(names))}"
        )
    return dataclasses.replace(config, **overrides)


def _check_corpus(passages: Sequence[Passage]) -> list[Passage]:
    """`passages` as a list; a UserError naming the problem when it is empty, mistyped or has repeated ids."""
    if isinstance(passages, str | Passage):
        raise UserError("passages must be a sequence of Passage records, not a single one; wrap it in a list")
    items = list(passages)
    if not items:
        raise UserError("the corpus is empty: a Retriever needs at least one Passage")
    seen: set[str] = set()
    for i, p in enumerate(items):
        if not isinstance(p, Passage):
            raise UserError(f"passages[{i}] must be a Passage; got {type(p).__name__}")
        if p.id in seen:
            raise UserError(f"passages[{i}] repeats the passage id {p.id!r}; ids must be unique")
        seen.add(p.id)
    return items


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k0: float = 60.0) -> list[tuple[int, float]]:
    """(id, RRF score) best first over ranked id lists: RRF(d) = Σ_m 1 / (k0 + rank_m(d)), rank 1-based
    (Cormack et al., SIGIR 2009). Ties go to the better best rank, then the lower id."""
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k0 + rank)  # 1 / (k0 + rank)
            best[doc] = min(best.get(doc, rank), rank)
    return sorted(fused.items(), key=lambda item: (-item[1], best[item[0]], item[0]))


class Retriever:
    """Search a passage corpus by BM25, dense MiniLM cosine, or their reciprocal-rank fusion."""

    def __init__(
        self,
        passages: Sequence[Passage],
        config: RetrieverConfig | None = None,
        *,
        vectors: np.ndarray | None = None,
        device: str = "cpu",
        **overrides: Any,
    ) -> None:
        """Index `passages` for `config.mode` (fields of RetrieverConfig may be given as keywords).

        `vectors` (n, d): precomputed passage embeddings for the dense index (queries are then
        embedded with MiniLM, so they must be MiniLM embeddings); `device` embeds texts.
        """
        self.config = _with_overrides(config or RetrieverConfig(), overrides)
        self.passages = _check_corpus(passages)
        self.device = device
        self.build_s: dict[str, float] = {}
        self._queries, self._query_s = 0, 0.0
        self._bm25: BM25Index | None = None
        self._dense: DenseIndex | None = None
        texts = [p.text for p in self.passages]
        if vectors is not None and len(vectors) != len(texts):
            raise UserError(f"vectors has {len(vectors)} rows but there are {len(texts)} passages")
        if self.config.mode in ("bm25", "hybrid"):
            start = time.perf_counter()
            try:
                self._bm25 = BM25Index(texts)
            except ValueError as e:  # e.g. every passage is stopwords
                raise UserError(f"cannot build the BM25 index: {e}") from e
            self.build_s["bm25"] = time.perf_counter() - start
        if self.config.mode in ("dense", "hybrid"):
            start = time.perf_counter()
            if vectors is None:
                vectors = embed(texts, device=device)
            self.build_s["embed"] = time.perf_counter() - start
            start = time.perf_counter()
            self._dense = DenseIndex(vectors, device=device)
            self.build_s["dense"] = time.perf_counter() - start

    def __len__(self) -> int:
        """The number of passages."""
        return len(self.passages)

    def _bm25_ranking(self, query: str, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """Ids and BM25 scores of the best `depth` passages that share a term with `query`."""
        assert self._bm25 is not None
        hits = self._bm25.search(query, depth)
        keep = hits.scores > 0  # a zero score shares no term: not a match, only id-ordered filler
        return hits.ids[keep], hits.scores[keep]

    def search(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
        """The best `k` (default config.k) passages for `query`, best first."""
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int | None = None) -> list[list[RetrievedPassage]]:
        """`search` for each query (dense queries are embedded in one batch)."""
        if isinstance(queries, str):
            raise UserError("queries must be a sequence of strings; for one query use search(query)")
        items = list(queries)
        for i, q in enumerate(items):
            if not isinstance(q, str):
                raise UserError(f"queries[{i}] must be a str; got {type(q).__name__}")
        k = self.config.k if k is None else k
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise UserError(f"k must be a positive integer; got {k!r}")
        if not items:
            return []
        start = time.perf_counter()
        mode, n = self.config.mode, len(self.passages)
        depth = min(max(k, self.config.depth), n)
        dense_ids = dense_scores = None
        if self._dense is not None:
            hits = self._dense.search(
                embed(items, device=self.device), depth if mode == "hybrid" else min(k, n)
            )
            dense_ids, dense_scores = hits.ids, hits.scores
        out = []
        for row, query in enumerate(items):
            if mode == "bm25":
                ids, scores = self._bm25_ranking(query, min(k, n))
                ranked = list(zip(ids.tolist(), scores.tolist(), strict=True))
            elif mode == "dense":
                assert dense_ids is not None and dense_scores is not None
                ranked = list(zip(dense_ids[row].tolist(), dense_scores[row].tolist(), strict=True))
            else:
                assert dense_ids is not None
                sparse, _ = self._bm25_ranking(query, depth)
                ranked = reciprocal_rank_fusion(
                    [sparse.tolist(), dense_ids[row].tolist()], self.config.rrf_k0
                )
            out.append(
                [
                    RetrievedPassage(self.passages[i], float(s), rank)
                    for rank, (i, s) in enumerate(ranked[:k], start=1)
                ]
            )
        self._queries += len(items)
        self._query_s += time.perf_counter() - start
        return out

    def stats(self) -> RetrievalStats:
        """Build and query timings so far."""
        return RetrievalStats(
            self.config.mode, len(self.passages), dict(self.build_s), self._queries, self._query_s
        )


# ---------------------------------------------------------------------------------------------------
# The passage filter

FILTER_PROMPT = """\
Decide how useful a reference passage is for answering a question.

Question:
{query}

Passage:
{passage}

Score the passage with a single number:
-1 = it is misleading or wrong for this question
0 = it has nothing to do with the question
1 = it is relevant: it holds a fact that helps
2 = it is decisive: it states the fact or method the answer rests on

Reply with the number only."""
"""Our wording of the authors' −1..2 helpfulness instruction; fields: query, passage."""

_SCORE = re.compile(r"(?<![\d.])([-−]?\d+)(?!\.?\d)")  # a whole integer, not part of "1.5"


def parse_filter_score(text: str) -> int | None:
    """The −1..2 score a filter reply states (its first integer), or None when it states none."""
    m = _SCORE.search(text.replace("**", ""))
    if m is None:
        return None
    value = int(m.group(1).replace("−", "-"))
    return value if value in FILTER_SCORES else None


@dataclass(frozen=True)
class FilterConfig:
    """How the passage filter keeps passages."""

    max_keep: int = 2
    """at most this many passages survive (the paper keeps 1-2)"""
    min_score: int = 1
    """a passage survives only with a score at least this (1: helpful)"""
    max_tokens: int = 8
    """the reply budget per passage (a number needs two or three tokens)"""
    max_concurrency: int = 4
    """filter calls in flight at once"""

    def __post_init__(self) -> None:
        for name in ("max_keep", "max_tokens", "max_concurrency"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name} must be a positive integer; got {value!r}")
        if self.min_score not in FILTER_SCORES:
            raise ConfigError(f"min_score must be one of {FILTER_SCORES}; got {self.min_score!r}")


@dataclass(frozen=True)
class FilterResult:
    """The filter's verdict on one query's retrieved passages."""

    kept: tuple[RetrievedPassage, ...]
    """the survivors, best score first (ties: retrieval order)"""
    scores: tuple[int, ...]
    """the score of every retrieved passage, in retrieval order (−1 where unparseable)"""
    unparseable: int
    """replies that stated no −1..2 score"""


class PassageFilter:
    """Score retrieved passages with a chat model on −1..2 and keep the best few (the authors' filter)."""

    def __init__(self, model: ChatModel, config: FilterConfig | None = None, **overrides: Any) -> None:
        """Filter with `model`; fields of FilterConfig may be given as keywords."""
        self.model = model
        self.config = _with_overrides(config or FilterConfig(), overrides)
        self.calls = 0
        """filter calls made (one per retrieved passage)"""
        self.unparseable = 0
        """of them, replies that stated no score"""

    def __call__(self, query: str, hits: Sequence[RetrievedPassage]) -> FilterResult:
        """Score each of `hits` for `query` and keep up to max_keep with score ≥ min_score."""
        if not isinstance(query, str):
            raise UserError(f"query must be a str; got {type(query).__name__}")
        hits = list(hits)
        if not hits:
            return FilterResult((), (), 0)
        requests = [
            {
                "messages": [
                    {"role": "user", "content": FILTER_PROMPT.format(query=query, passage=h.passage.text)}
                ],
                "temperature": 0.0,
                "max_tokens": self.config.max_tokens,
            }
            for h in hits
        ]
        replies = chat_many(self.model, requests, max_concurrency=self.config.max_concurrency)
        parsed = [parse_filter_score(r[0].text if r else "") for r in replies]
        scores = tuple(-1 if s is None else s for s in parsed)  # unparseable counts as −1
        unparseable = sum(s is None for s in parsed)
        self.calls += len(hits)
        self.unparseable += unparseable
        order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
        kept = tuple(hits[i] for i in order if scores[i] >= self.config.min_score)[: self.config.max_keep]
        return FilterResult(kept, scores, unparseable)
