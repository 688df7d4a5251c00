"""The session transformer: the block-causal mask and the full option, turn-ID tokens and 3D
positions, the flow loss at known points, and the Euler sampler on a two-point distribution."""

import numpy as np
import pytest
import torch

from iclr26.vincie.flow import flow_loss, interpolate, logit_normal, sample, shift_time, velocity
from iclr26.vincie.model import ModelConfig, SessionDiT, attention_mask
from iclr26.vincie.sequence import Batch, Tokenizer, collate, layout
from iclr26.vincie.video import edit_session

SMALL = {"image_size": 16, "patch": 4, "width": 24, "heads": 2, "separate_blocks": 1, "shared_blocks": 1}


def _model(attention="block_causal", seed=0):
    torch.manual_seed(seed)
    net = SessionDiT(ModelConfig(attention=attention, **SMALL), len(Tokenizer()))
    for p in net.parameters():  # leave adaLN-Zero's identity start: every path must carry signal
        torch.nn.init.normal_(p, std=0.3)
    return net.eval()


def _batch(seed=0):
    s, _ = edit_session(np.random.default_rng(seed), 16, 2, "t")
    return collate([layout(s, 1, "next_image", Tokenizer(), 16)])


def _inputs(b: Batch):
    x = torch.cat([b.frames, b.frames, torch.ones_like(b.frames[:, :, :1])], dim=2)
    return x, b.block, b.index, b.words, torch.tensor([0.5])


def test_attention_mask_block_causal_and_full():
    block = torch.tensor([[0, 0, 1, 1, 2]])
    present = torch.tensor([[True, True, True, False, True]])
    m = attention_mask(block, present, "block_causal")[0, 0]
    assert m[0].tolist() == [True, True, False, False, False]  # turn 0 sees only turn 0
    assert m[2].tolist() == [True, True, True, False, False]  # an absent key is never seen
    assert m[3, 3]  # ... except by itself (padding rows stay finite)
    assert m[4].tolist() == [True, True, True, False, True]
    full = attention_mask(block, present, "full")[0, 0]
    assert full[0].tolist() == [True, True, True, False, True]


@pytest.mark.parametrize("attention", ["block_causal", "full"])
def test_no_attention_to_later_turns(attention):
    """Changing a turn-1 frame and turn-1 words moves turn-0 outputs only under full attention."""
    net, b = _model(attention), _batch()
    x, block, index, words, t = _inputs(b)
    out = net(x, block, index, words, t)
    x2, words2 = x.clone(), words.clone()
    later = (block[0] == 1).nonzero().flatten()
    x2[0, later] += torch.randn_like(x2[0, later])
    words2[0, 1, :3] = torch.tensor([5, 6, 7])
    out2 = net(x2, block, index, words2, t)
    early = (block[0] == 0).nonzero().flatten()
    moved = (out[0, early] - out2[0, early]).abs().max().item()
    if attention == "block_causal":
        assert moved == 0.0
    else:
        assert moved > 1e-4


def test_turn_id_tokens_and_positions():
    net, b = _model(), _batch()
    x, block, index, words, t = _inputs(b)
    tokens, pos = net.tokens(x, index, words)
    cfg = net.cfg
    per_frame = cfg.grid**2
    n_img = x.shape[1] * per_frame
    # frame f's patch (y, x) at (text_length + index_f, y, x)
    assert pos[0, per_frame * 2 + 5].tolist() == [cfg.text_length + int(index[0, 2]), 1, 1]
    # text token p at (p, p, p): turn 1's ID token is the (1 + max_words)-th text token
    p = 1 + cfg.max_words
    assert pos[0, n_img + p].tolist() == [p, p, p]
    # the turn-ID token carries the learned embedding of its turn, before the turn's words
    assert torch.equal(tokens[0, n_img + p], net.turn_id.weight[1])
    assert torch.equal(tokens[0, n_img + p + 1], net.words.weight[words[0, 1, 0]])
    # swapping the two turns' ID embeddings changes the output
    out = net(x, block, index, words, t)
    with torch.no_grad():
        net.turn_id.weight[[0, 1]] = net.turn_id.weight[[1, 0]]
    assert not torch.allclose(out, net(x, block, index, words, t))


def test_flow_loss_is_zero_for_the_exact_velocity():
    b = _batch()
    noise = torch.randn_like(b.frames)

    def exact(inp, block, index, words, t):
        return velocity(b.frames, noise)

    assert flow_loss(exact, b, torch.tensor([0.3]), noise).item() == 0.0
    wrong = flow_loss(lambda *a: torch.zeros_like(b.frames), b, torch.tensor([0.3]), noise).item()
    target = b.target[0]
    assert wrong == pytest.approx(velocity(b.frames, noise)[0, target].pow(2).mean().item(), rel=1e-5)
    x_t = interpolate(b.frames, noise, torch.tensor([0.25]))
    assert torch.allclose(x_t, 0.75 * b.frames + 0.25 * noise)


def test_logit_normal_and_shift():
    t = logit_normal(20000, torch.Generator().manual_seed(0))
    assert t.min() > 0 and t.max() < 1 and abs(float(t.median()) - 0.5) < 0.02
    assert shift_time(0.5, 3.0) == pytest.approx(0.75)
    assert shift_time(0.0, 12.0) == 0.0 and shift_time(1.0, 12.0) == 1.0


def test_sampler_reaches_a_two_point_distribution():
    """With the exact velocity of data uniform on {−a, +a} (every pixel), Euler integration from
    noise ends on the two points."""
    a = 0.8
    b = _batch()
    b.frames[:] = 0.0

    def exact(inp, block, index, words, t):
        x = inp[:, :, :3]
        tt = t.view(-1, 1, 1, 1, 1)
        # posterior over x0 ∈ {±a} given x_t = (1 − t) x0 + t ε: weights ∝ N(x_t; (1 − t) x0, t²)
        logits = torch.stack([-((x - (1 - tt) * s * a) ** 2) / (2 * tt**2) for s in (1, -1)])
        w = torch.softmax(logits, dim=0)
        x0 = a * (w[0] - w[1])
        return (x - x0) / tt  # ε − x0 with ε = (x_t − (1 − t) x0) / t

    out = sample(exact, b, steps=200, shift=1.0, generator=torch.Generator().manual_seed(1))
    gen = out[0, b.target[0]]
    assert (gen.abs() - a).abs().max() < 0.02
    share = (gen > 0).float().mean().item()
    assert 0.4 < share < 0.6


def test_absolute_positions_tell_patches_of_equal_content_apart():
    # a frame of one colour: with rotary positions alone every patch's token is the same (they differ
    # only through attention); the learned (row, column) embedding makes them differ at the input
    frames = torch.ones(1, 1, 7, 16, 16)
    words = torch.full((1, 1, 16), 3)
    for absolute in (False, True):
        torch.manual_seed(0)
        net = SessionDiT(ModelConfig(absolute_positions=absolute, **SMALL), len(Tokenizer()))
        tokens, _ = net.tokens(frames, torch.zeros(1, 1, dtype=torch.long), words)
        patches = tokens[0, :16]  # (16 / 4)² patches
        assert (patches.std(dim=0).max() > 1e-3) == absolute
        assert (net.patch_pos is not None) == absolute


def test_model_config_rejects_bad_sizes():
    with pytest.raises(ValueError, match="multiple of 6"):
        ModelConfig(width=32, heads=4)
    with pytest.raises(ValueError, match="attention"):
        ModelConfig(attention="causal")


@pytest.mark.parametrize(
    ("order", "context_masks"), [("masks_first", False), ("masks_first", True), ("image_only", True)]
)
def test_multi_turn_editing_shapes_and_masks(order, context_masks):
    from iclr26.vincie.editing import SamplerConfig, copy_previous, model_editor

    net = _model()
    sessions = [edit_session(np.random.default_rng(i), 16, 3, f"e{i}")[0] for i in range(2)]
    cfg = SamplerConfig(steps=2, order=order, context_masks=context_masks)
    out = model_editor(net, cfg)(sessions, 3)
    assert len(out.images) == 2 and all(len(r) == 3 for r in out.images)
    assert (
        out.images[0][2].shape == (16, 16, 3) and 0 <= out.images[0][2].min() <= out.images[0][2].max() <= 1
    )
    made = [m for r in out.masks_current + out.masks_next for m in r]
    if order == "masks_first":
        assert all(m is not None and m.dtype == bool and m.shape == (16, 16) for m in made)
    else:
        assert all(m is None for m in made)
    pair = model_editor(net, cfg, pairwise=True)(sessions, 3)
    assert len(pair.images[1]) == 3
    copy = copy_previous(sessions, 3)
    assert all((im == s.images[0]).all() for s, r in zip(sessions, copy.images, strict=True) for im in r)


def test_ablated_models_make_only_the_masks_they_learned():
    from iclr26.vincie.editing import SamplerConfig, model_editor

    net = _model()
    sessions = [edit_session(np.random.default_rng(0), 16, 2, "a")[0]]
    out = model_editor(net, SamplerConfig(steps=1), tasks=("next_image", "next_mask"))(sessions, 2)
    assert all(m is None for m in out.masks_current[0]) and all(m is not None for m in out.masks_next[0])
