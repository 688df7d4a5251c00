"""The translators' contract (shapes, attention, masking), training, resume and bad-input errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.slt_reliability.data import Corpus, Sample
from iclr26.slt_reliability.models import (
    DecoderOutput,
    GlossBasedTranslator,
    GlossFreeTranslator,
    Translator,
    Vocab,
    greedy_decode,
    n_parameters,
    pad_tokens,
    pad_videos,
)
from iclr26.slt_reliability.train import (
    TrainConfig,
    bleu,
    build_translator,
    load_translator,
    train_translator,
    translate,
)

KINDS = ("gloss_based", "gloss_free")


FakeSample, FakeCorpus = Sample, Corpus  # the real data classes (data.py)


GLOSSES = ("HOUSE", "DOG", "RUN", "RAIN", "TOMORROW", "BERLIN")
WORDS = {
    "HOUSE": "house",
    "DOG": "dog",
    "RUN": "runs",
    "RAIN": "rain",
    "TOMORROW": "tomorrow",
    "BERLIN": "berlin",
}


def fake_corpus(n: int = 8, seed: int = 0, frames_per_gloss: int = 8) -> FakeCorpus:
    """Each gloss a fixed random trajectory; a video is its glosses' trajectories plus noise."""
    rng = np.random.default_rng(seed)
    proto = {g: rng.normal(size=(frames_per_gloss, 50, 2)).astype(np.float32) for g in GLOSSES}
    samples = []
    for i in range(n):
        glosses = tuple(rng.choice(GLOSSES, size=int(rng.integers(2, 5)), replace=False))
        kp = np.concatenate([proto[g] for g in glosses]) + 0.05 * rng.normal(
            size=(len(glosses) * frames_per_gloss, 50, 2)
        )
        text = ("the", *(WORDS[g] for g in reversed(glosses)))  # other word order plus a function word
        samples.append(
            FakeSample(f"s{i}", kp.astype(np.float32), glosses, text, frozenset({"berlin"}), i % 2, "fake")
        )
    words = ("the", *WORDS.values())
    return FakeCorpus("fake", samples, samples[:4], samples[:4], GLOSSES, words, frozenset({"berlin"}))


def tiny(kind: str, stride: int = 4) -> Translator:
    cfg = TrainConfig(d_model=32, layers=2, heads=2, d_ff=64, stride=stride, dropout=0.0)
    torch.manual_seed(0)
    return build_translator(kind, Vocab(fake_corpus().words), GLOSSES, cfg).eval()


def batch(samples: list[FakeSample], vocab: Vocab) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    video, lengths = pad_videos([torch.as_tensor(s.keypoints) for s in samples])
    tokens = pad_tokens([[vocab.bos, *vocab.encode(s.text), vocab.eos] for s in samples], vocab.pad)
    return video, lengths, tokens


TINY = dict(d_model=32, layers=1, heads=2, d_ff=64, dropout=0.0, batch_size=8, lr=3e-3, warmup=10)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("stride", [2, 4])
def test_contract_shapes(kind: str, stride: int) -> None:
    model = tiny(kind, stride)
    samples = fake_corpus().train[:3]
    video, lengths, tokens = batch(samples, model.vocab)
    memory, mask = model.encode(video, lengths)
    B, T = video.shape[:2]
    S = math.ceil(T / stride)
    assert model.stride == stride
    assert memory.shape == (B, S, 32) and mask.shape == (B, S) and mask.dtype == torch.bool
    assert ((~mask).sum(1) == (lengths + stride - 1) // stride).all()
    out = model.decode(memory, mask, tokens)
    L, V = tokens.shape[1], len(model.vocab)
    assert isinstance(out, DecoderOutput)
    assert out.logits.shape == (B, L, V) and out.hidden.shape == (B, L, 32)
    assert out.cross_attn.shape == (B, 2, 2, L, S)
    torch.testing.assert_close(model.out(out.hidden), out.logits)  # hidden is the projection's input
    torch.testing.assert_close(model(video, lengths, tokens).logits, out.logits)


@pytest.mark.parametrize("kind", KINDS)
def test_cross_attn_rows_are_distributions_over_unpadded_memory(kind: str) -> None:
    model = tiny(kind)
    video, lengths, tokens = batch(fake_corpus().train[:4], model.vocab)
    memory, mask = model.encode(video, lengths)
    attn = model.decode(memory, mask, tokens).cross_attn
    torch.testing.assert_close(attn.sum(-1), torch.ones(attn.shape[:-1]))
    assert (attn.masked_select(mask[:, None, None, None, :].expand_as(attn)) == 0).all()


@pytest.mark.parametrize("kind", KINDS)
def test_padded_frames_do_not_change_outputs(kind: str) -> None:
    model = tiny(kind)
    samples = fake_corpus().train[:4]
    video, lengths, tokens = batch(samples, model.vocab)
    assert lengths.min() < video.shape[1]  # some padding to perturb
    ref = model(video, lengths, tokens)
    junk = video.clone()
    pad = torch.arange(video.shape[1])[None, :] >= lengths[:, None]
    junk[pad] = torch.randn_like(junk[pad]) * 100
    out = model(junk, lengths, tokens)
    for a, b in ((ref.logits, out.logits), (ref.hidden, out.hidden), (ref.cross_attn, out.cross_attn)):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)
    junk[pad] = float("nan")  # NaN in padding is ignored too
    torch.testing.assert_close(model(junk, lengths, tokens).logits, ref.logits, rtol=0, atol=1e-6)
    # a sample alone (no padding) gives what it gives inside the padded batch
    b = int(lengths.argmin())
    v1, l1, _ = batch([samples[b]], model.vocab)
    alone = model(v1, l1, tokens[b : b + 1]).logits
    torch.testing.assert_close(alone, ref.logits[b : b + 1], rtol=1e-4, atol=1e-5)


def test_ctc_head_only_on_gloss_based() -> None:
    gb, gf = tiny("gloss_based"), tiny("gloss_free")
    assert gb.has_gloss_head and isinstance(gb, GlossBasedTranslator)
    assert not gf.has_gloss_head and isinstance(gf, GlossFreeTranslator)
    assert not any("ctc" in name for name, _ in gf.named_parameters())
    video, lengths, tokens = batch(fake_corpus().train[:2], gb.vocab)
    memory, _ = gb.encode(video, lengths)
    assert gb.gloss_logits(memory).shape == (*memory.shape[:2], 1 + len(GLOSSES))
    assert float(gf.loss(video, lengths, tokens)["ctc"]) == 0.0
    with pytest.raises(UserError, match="gloss targets"):
        gb.loss(video, lengths, tokens)
    g = [gb.encode_glosses(s.glosses) for s in fake_corpus().train[:2]]
    flat, glen = torch.tensor([x for s in g for x in s]), torch.tensor([len(s) for s in g])
    losses = gb.loss(video, lengths, tokens, flat, glen, ctc_weight=0.5)
    torch.testing.assert_close(losses["loss"], losses["ce"] + 0.5 * losses["ctc"])
    assert float(losses["ctc"]) > 0
    with pytest.raises(UserError, match="FLY"):
        gb.encode_glosses(("FLY",))


@pytest.mark.parametrize("kind", KINDS)
def test_tiny_model_overfits_tiny_corpus(kind: str, tmp_path) -> None:
    corpus = fake_corpus(n=8)
    cfg = TrainConfig(epochs=100, seed=0, **TINY)
    model = train_translator(kind, corpus, cfg, tmp_path)
    hist = model.history
    assert len(hist) == 100 and hist[-1]["ce"] < 0.1 * hist[0]["ce"]
    hyps = translate(model, corpus.train, batch_size=3)
    refs = [list(s.text) for s in corpus.train]
    assert sum(h == r for h, r in zip(hyps, refs, strict=True)) >= 6
    assert hist[-1]["dev_bleu"] > 50
    if kind == "gloss_based":
        assert hist[-1]["ctc"] < 0.5 * hist[0]["ctc"]
    # greedy_decode: batched ids, without bos/eos, capped at max_len
    video, lengths, _ = batch(corpus.train[:3], model.vocab)
    ids = greedy_decode(model, video, lengths, max_len=2)
    assert len(ids) == 3 and all(len(x) <= 2 for x in ids)
    assert all(model.vocab.bos not in x and model.vocab.eos not in x for x in ids)
    # the saved checkpoint reloads to the same model
    again = load_translator(tmp_path)
    v, n, t = batch(corpus.train[:2], model.vocab)
    torch.testing.assert_close(again(v, n, t).logits, model(v, n, t).logits)


def test_resume_equals_uninterrupted_run_and_seeded_runs_repeat(tmp_path) -> None:
    corpus = fake_corpus(n=8)
    full = train_translator("gloss_based", corpus, TrainConfig(epochs=4, seed=3, **TINY), tmp_path / "full")
    full2 = train_translator("gloss_based", corpus, TrainConfig(epochs=4, seed=3, **TINY), tmp_path / "full2")
    train_translator("gloss_based", corpus, TrainConfig(epochs=2, seed=3, **TINY), tmp_path / "cut")
    resumed = train_translator("gloss_based", corpus, TrainConfig(epochs=4, seed=3, **TINY), tmp_path / "cut")
    for other in (full2, resumed):
        for (k, a), b in zip(full.state_dict().items(), other.state_dict().values(), strict=True):
            assert torch.equal(a, b), k
    assert [r["loss"] for r in resumed.history] == [r["loss"] for r in full.history]
    with pytest.raises(UserError, match="lr"):
        train_translator(
            "gloss_based", corpus, TrainConfig(epochs=5, seed=3, **{**TINY, "lr": 1e-2}), tmp_path / "cut"
        )


def test_short_video_names_the_sample() -> None:
    model = tiny("gloss_free", stride=4)
    corpus = fake_corpus()
    short = FakeSample(
        "tiny-clip", np.zeros((3, 50, 2), np.float32), ("DOG",), ("dog",), frozenset(), 0, "fake"
    )
    with pytest.raises(UserError, match=r"'tiny-clip' has 3 frames, fewer than the model's stride \(4\)"):
        translate(model, [corpus.train[0], short])
    video, lengths = pad_videos([torch.as_tensor(corpus.train[0].keypoints), torch.zeros(2, 50, 2)])
    with pytest.raises(UserError, match="sample 1 of the batch has 2 frames"):
        model.encode(video, lengths)


def test_nan_keypoints_and_bad_shapes_are_errors() -> None:
    model = tiny("gloss_free")
    kp = fake_corpus().train[0].keypoints.copy()
    kp[5, 3, 0] = np.nan
    bad = FakeSample("nan-clip", kp, ("DOG",), ("dog",), frozenset(), 0, "fake")
    with pytest.raises(UserError, match="'nan-clip' has NaN"):
        translate(model, [bad])
    with pytest.raises(UserError, match=r"\(B, T, 50, 2\)"):
        model.encode(torch.zeros(1, 10, 49, 2), torch.tensor([10]))


def test_vocabulary_mismatch_is_an_error() -> None:
    model = tiny("gloss_based")
    video, lengths, tokens = batch(fake_corpus().train[:2], model.vocab)
    tokens[1, 2] = len(model.vocab)
    with pytest.raises(UserError, match=f"vocabulary mismatch: sequence 1 .* {len(model.vocab)} entries"):
        model(video, lengths, tokens)


def test_vocab_roundtrip_and_bleu() -> None:
    vocab = Vocab(("the", "dog", "the", "runs"))
    assert len(vocab) == 4 + 3 and (vocab.pad, vocab.bos, vocab.eos, vocab.unk) == (0, 1, 2, 3)
    ids = vocab.encode(("the", "cat", "runs"))
    assert ids == [4, vocab.unk, 6]
    assert vocab.decode([vocab.bos, *ids, vocab.eos, 5]) == ["the", "<unk>", "runs"]
    refs = [["the", "dog", "runs", "home", "today"], ["it", "will", "rain", "in", "berlin"]]
    assert bleu(refs, refs) == pytest.approx(100.0)
    assert bleu([["x"], ["y"]], refs) < 1.0
    with pytest.raises(ValueError, match="2 references"):
        bleu(refs[:1], refs)


def test_config_checks_and_sizes() -> None:
    with pytest.raises(ConfigError, match="divisible by heads"):
        TrainConfig(d_model=30, heads=4)
    with pytest.raises(ConfigError, match="power of two"):
        TrainConfig(stride=3)
    with pytest.raises(ConfigError, match="kind"):
        build_translator("gloss_magic", Vocab(()), (), TrainConfig())
    gb = build_translator("gloss_based", Vocab(fake_corpus().words), GLOSSES, TrainConfig())
    assert 0.5e6 < n_parameters(gb) < 2e6  # default size: trains on 2 CPU cores in minutes


def scrambled(kind: str) -> Translator:
    """`tiny` with every weight perturbed (seeded): an untrained tiny model only repeats its last token
    (tied embeddings and the residual path), this one decodes varied, video-dependent ids."""
    model = tiny(kind)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g))
    return model


def _greedy_reference(model: Translator, video: torch.Tensor, lengths: torch.Tensor, max_len: int) -> list:
    """`greedy_decode` as it was before forced prefixes (the bit-identical baseline)."""
    vocab = model.vocab
    with torch.no_grad():
        memory, mask = model.encode(video, lengths)
        tokens = torch.full((memory.shape[0], 1), vocab.bos, dtype=torch.long)
        done = torch.zeros(memory.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            nxt = model.decode(memory, mask, tokens).logits[:, -1].argmax(-1).masked_fill(done, vocab.pad)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            done |= nxt == vocab.eos
            if bool(done.all()):
                break
    out = []
    for row in tokens[:, 1:].tolist():
        ids: list[int] = []
        for i in row:
            if i in (vocab.eos, vocab.pad):
                break
            ids.append(i)
        out.append(ids)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_decode_without_prefix_is_unchanged(kind: str) -> None:
    for model in (tiny(kind), scrambled(kind)):
        video, lengths, _ = batch(fake_corpus().train[:4], model.vocab)
        for max_len in (0, 1, 5, 12):
            ref = _greedy_reference(model, video, lengths, max_len)
            assert greedy_decode(model, video, lengths, max_len) == ref
            assert greedy_decode(model, video, lengths, max_len, prefix=[[]] * 4) == ref


@pytest.mark.parametrize("kind", KINDS)
def test_greedy_decode_with_prefix(kind: str) -> None:
    model = scrambled(kind)
    vocab = model.vocab
    samples = fake_corpus().train[:3]
    video, lengths, _ = batch(samples, vocab)
    prefix = [[], vocab.encode(["rain"]), vocab.encode(["the", "berlin", "dog"])]  # mixed lengths
    out = greedy_decode(model, video, lengths, max_len=6, prefix=prefix)
    for b, (p, ids) in enumerate(zip(prefix, out, strict=True)):
        assert ids[: len(p)] == p and len(ids) <= len(p) + 6
        assert vocab.eos not in ids  # (an untrained model may emit bos itself; the leading bos is cut)
        v1, l1, _ = batch([samples[b]], vocab)
        assert greedy_decode(model, v1, l1, max_len=6, prefix=[p]) == [ids]  # alone == in the batch
        with torch.no_grad():  # the continuation is greedy given bos + prefix
            memory, mask = model.encode(v1, l1)
            for j in range(len(p), len(ids)):
                tokens = torch.tensor([[vocab.bos, *ids[:j]]])
                assert int(model.decode(memory, mask, tokens).logits[0, -1].argmax()) == ids[j]
    assert len({tuple(x) for x in greedy_decode(model, video, lengths, 6)}) > 1  # varied, not trivial
    assert greedy_decode(model, video, lengths, max_len=0, prefix=prefix) == prefix
    with torch.no_grad():  # a model that always wants eos: the prefix is forced, then it stops
        model.out.bias[vocab.eos] += 1e3
    assert greedy_decode(model, video, lengths, max_len=6, prefix=prefix) == prefix
    with pytest.raises(UserError, match=r"one id sequence per sample of the batch \(3\), got 2"):
        greedy_decode(model, video, lengths, 4, prefix=prefix[:2])
    with pytest.raises(UserError, match="prefix of sample 1 of the batch has token id 2"):
        greedy_decode(model, video, lengths, 4, prefix=[[], [vocab.eos], []])
    with pytest.raises(UserError, match="prefix of sample 's2' has token id 99"):
        greedy_decode(model, video, lengths, 4, ids=["s0", "s1", "s2"], prefix=[[], [], [99]])


def test_translate_with_prefix_keeps_sample_order() -> None:
    model = scrambled("gloss_based")
    samples = fake_corpus(n=6).train  # different lengths: translate reorders them internally
    assert len({len(s.keypoints) for s in samples}) > 1
    assert translate(model, samples, batch_size=4, max_len=5) == translate(
        model, samples, batch_size=4, max_len=5, prefix=[[]] * 6
    )
    prefix = [["dog"], [], ["the", "rain"], ["berlin"], ["house", "the", "runs"], ["tomorrow"]]
    hyps = translate(model, samples, batch_size=4, max_len=5, prefix=prefix)
    for s, p, h in zip(samples, prefix, hyps, strict=True):
        assert h[: len(p)] == p and len(h) <= len(p) + 5
        assert translate(model, [s], max_len=5, prefix=[p]) == [h]
    with pytest.raises(UserError, match="prefix of sample s1: word 'cat' is not in the model's vocabulary"):
        translate(model, samples[:2], prefix=[["dog"], ["cat"]])
    with pytest.raises(UserError, match=r"one word sequence per sample \(2\), got 1"):
        translate(model, samples[:2], prefix=[["dog"]])
    with pytest.raises(UserError, match="got the string 'dog'"):
        translate(model, samples[:1], prefix=["dog"])
    with pytest.raises(UserError, match="word '<eos>'"):
        translate(model, samples[:1], prefix=[["<eos>"]])
