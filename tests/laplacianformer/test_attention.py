import pytest
import torch

from iclr26.laplacianformer import (
    GaussianSoftAttention,
    LaplacianAttention,
    NystromAttention,
    PerformerAttention,
    SoftmaxAttention,
    exact_laplacian_attention,
    injective_feature_map,
    nystrom_laplacian_attention,
)
from iclr26.laplacianformer.baselines import landmark_pool
from iclr26.laplacianformer.vit import Block, VisionTransformer

D = torch.float64


def _naive_exact(q, k, v, lam, normalization):
    n = q.shape[-2]
    out = torch.empty_like(v)
    kern = torch.empty(*q.shape[:-1], k.shape[-2], dtype=q.dtype)
    for i in range(n):
        for j in range(k.shape[-2]):
            kern[..., i, j] = torch.exp(-(q[..., i, :] - k[..., j, :]).abs().sum(-1) / lam)
    if normalization == "row":
        out = kern @ v / kern.sum(-1, keepdim=True)
    elif normalization == "injective":
        mu = kern.mean(-2, keepdim=True)
        sd = (kern.var(-2, keepdim=True, unbiased=False) + 1e-5).sqrt()
        out = (kern - mu) / sd @ v / k.shape[-2]
    else:
        out = kern @ v / k.shape[-2]
    return out


@pytest.mark.parametrize("normalization", ["injective", "row", "none"])
def test_exact_attention_equals_naive(normalization):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 7, 5, generator=g, dtype=D) for _ in range(3))
    torch.testing.assert_close(
        exact_laplacian_attention(q, k, v, 3.0, normalization),
        _naive_exact(q, k, v, 3.0, normalization),
    )


@pytest.mark.parametrize("normalization", ["injective", "row", "none"])
def test_nystrom_with_all_tokens_as_landmarks_is_exact(normalization):
    g = torch.Generator().manual_seed(1)
    q, k, v = (0.3 * torch.randn(2, 3, 12, 8, generator=g, dtype=D) for _ in range(3))
    exact = exact_laplacian_attention(q, k, v, 4.0, normalization)
    approx = nystrom_laplacian_attention(
        q, k, v, 12, 4.0, ns_iters=80, reg=0.0, ns_tol=1e-9, normalization=normalization
    )
    torch.testing.assert_close(approx, exact, atol=1e-8, rtol=1e-7)


def test_nystrom_error_shrinks_with_more_landmarks():
    g = torch.Generator().manual_seed(2)
    # smooth token sequences, as image patches are: landmarks summarise neighbours well
    t = torch.linspace(0, 1, 64, dtype=D)[:, None]
    q = torch.sin(6 * t + torch.randn(1, 8, generator=g, dtype=D)) + 0.05 * torch.randn(
        64, 8, generator=g, dtype=D
    )
    k = torch.cos(5 * t + torch.randn(1, 8, generator=g, dtype=D))
    v = torch.randn(64, 4, generator=g, dtype=D)
    exact = exact_laplacian_attention(q, k, v, 4.0, "none")
    errs = [
        float(
            (
                nystrom_laplacian_attention(q, k, v, m, 4.0, ns_iters=60, reg=1e-8, normalization="none")
                - exact
            ).norm()
            / exact.norm()
        )
        for m in (4, 16, 64)
    ]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-6


def test_injective_feature_map_is_invertible_per_column():
    c = torch.rand(3, 20, 6, dtype=D)
    phi = injective_feature_map(c)
    torch.testing.assert_close(phi.mean(-2), torch.zeros(3, 6, dtype=D), atol=1e-12, rtol=0)
    # recover c from φ(c) and the column statistics: the map loses nothing
    mu, sd = c.mean(-2, keepdim=True), (c.var(-2, keepdim=True, unbiased=False) + 1e-5).sqrt()
    torch.testing.assert_close(phi * sd + mu, c)


def test_landmark_pool_splits_uneven_lengths_near_equally():
    x = torch.arange(10, dtype=D).reshape(1, 10, 1)
    # 10 tokens, 4 landmarks: token t → segment ⌊4t/10⌋ → [0,1,2], [3,4], [5,6,7], [8,9]
    assert landmark_pool(x, 4).flatten().tolist() == [1.0, 3.5, 6.0, 8.5]
    assert landmark_pool(x, 5).flatten().tolist() == [0.5, 2.5, 4.5, 6.5, 8.5]
    with pytest.raises(ValueError, match=r"landmarks \(11\) must not exceed the number of tokens \(10\)"):
        landmark_pool(x, 11)


@pytest.mark.parametrize(("n", "m"), [(50, 16), (17, 16), (100, 33)])
def test_landmark_pool_has_no_empty_segment(n, m):
    # a ⌈N/m⌉ split would leave segments of padding only here (50 = 15·4 − 10 → 2 zero landmarks)
    x = torch.rand(2, n, 3, dtype=D) + 1.0  # every token positive
    pooled = landmark_pool(x, m)
    assert pooled.shape == (2, m, 3)
    assert (pooled >= 1.0).all()
    sizes = torch.bincount(torch.arange(n) * m // n, minlength=m).to(D)
    assert sizes.max() - sizes.min() <= 1  # near-equal contiguous segments
    torch.testing.assert_close((pooled * sizes[:, None]).sum(-2) / n, x.mean(-2))  # size-weighted means


ALL = [
    LaplacianAttention,
    SoftmaxAttention,
    NystromAttention,
    PerformerAttention,
    GaussianSoftAttention,
]


@pytest.mark.parametrize("cls", ALL)
def test_drop_in_block_forward_backward(cls):
    torch.manual_seed(0)
    attn = (
        cls(32, 4)
        if cls is SoftmaxAttention
        else cls(32, 4, 8)
        if cls is not PerformerAttention
        else cls(32, 4, 16)
    )
    block = Block(32, attn)
    x = torch.randn(2, 50, 32, requires_grad=True)  # 50 is not a multiple of 8 landmarks
    y = block(x)
    assert y.shape == x.shape and torch.isfinite(y).all()
    y.square().mean().backward()
    assert all(
        p.grad is not None and torch.isfinite(p.grad).all() for p in block.parameters() if p.requires_grad
    )


def test_nystromformer_with_all_landmarks_equals_softmax():
    torch.manual_seed(0)
    ny = NystromAttention(16, 2, landmarks=10, pinv_iters=30, conv_kernel=0).double()
    sm = SoftmaxAttention(16, 2).double()
    sm.load_state_dict(ny.state_dict())
    x = torch.randn(2, 10, 16, dtype=D)
    torch.testing.assert_close(ny(x), sm(x), atol=1e-7, rtol=1e-6)


def test_performer_approaches_softmax_with_more_features():
    torch.manual_seed(0)
    sm = SoftmaxAttention(16, 1).double()
    x = 0.5 * torch.randn(1, 32, 16, dtype=D)
    ref = sm(x)
    errs = []
    for r in (16, 4096):
        pf = PerformerAttention(16, 1, features=r, seed=1).double()
        pf.load_state_dict({**sm.state_dict(), "omega": pf.omega}, strict=True)
        errs.append(float(((pf(x) - ref).norm() / ref.norm()).detach()))
    assert errs[1] < errs[0] and errs[1] < 0.05


def test_laplacian_grid_path_and_errors(monkeypatch):
    monkeypatch.setenv("ICLR26_DEBUG_CHECKS", "1")  # the finite-input check runs under debug checks only
    attn = LaplacianAttention(32, 4, landmarks=8)
    assert attn(torch.randn(1, 49, 32), hw=(7, 7)).shape == (1, 49, 32)
    with pytest.raises(ValueError, match="does not match 49 tokens"):
        attn(torch.randn(1, 49, 32), hw=(6, 8))
    with pytest.raises(ValueError, match=r"landmarks \(8\) must not exceed the number of tokens \(5\)"):
        attn(torch.randn(1, 5, 32))
    with pytest.raises(ValueError, match="non-finite"):
        attn(torch.full((1, 10, 32), float("nan")))
    with pytest.raises(ValueError, match=r"shape \(batch, tokens, 32\)"):
        attn(torch.randn(10, 32))
    with pytest.raises(ValueError, match="multiple of heads"):
        LaplacianAttention(30, 4)
    with pytest.raises(ValueError, match="normalization must be one of"):
        LaplacianAttention(32, 4, normalization="softmax")
    with pytest.raises(ValueError, match="odd kernel size"):
        LaplacianAttention(32, 4, local_conv=2)


def test_exact_flag_matches_many_landmarks():
    torch.manual_seed(0)
    a = LaplacianAttention(16, 2, landmarks=12, ns_iters=80, local_conv=0).double()
    b = LaplacianAttention(16, 2, landmarks=12, local_conv=0, exact=True).double()
    b.load_state_dict(a.state_dict())
    x = 0.2 * torch.randn(2, 12, 16, dtype=D)
    torch.testing.assert_close(a(x), b(x), atol=1e-3, rtol=1e-3)  # εI regularisation only


def test_vit_rejects_bad_geometry():
    with pytest.raises(ValueError, match="divisible by patch"):
        VisionTransformer(16, 3, 1, 10)
    with pytest.raises(ValueError, match=r"landmarks \(32\) > tokens \(16\)"):
        VisionTransformer(16, 4, 1, 10, landmarks=32)


def test_nystromformer_rejects_an_even_conv_kernel():
    with pytest.raises(ValueError, match=r"conv_kernel must be 0 or an odd kernel size.*got 32"):
        NystromAttention(16, 2, landmarks=4, conv_kernel=32)
    x = torch.randn(1, 20, 16)
    for k in (0, 1, 33):  # an odd kernel keeps the token count
        assert NystromAttention(16, 2, landmarks=4, conv_kernel=k)(x).shape == x.shape


def test_the_finite_input_check_runs_only_under_debug_checks(monkeypatch):
    from iclr26.core.validation import set_debug_checks

    attn = SoftmaxAttention(16, 2)
    x = torch.full((1, 4, 16), float("nan"))
    monkeypatch.delenv("ICLR26_DEBUG_CHECKS", raising=False)
    set_debug_checks(None)
    assert torch.isnan(attn(x)).all()  # no pass over the activations on the hot path
    try:
        set_debug_checks(True)
        with pytest.raises(ValueError, match=r"non-finite values: x must be finite, got 64 NaN"):
            attn(x)
    finally:
        set_debug_checks(None)
