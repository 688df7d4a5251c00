"""The RVRT-style encoder: window attention against a hand-written reference, the shifted-window
mask, flow conventions, guided deformable attention's sampling geometry, and the encoder as a whole."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy import ndimage

from iclr26.vff.models import VideoFourierField, build_encoder
from iclr26.vff.rvrt import (
    GuidedDeformableAttention,
    RVRTConfig,
    RVRTEncoder,
    WindowAttentionBlock,
    farneback_flow,
    flow_warp,
    pair_flows,
    window_partition,
    window_reverse,
)


def test_window_partition_round_trip() -> None:
    x = torch.randn(2, 4, 16, 8, 5)
    win = window_partition(x, (2, 8, 4))
    assert win.shape == (2 * 2 * 2 * 2, 2 * 8 * 4, 5)
    # the first window holds exactly the tokens of the first (2, 8, 4) block
    assert torch.equal(win[0], x[0, :2, :8, :4].reshape(-1, 5))
    assert torch.equal(window_reverse(win, (2, 8, 4), (2, 4, 16, 8)), x)


def test_window_attention_equals_reference_on_one_window() -> None:
    """softmax(QKᵀ/√d + B[Δ])·V with B indexed by the relative offset, computed by hand."""
    torch.manual_seed(0)
    c, heads, window = 8, 2, (2, 3, 3)
    block = WindowAttentionBlock(c, heads, window, shift=False, mlp_ratio=2.0)
    with torch.no_grad():
        block.bias.normal_()
    x = torch.randn(1, *window, c)
    got = block._attention(x)
    tokens = x.reshape(-1, c)
    q, k, v = block.qkv(tokens).chunk(3, -1)
    coords = [(t, i, j) for t in range(2) for i in range(3) for j in range(3)]
    d = c // heads
    out = torch.zeros(len(coords), c)
    for h in range(heads):
        sl = slice(h * d, (h + 1) * d)
        logits = q[:, sl] @ k[:, sl].T / math.sqrt(d)
        for a, (ta, ia, ja) in enumerate(coords):
            for b, (tb, ib, jb) in enumerate(coords):
                idx = ((ta - tb + 1) * 5 + (ia - ib + 2)) * 5 + (ja - jb + 2)
                logits[a, b] += block.bias[idx, h]
        out[:, sl] = torch.softmax(logits, -1) @ v[:, sl]
    want = block.proj(out).view(1, *window, c)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def _influence(block: WindowAttentionBlock, x: torch.Tensor, src: tuple, dst: tuple) -> float:
    y0 = block(x)
    x2 = x.clone()
    x2[(0, *src)] += 5.0 * torch.randn(x.shape[-1])  # not constant: LayerNorm removes a constant
    return (block(x2)[(0, *dst)] - y0[(0, *dst)]).abs().max().item()


def test_windows_are_local_and_shifted_windows_do_not_wrap_around() -> None:
    torch.manual_seed(0)
    x = torch.randn(1, 1, 16, 16, 8)
    plain = WindowAttentionBlock(8, 2, (1, 8, 8), shift=False, mlp_ratio=2.0)
    assert _influence(plain, x, (0, 0, 0), (0, 7, 7)) > 1e-4  # same window
    assert _influence(plain, x, (0, 0, 0), (0, 8, 8)) == 0.0  # another window
    shifted = WindowAttentionBlock(8, 2, (1, 8, 8), shift=True, mlp_ratio=2.0)
    assert _influence(shifted, x, (0, 4, 4), (0, 11, 11)) > 1e-4  # one shifted window spans 4..11
    # after the cyclic roll, rows/cols 0..3 share a window with 12..15: the mask must keep them apart
    assert _influence(shifted, x, (0, 0, 0), (0, 15, 15)) == 0.0
    assert _influence(shifted, x, (0, 0, 0), (0, 3, 3)) > 1e-4


def test_shifted_windows_in_time_do_not_wrap_around() -> None:
    """T = 4, window 2 in time, shifted by 1: frames {1, 2} share a window; frames 3 and 0 land in the
    same window after the roll, and the mask must keep them apart."""
    torch.manual_seed(0)
    x = torch.randn(1, 4, 4, 4, 8)
    shifted = WindowAttentionBlock(8, 2, (2, 4, 4), shift=True, mlp_ratio=2.0)
    assert _influence(shifted, x, (1, 0, 0), (2, 3, 3)) > 1e-4
    assert _influence(shifted, x, (0, 0, 0), (3, 3, 3)) == 0.0
    assert _influence(shifted, x, (0, 0, 0), (1, 3, 3)) == 0.0  # different shifted windows


def test_window_attention_handles_clips_smaller_than_the_window() -> None:
    block = WindowAttentionBlock(8, 2, (2, 8, 8), shift=True, mlp_ratio=2.0)
    x = torch.randn(2, 1, 5, 11, 8)
    assert block(x).shape == x.shape


def _smooth_image(h: int = 48, w: int = 48, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = ndimage.gaussian_filter(rng.random((3, h, w)), sigma=(0, 2.5, 2.5))
    return (img - img.min()) / (img.max() - img.min())


def test_farneback_flow_convention() -> None:
    """source(p) ≈ target(p + f(p)): a target shifted right by 2 px gives f ≈ (+2, 0)."""
    src = _smooth_image()
    tgt = np.roll(src, 2, axis=2)
    flow = farneback_flow(src, tgt)[8:-8, 8:-8]
    assert abs(np.median(flow[..., 0]) - 2.0) < 0.25
    assert abs(np.median(flow[..., 1])) < 0.25


def test_flow_warp_with_integer_flow_is_a_shift() -> None:
    x = torch.randn(1, 3, 10, 12)
    flow = torch.zeros(1, 2, 10, 12)
    flow[:, 0] = 2.0  # out(p) = x(p + (2, 0))
    flow[:, 1] = -1.0
    out = flow_warp(x, flow)
    torch.testing.assert_close(out[..., 1:, :-2], x[..., :-1, 2:])


def test_guided_deformable_attention_samples_at_the_flow_target() -> None:
    """With offsets fixed at 0, every point samples the flow target, attention is uniform over
    identical samples, and the output is proj(V at p + flow) followed by the MLP."""
    torch.manual_seed(0)
    c, h, w = 8, 9, 11
    gda = GuidedDeformableAttention(c, heads=2, frames=1, points=4, max_offset=0.0, mlp_ratio=2.0)
    query = torch.randn(1, c, h, w)
    values = torch.randn(1, 1, c, h, w)
    flows = torch.zeros(1, 1, 2, h, w)
    flows[:, :, 0] = 1.0  # one pixel to the right
    got = gda(query, values, flows)
    v = gda.kv(values[0].permute(0, 2, 3, 1))[..., c:]  # (1, h, w, C)
    v_at = torch.zeros_like(v)
    v_at[:, :, :-1] = v[:, :, 1:]  # V(p + (1, 0)); the last column samples outside (zeros padding)
    # the last column samples one pixel past the border: zeros padding gives v = 0 there
    out = gda.proj(v_at)
    want = (out + gda.mlp(gda.norm(out))).permute(0, 3, 1, 2)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_guided_deformable_attention_equals_a_per_point_reference():
    """Random offsets, 2 frames, 2 heads, 3 points: the batched sampling and attention equal a loop
    that samples each (head, frame, point) on its own and applies softmax(q·k/√d) over them."""
    torch.manual_seed(1)
    b, c, h, w, heads, frames, m = 2, 8, 7, 9, 2, 2, 3
    gda = GuidedDeformableAttention(c, heads, frames, m, max_offset=2.0, mlp_ratio=2.0)
    with torch.no_grad():
        gda.offset_net[-1].weight.normal_(0, 0.1)  # non-trivial offsets
    query, values = torch.randn(b, c, h, w), torch.randn(b, frames, c, h, w)
    flows = torch.randn(b, frames, 2, h, w)
    got = gda(query, values, flows)
    with torch.no_grad():
        warped = flow_warp(values.flatten(0, 1), flows.flatten(0, 1)).view(b, frames * c, h, w)
        raw = gda.offset_net(torch.cat([query, warped, flows.flatten(1, 2)], 1))
        off = 2.0 * torch.tanh(raw).view(b, heads, frames, m, 2, h, w)
        d = c // heads
        q = gda.q(query.permute(0, 2, 3, 1))  # (b, h, w, C)
        ys, xs = torch.meshgrid(
            torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij"
        )
        heads_out = []
        for hd in range(heads):
            logits, vals = [], []
            for fr in range(frames):
                kv = gda.kv(values[:, fr].permute(0, 2, 3, 1))  # (b, h, w, 2C): keys then values
                k_map = kv[..., hd * d : (hd + 1) * d].permute(0, 3, 1, 2)
                v_map = kv[..., c + hd * d : c + (hd + 1) * d].permute(0, 3, 1, 2)
                for pt in range(m):
                    px = xs + flows[:, fr, 0] + off[:, hd, fr, pt, 0]
                    py = ys + flows[:, fr, 1] + off[:, hd, fr, pt, 1]
                    grid = torch.stack([px * 2 / (w - 1) - 1, py * 2 / (h - 1) - 1], -1)
                    ks = F.grid_sample(k_map, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
                    vs = F.grid_sample(v_map, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
                    logits.append(
                        (q[..., hd * d : (hd + 1) * d].permute(0, 3, 1, 2) * ks).sum(1) / math.sqrt(d)
                    )
                    vals.append(vs)
            weights = torch.softmax(torch.stack(logits, -1), -1)  # (b, h, w, frames·m)
            heads_out.append(
                sum(weights[..., j, None] * vals[j].permute(0, 2, 3, 1) for j in range(len(vals)))
            )
        out = gda.proj(torch.cat(heads_out, -1))
        want = (out + gda.mlp(gda.norm(out))).permute(0, 3, 1, 2)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


def test_zero_max_offset_with_a_centre_point_is_finite():
    gda = GuidedDeformableAttention(8, 2, frames=1, points=9, max_offset=0.0, mlp_ratio=2.0)
    out = gda(torch.randn(1, 8, 5, 5), torch.randn(1, 1, 8, 5, 5), torch.zeros(1, 1, 2, 5, 5))
    assert torch.isfinite(out).all()


def test_guided_deformable_attention_rejects_wrong_frame_count() -> None:
    gda = GuidedDeformableAttention(8, 2, frames=2, points=4, max_offset=1.0, mlp_ratio=2.0)
    with pytest.raises(ValueError, match="expected 2 frames"):
        gda(torch.randn(1, 8, 5, 5), torch.randn(1, 3, 8, 5, 5), torch.zeros(1, 3, 2, 5, 5))


def test_encoder_shape_gradients_and_long_range_context() -> None:
    torch.manual_seed(0)
    cfg = RVRTConfig(channels=8, heads=2, window=(2, 4, 4), passes=2, blocks=1, points=4, flow="none")
    enc = RVRTEncoder(cfg)
    lr = torch.rand(2, 5, 3, 12, 10)  # 5 frames: the clip is padded to whole 2-frame clips internally
    out = enc(lr)
    assert out.shape == (2, 8, 5, 12, 10)
    out.square().mean().backward()
    assert all(p.grad is not None for p in enc.parameters())
    # the backward pass carries the last frame's content to the first frame's features
    lr2 = lr.clone()
    lr2[:, -1] = torch.rand_like(lr2[:, -1])
    with torch.no_grad():
        assert (enc(lr2)[:, :, 0] - enc(lr)[:, :, 0]).abs().max() > 1e-6


def test_pair_flows_point_from_the_current_clip_to_the_previous_one() -> None:
    """Content moving right 1 px per frame: frame 0 finds its content 2 px to the right in frame 2
    (flow(0, 2) ≈ +2) and 2 px to the left looking back from frame 2 (flow(2, 0) ≈ −2)."""
    frames = torch.from_numpy(np.stack([np.roll(_smooth_image(32, 32), k, axis=2) for k in range(4)]))
    flows = pair_flows(frames.float()[None], [(0, 2), (2, 0), (3, 1)], "farneback")
    inner = (..., slice(6, -6), slice(6, -6))
    assert abs(flows[(0, 2)][:, 0][inner].median().item() - 2.0) < 0.3
    assert abs(flows[(2, 0)][:, 0][inner].median().item() + 2.0) < 0.3
    assert abs(flows[(3, 1)][:, 0][inner].median().item() + 2.0) < 0.3
    assert flows[(0, 2)][:, 1][inner].abs().median().item() < 0.3


def test_encoder_output_depends_on_the_flow() -> None:
    torch.manual_seed(0)
    cfg = RVRTConfig(channels=8, heads=2, window=(2, 4, 4), passes=2, blocks=1, points=4)
    enc = RVRTEncoder(cfg)
    frames = torch.from_numpy(np.stack([np.roll(_smooth_image(16, 16), 2 * k, axis=2) for k in range(4)]))
    lr = frames.float()[None]
    no_flow = RVRTEncoder(RVRTConfig(**{**cfg.__dict__, "flow": "none"}))
    no_flow.load_state_dict(enc.state_dict())
    with torch.no_grad():
        assert (enc(lr) - no_flow(lr)).abs().max() > 1e-4


def test_fourier_field_trains_with_the_rvrt_encoder() -> None:
    torch.manual_seed(0)
    cfg = RVRTConfig(channels=8, heads=2, window=(2, 4, 4), passes=1, blocks=1, points=4)
    model = VideoFourierField(cfg, frequencies=8, radius=4.0)
    lr = torch.rand(1, 4, 3, 8, 8)
    p = torch.rand(1, 256, 3) * torch.tensor([3.0, 8.0, 8.0])
    target = torch.rand(1, 256, 3)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        loss = F.l1_loss(model(lr, p, torch.tensor([2.0])), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"channels": 10, "heads": 4}, "multiple of heads"),
        ({"window": (2, 8)}, "three positive"),
        ({"flow": "raft"}, "flow must be one of"),
        ({"passes": 0}, "passes must be >= 1"),
    ],
)
def test_bad_config(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RVRTConfig(**kwargs)


def test_build_encoder_rejects_other_configs() -> None:
    with pytest.raises(TypeError, match="EncoderConfig or RVRTConfig"):
        build_encoder({"channels": 8})
