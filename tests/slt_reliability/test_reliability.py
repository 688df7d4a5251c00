"""Token reliability (arXiv 2510.18439) on hand-built decoders whose attention and probabilities are known."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from iclr26.slt_reliability.reliability import (
    FEATURE_NAMES,
    Passes,
    QuantileScaler,
    ReliabilityConfig,
    TokenReliability,
    choose_mismatched,
    counterfactual_features,
    fit_length,
    mask_video,
    s_hid,
    tail_k,
    tail_pool,
    three_passes,
    token_features,
    video_attention_mass,
)

PAD, BOS, EOS = 0, 1, 2
V, K = 6, 50


@dataclass
class DecoderOutput:
    logits: torch.Tensor
    hidden: torch.Tensor
    cross_attn: torch.Tensor


class FakeSLT:
    """A translator whose decoder output depends only on a per-sentence "video code" c.

    c = mean x-coordinate over the valid frames. Memory = one null slot (position 0), then one row per
    frame. For code c the decoder emits logits log probs(c) + c, hidden(c), and puts null(c)
    (n_layers, n_heads) attention on the null slot, the rest spread evenly over the valid frames.
    Every call's inputs are recorded.
    """

    n_null_slots = 1

    def __init__(self, probs, hidden, null) -> None:
        self.vocab = SimpleNamespace(pad=PAD, bos=BOS, eos=EOS)
        self.probs, self.hidden, self.null = probs, hidden, null
        self.encoded: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.decoded: list[torch.Tensor] = []

    def encode(self, video: torch.Tensor, lengths: torch.Tensor):
        self.encoded.append((video.clone(), lengths.clone()))
        b, t = video.shape[:2]
        frames = video[..., 0].mean(-1, keepdim=True)  # (B, T, 1)
        memory = torch.cat([torch.zeros(b, 1, 1), frames], dim=1)
        pad = torch.arange(t)[None, :] >= lengths[:, None]
        return memory, torch.cat([torch.zeros(b, 1, dtype=torch.bool), pad], dim=1)

    def decode(self, memory: torch.Tensor, memory_pad_mask: torch.Tensor, tokens: torch.Tensor):
        self.decoded.append(tokens.clone())
        (b, length), s = tokens.shape, memory.shape[1]
        valid = ~memory_pad_mask[:, 1:]
        logits, hidden = torch.zeros(b, length, V), torch.zeros(b, length, 3)
        attn = torch.zeros(b, 2, 2, length, s)
        for i in range(b):
            c = float(torch.where(valid[i], memory[i, 1:, 0], 0.0).sum() / valid[i].sum())
            null = torch.as_tensor(self.null(c), dtype=torch.float32)
            for j in range(length):
                prev = int(tokens[i, j])
                logits[i, j] = torch.log(torch.as_tensor(self.probs(c, prev, j), dtype=torch.float32)) + c
                hidden[i, j] = torch.as_tensor(self.hidden(c, prev, j), dtype=torch.float32)
                attn[i, :, :, j, 0] = null
                attn[i, :, :, j, 1:] = ((1 - null) / valid[i].sum())[..., None] * valid[i]
        return DecoderOutput(logits, hidden, attn)


# the table decoder: clean video = 1.0, masked = 0.0 (zero rest pose), mismatched = 2.0
PROBS = {
    1.0: [0.01, 0.01, 0.18, 0.5, 0.2, 0.1],
    0.0: [0.01, 0.01, 0.28, 0.2, 0.3, 0.2],
    2.0: [0.01, 0.01, 0.18, 0.1, 0.4, 0.3],
}
HIDDEN = {1.0: [1.0, 0.0, 0.0], 0.0: [1.0, math.sqrt(3.0), 0.0], 2.0: [0.0, 1.0, 0.0]}  # angle(1, 0) = π/3
NULL = {1.0: [[0.1, 0.3], [0.2, 0.2]], 0.0: [[0.5, 0.7], [0.6, 0.6]], 2.0: [[0.4, 0.4], [0.4, 0.4]]}


def table_model() -> FakeSLT:
    code = lambda c: 0.0 if round(c, 6) == 0.25 else round(c, 6)  # noqa: E731  (0.25: another rest pose)
    return FakeSLT(
        probs=lambda c, prev, j: PROBS[code(c)],
        hidden=lambda c, prev, j: HIDDEN[code(c)],
        null=lambda c: NULL[code(c)],
    )


def table_inputs():
    video = torch.full((1, 5, K, 2), 7.0)  # frame 5 is padding (7.0 must never be read)
    video[0, :4] = 1.0
    mismatched = torch.full((1, 3, K, 2), 2.0)
    tokens = torch.tensor([[BOS, 3, 4, EOS]])
    return video, torch.tensor([4]), tokens, mismatched, torch.tensor([3])


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_signals_on_the_table_decoder_have_the_hand_values():
    model = table_model()
    passes = three_passes(model, *table_inputs())
    assert passes.target.tolist() == [[3, 4, EOS]]
    assert passes.mask.tolist() == [[True, True, False]]
    assert passes.p_vid[0, :2].tolist() == pytest.approx([0.5, 0.2], abs=1e-6)
    assert passes.p_0[0, :2].tolist() == pytest.approx([0.2, 0.3], abs=1e-6)
    assert passes.p_mis[0, :2].tolist() == pytest.approx([0.1, 0.4], abs=1e-6)
    # Eq. (1): the hidden states make an angle of π/3 at every position
    assert s_hid(passes.h_vid, passes.h_0)[0].tolist() == pytest.approx([1 / 3] * 3, abs=1e-6)
    # mass on the video = 1 − mean null-slot attention: 1 − 0.2 clean, 1 − 0.6 masked
    assert passes.attn_vid[0].tolist() == pytest.approx([0.8] * 3, abs=1e-6)
    assert passes.attn_0[0].tolist() == pytest.approx([0.4] * 3, abs=1e-6)
    g = counterfactual_features(passes)[0]
    lg = math.log
    token_3 = [
        lg(0.5 / 0.2),  # s_log, p_cf = max(0.2, 0.1)
        (lg(0.5) + 1) - max(lg(0.2) + 0, lg(0.1) + 2),  # s_logit on the raw logits log p + c
        sigmoid(lg(2.5)),
        0.3,
        0.4,
        0.5,
        0.2,
    ]
    token_4 = [lg(0.2 / 0.4), (lg(0.2) + 1) - max(lg(0.3), lg(0.4) + 2), 1 / 3, -0.1, -0.2, 0.2, 0.4]
    assert g[0].tolist() == pytest.approx(token_3, abs=1e-5)
    assert g[1].tolist() == pytest.approx(token_4, abs=1e-5)
    # Eq. (2): Δm = 0.4 is the median of the fitted training values
    scaler = QuantileScaler().fit(np.linspace(0.0, 0.8, 101))
    feats = token_features(passes, scaler)[0]
    assert feats.shape == (3, len(FEATURE_NAMES))
    assert feats[:2, 1].tolist() == pytest.approx([0.5, 0.5], abs=1e-6)  # attention is float32
    # Eq. (5) and (6) with hand weights
    rel = TokenReliability()
    rel.attn_scaler_ = scaler
    rel.w_, rel.b_ = np.linspace(-0.4, 0.4, 9), 0.1
    expected = [sigmoid(float(np.dot(rel.w_, [1 / 3, 0.5, *tok])) + 0.1) for tok in (token_3, token_4)]
    r = rel.token_reliability(passes)[0]
    assert r[:2].tolist() == pytest.approx(expected, abs=1e-5)
    assert r[2] == 0.0
    assert float(rel.sentence_score(passes)[0]) == pytest.approx(min(expected), abs=1e-5)  # ⌈0.1·2⌉ = 1


def test_masked_and_mismatched_passes_change_only_the_video():
    model = table_model()
    video, lengths, tokens, mismatched, mis_lengths = table_inputs()
    rest = torch.full((K, 2), 0.25)
    three_passes(model, video, lengths, tokens, mismatched, mis_lengths, rest_pose=rest)
    assert len(model.encoded) == 3 and len(model.decoded) == 3
    (x_vid, l_vid), (x_0, l_0), (x_mis, l_mis) = model.encoded
    assert torch.equal(x_vid, video) and torch.equal(l_vid, lengths)
    for x, length in ((x_0, l_0), (x_mis, l_mis)):
        assert x.shape == video.shape and torch.equal(length, lengths)
        assert torch.equal(x[0, 4:], video[0, 4:])  # padding frames untouched
        assert not torch.equal(x[0, :4], video[0, :4])
    assert torch.equal(x_0[0, :4], rest.expand(4, K, 2))
    assert torch.equal(x_mis[0, :4], torch.full((4, K, 2), 2.0))
    for dec in model.decoded:
        assert torch.equal(dec, tokens[:, :-1])


def test_mask_video_and_fit_length():
    video = torch.arange(2 * 4 * K * 2, dtype=torch.float32).reshape(2, 4, K, 2)
    lengths = torch.tensor([2, 4])
    x_0 = mask_video(video, lengths)
    assert (x_0[0, :2] == 0).all() and torch.equal(x_0[0, 2:], video[0, 2:]) and (x_0[1] == 0).all()
    with pytest.raises(ValueError, match="rest_pose"):
        mask_video(video, lengths, torch.zeros(3, 2))
    src = torch.arange(2 * 6, dtype=torch.float32).reshape(2, 6, 1, 1).expand(2, 6, K, 2)
    out = fit_length(src, torch.tensor([6, 2]), video, lengths)
    assert out[0, :2, 0, 0].tolist() == [0.0, 3.0]  # 6 frames -> 2: frames 0, 3
    assert out[1, :4, 0, 0].tolist() == [6.0, 6.0, 7.0, 7.0]  # 2 frames -> 4: each twice
    assert torch.equal(out[0, 2:], video[0, 2:])


def test_choose_mismatched_is_seeded_never_itself_and_near_in_length():
    lengths = [10, 11, 30, 31, 12, 50]
    a, b = choose_mismatched(lengths, k=2, seed=3), choose_mismatched(lengths, k=2, seed=3)
    assert np.array_equal(a, b)
    assert all(j != i for i, j in enumerate(a))
    assert a[2] in (3, 4) and a[3] in (2, 4)  # the two nearest lengths
    assert choose_mismatched(lengths, k=1)[0] == 1
    with pytest.raises(ValueError, match="at least 2"):
        choose_mismatched([5])


def test_video_attention_mass_definitions():
    pad = torch.tensor([[False, False, False, False, True]])
    attn = torch.zeros(1, 1, 2, 1, 5)
    attn[0, 0, 0, 0] = torch.tensor([0.2, 0.8, 0.0, 0.0, 0.0])  # peaked on one frame
    attn[0, 0, 1, 0] = torch.tensor([0.4, 0.2, 0.2, 0.2, 0.0])  # even over the three frames
    mass = video_attention_mass(attn, pad, n_null_slots=1, definition="null_slot")
    assert float(mass) == pytest.approx((0.8 + 0.6) / 2)
    conc = video_attention_mass(attn, pad, n_null_slots=1, definition="concentration")
    assert float(conc) == pytest.approx((1.0 + 0.0) / 2, abs=1e-6)
    with pytest.raises(ValueError, match="n_null_slots"):
        video_attention_mass(attn, pad, n_null_slots=0, definition="null_slot")


def test_eos_only_hypothesis_scores_its_eos_and_bad_inputs_name_the_sample():
    model = table_model()
    video, lengths, _, mismatched, mis_lengths = table_inputs()
    passes = three_passes(model, video, lengths, torch.tensor([[BOS, EOS, PAD]]), mismatched, mis_lengths)
    assert passes.mask.tolist() == [[True, False]]
    with pytest.raises(ValueError, match="sample 0 has token ids outside"):
        three_passes(model, video, lengths, torch.tensor([[BOS, V + 1]]), mismatched, mis_lengths)
    nan = video.clone()
    nan[0, 1, 3, 0] = float("nan")
    with pytest.raises(ValueError, match="sample 0 has NaN"):
        three_passes(model, nan, lengths, torch.tensor([[BOS, 3]]), mismatched, mis_lengths)
    nan[0, 1, 3, 0] = 1.0
    nan[0, 4] = float("nan")  # padding may hold anything
    three_passes(model, nan, lengths, torch.tensor([[BOS, 3]]), mismatched, mis_lengths)


@pytest.mark.parametrize(
    ("r", "expected"),
    [
        ([0.7], 0.7),  # T = 1 -> 1 token
        ([0.9, 0.1, 0.5, 0.8, 0.6, 0.7, 0.95, 0.3, 0.85, 0.75], 0.1),  # T = 10 -> 1
        ([0.9, 0.1, 0.5, 0.8, 0.6, 0.7, 0.95, 0.3, 0.85, 0.75, 0.2], 0.15),  # T = 11 -> the 2 lowest
    ],
)
def test_tail_pool_hand_cases(r, expected):
    r = torch.tensor([r], dtype=torch.float64)
    assert float(tail_pool(r, torch.ones_like(r, dtype=torch.bool))) == pytest.approx(expected)


def test_tail_pool_ignores_unscored_tokens_and_k_is_float_safe():
    r = torch.tensor([[0.5, 0.0, 0.9], [0.4, 0.6, 0.8]], dtype=torch.float64)
    mask = torch.tensor([[True, False, True], [True, True, True]])
    assert tail_pool(r, mask).tolist() == pytest.approx([0.5, 0.4])
    assert tail_k(torch.tensor([1, 10, 11, 20, 21, 30]), 0.1).tolist() == [1, 1, 2, 2, 3, 3]
    with pytest.raises(ValueError, match="sentence 0"):
        tail_pool(r, torch.zeros_like(mask))


def test_quantile_scaler_is_the_empirical_cdf_clipped_to_unit_interval():
    q = QuantileScaler(n_quantiles=5).fit([0.0, 1.0, 2.0, 3.0, 4.0])
    assert q.transform([-1.0, 0.0, 1.5, 4.0, 9.0]).tolist() == pytest.approx([0.0, 0.0, 0.375, 1.0, 1.0])


def synthetic_passes(n: int, seed: int) -> tuple[Passes, np.ndarray]:
    """Sentences of 5–14 tokens; a hallucinated one has a few tokens the video does not support."""
    g = torch.Generator().manual_seed(seed)
    y = (torch.rand(n, generator=g) < 0.5).long().numpy()
    n_max = 14
    lengths = torch.randint(5, n_max + 1, (n,), generator=g)
    mask = torch.arange(n_max)[None, :] < lengths[:, None]
    grounded = torch.ones(n, n_max, dtype=torch.bool)
    for i in np.flatnonzero(y):
        grounded[i, torch.randperm(int(lengths[i]), generator=g)[:2]] = False
    u = lambda: torch.rand(n, n_max, generator=g)  # noqa: E731
    logp_0 = torch.log(0.05 + 0.4 * u())
    logp_vid = torch.where(grounded, torch.log(0.5 + 0.5 * u()), logp_0 + 0.1 * u())
    h_0 = torch.randn(n, n_max, 4, generator=g)
    h_vid = torch.where(grounded[..., None], torch.randn(n, n_max, 4, generator=g), h_0)
    attn_0 = 0.4 * u()
    passes = Passes(
        target=torch.full((n, n_max), 3),
        mask=mask,
        logp_vid=logp_vid,
        logp_0=logp_0,
        logp_mis=torch.log(0.05 + 0.4 * u()),
        z_vid=logp_vid + 1.0,
        z_0=logp_0,
        z_mis=logp_0 - 0.5,
        h_vid=h_vid,
        h_0=h_0,
        attn_vid=torch.where(grounded, attn_0 + 0.5 * u(), attn_0),
        attn_0=attn_0,
        entropy_vid=u(),
    )
    return passes, y


@pytest.mark.parametrize("fit", ["token", "pooled"])
def test_fit_separates_the_labels_and_the_calibration_is_monotone(fit):
    from sklearn.metrics import roc_auc_score

    train, y_train = synthetic_passes(120, seed=0)
    test, y_test = synthetic_passes(80, seed=1)
    rel = TokenReliability(ReliabilityConfig(fit=fit, pooled_steps=60)).fit(train, y_train)
    assert rel.w_.shape == (9,) and np.isfinite(rel.w_).all()
    big_r = rel.sentence_score(test).numpy()
    assert ((big_r >= 0) & (big_r <= 1)).all()
    assert roc_auc_score(y_test, 1 - big_r) > 0.9
    grid = np.linspace(-0.5, 1.5, 101)
    rate = rel.calibration_.predict(grid)
    assert (np.diff(rate) >= 0).all() and rate.min() >= 0 and rate.max() <= 1
    assert rate[0] < rate[-1]
    rates = rel.hallucination_rate(test)
    assert ((rates >= 0.5) == y_test).mean() > 0.8


def test_passes_cat_and_select_round_trip():
    a, _ = synthetic_passes(3, seed=2)
    b = a.select([1])
    b = Passes(**{f.name: getattr(b, f.name)[:, :7] for f in fields(Passes)})
    both = Passes.cat([a, b])
    assert both.n_sentences == 4 and both.target.shape[1] == a.target.shape[1]
    assert not both.mask[3, 7:].any()
    assert torch.equal(both.logp_vid[3, :7], a.logp_vid[1, :7])


def smooth_model(seed: int = 0) -> FakeSLT:
    g = torch.Generator().manual_seed(seed)
    u, e = torch.randn(V, generator=g), torch.randn(V, V, generator=g)
    a, e2 = torch.randn(3, generator=g), torch.randn(V, 3, generator=g)
    n1 = torch.randn(2, 2, generator=g)
    return FakeSLT(
        probs=lambda c, prev, j: torch.softmax(c * u + e[prev] + 0.1 * j, -1),
        hidden=lambda c, prev, j: torch.tanh(c * a + e2[prev]),
        null=lambda c: torch.sigmoid(c * n1),
    )


def test_batched_scores_equal_one_sentence_at_a_time():
    g = torch.Generator().manual_seed(0)
    n, t_max = 5, 9
    lengths = torch.tensor([9, 4, 6, 7, 5])
    video = torch.randn(n, t_max, K, 2, generator=g)
    for i in range(n):
        video[i, lengths[i] :] = 0.0
    tokens = torch.full((n, 7), PAD)
    for i, hyp in enumerate([[3, 4, 5, 3, 4], [5], [3, 3, 4], [4, 5, 3, 5], [5, 4]]):
        tokens[i, : len(hyp) + 2] = torch.tensor([BOS, *hyp, EOS])
    j = choose_mismatched(lengths, k=2, seed=0)
    model = smooth_model()
    batch = three_passes(model, video, lengths, tokens, video[j], lengths[j])
    labels = np.array([0, 1, 0, 1, 1])
    rel = TokenReliability().fit(batch, labels)
    singles = []
    for i in range(n):
        t, length = int(lengths[i]), int((tokens[i] != PAD).sum())
        singles.append(
            three_passes(
                model,
                video[i : i + 1, :t],
                lengths[i : i + 1],
                tokens[i : i + 1, :length],
                video[j[i] : j[i] + 1],
                lengths[j[i] : j[i] + 1],
            )
        )
    one_by_one = torch.cat([rel.sentence_score(p) for p in singles])
    assert torch.allclose(rel.sentence_score(batch), one_by_one, atol=1e-6)
    assert torch.allclose(rel.sentence_score(Passes.cat(singles)), one_by_one, atol=1e-12)
    assert len(model.encoded) == 3 * (1 + n)  # three passes per batch, never per token


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match="tail_q"):
        ReliabilityConfig(tail_q=0.0)
    with pytest.raises(ValueError, match="attn_mass"):
        ReliabilityConfig(attn_mass="entropy")  # type: ignore[arg-type]
    passes, _ = synthetic_passes(4, seed=0)
    with pytest.raises(ValueError, match="both labels"):
        TokenReliability().fit(passes, [0, 0, 0, 0])
