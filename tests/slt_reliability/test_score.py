"""score.py: the batched, length-sorted passes over a split equal the passes of each sample alone, in
the samples' order; a forced prefix is read but not scored; CHAIR labels come from the hypotheses."""

from __future__ import annotations

import torch

from iclr26.slt_reliability.data import make_corpus
from iclr26.slt_reliability.models import Vocab, pad_tokens
from iclr26.slt_reliability.reliability import ReliabilityConfig, choose_mismatched, three_passes
from iclr26.slt_reliability.score import rest_pose, run_passes, score_split
from iclr26.slt_reliability.train import TrainConfig, build_translator

CFG = TrainConfig(d_model=32, d_ff=64, layers=1, heads=2)


def _setup(n: int = 12):
    corpus = make_corpus("phoenix_like", seed=3, n_train=20, n_dev=0, n_test=n)
    torch.manual_seed(0)
    model = build_translator("gloss_free", Vocab(corpus.words), corpus.glosses, CFG).eval()
    return corpus, model


def test_batched_passes_equal_each_sample_alone_in_order() -> None:
    corpus, model = _setup()
    samples = corpus.test
    words = [list(s.text[: 3 + i % 4]) for i, s in enumerate(samples)]
    rest, cfg = rest_pose(corpus.train), ReliabilityConfig()
    batched = run_passes(model, samples, words, rest, cfg, batch_size=5)
    other = choose_mismatched([len(s.keypoints) for s in samples], k=cfg.mismatch_k, seed=cfg.seed)
    v = model.vocab
    for i, s in enumerate(samples):
        tokens = pad_tokens([[v.bos, *v.encode(words[i]), v.eos]], v.pad)
        alone = three_passes(
            model,
            torch.as_tensor(s.keypoints)[None],
            torch.tensor([len(s.keypoints)]),
            tokens,
            torch.as_tensor(samples[other[i]].keypoints)[None],
            torch.tensor([len(samples[other[i]].keypoints)]),
            rest,
            cfg,
        )
        n = alone.target.shape[1]
        assert torch.equal(batched.target[i, :n], alone.target[0])
        assert torch.equal(batched.mask[i, :n], alone.mask[0]) and not batched.mask[i, n:].any()
        assert torch.allclose(batched.logp_vid[i, :n], alone.logp_vid[0], atol=1e-5)
        assert torch.allclose(batched.logp_0[i, :n], alone.logp_0[0], atol=1e-5)
        assert torch.allclose(batched.logp_mis[i, :n], alone.logp_mis[0], atol=1e-5)


def test_prefix_is_read_but_not_scored_and_labels_follow_chair() -> None:
    corpus, model = _setup(6)
    prefix = [list(s.text[:2]) for s in corpus.test]
    cfg = ReliabilityConfig()
    scored = score_split(model, corpus.test, corpus.entity_words, rest_pose(corpus.train), cfg, prefix=prefix)
    assert scored.prefix == prefix
    for i in range(len(corpus.test)):
        assert not scored.passes.mask[i, :2].any()  # the two forced words
        assert scored.passes.mask[i].any()  # something is scored (at least the eos)
        assert torch.equal(scored.passes.target[i, :2], torch.tensor(model.vocab.encode(prefix[i])))
    plain = score_split(model, corpus.test, corpus.entity_words, rest_pose(corpus.train), cfg)
    assert all(p == [] for p in plain.prefix)
    for hyp, s, y in zip(plain.hyps, plain.samples, plain.y, strict=True):
        wrong = [w for w in hyp if w in corpus.entity_words and w not in s.entities]
        assert y == int(bool(wrong))
