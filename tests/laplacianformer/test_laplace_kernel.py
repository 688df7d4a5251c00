import os

import pytest
import torch

from iclr26.laplacianformer.laplace_kernel import (
    laplace_kernel,
    laplace_kernel_cdist,
    laplace_kernel_reference,
)


def test_reference_matches_definition():
    q, k = torch.randn(5, 3), torch.randn(4, 3)
    naive = torch.tensor([[torch.exp(-(qi - kj).abs().sum() / 2.0) for kj in k] for qi in q])
    torch.testing.assert_close(laplace_kernel_reference(q, k, 2.0), naive)
    torch.testing.assert_close(laplace_kernel_cdist(q, k, 2.0), naive)


def test_cdist_path_gradients_match_reference():
    q = torch.randn(2, 9, 5, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 4, 5, dtype=torch.float64, requires_grad=True)
    g = torch.randn(2, 9, 4, dtype=torch.float64)
    a = torch.autograd.grad(laplace_kernel_cdist(q, k, 3.0), (q, k), g)
    b = torch.autograd.grad(laplace_kernel_reference(q, k, 3.0), (q, k), g)
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="same feature size"):
        laplace_kernel(torch.randn(3, 4), torch.randn(3, 5))
    with pytest.raises(ValueError, match="must be positive"):
        laplace_kernel(torch.randn(3, 4), torch.randn(3, 4), lam=0.0)


triton = pytest.importorskip("triton")
interp = pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET") != "1" and not torch.cuda.is_available(),
    reason="Triton needs a GPU or TRITON_INTERPRET=1 (conftest sets it)",
)


@interp
@pytest.mark.parametrize(
    ("b", "n", "m", "d"), [(1, 5, 3, 4), (2, 37, 19, 24), (3, 64, 16, 64), (1, 8, 70, 33)]
)
def test_triton_forward_and_backward_match_reference(b, n, m, d):
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(n * m)
    q = torch.randn(b, n, d, generator=g).to(dev).requires_grad_()
    k = torch.randn(b, m, d, generator=g).to(dev).requires_grad_()
    lam = torch.tensor(d / 3.0, device=dev, requires_grad=True)
    out = laplace_kernel(q, k, lam, use_triton=True)
    ref = laplace_kernel_reference(q, k, lam)
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-5)
    grad = torch.randn(out.shape, generator=g).to(dev)
    got = torch.autograd.grad(out, (q, k, lam), grad)
    want = torch.autograd.grad(ref, (q, k, lam), grad)
    for x, y in zip(got, want, strict=True):
        torch.testing.assert_close(x, y, atol=1e-5, rtol=1e-4)


@interp
def test_triton_backward_is_bitwise_repeatable():
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    q = torch.randn(2, 40, 16, device=dev, requires_grad=True)
    k = torch.randn(2, 24, 16, device=dev, requires_grad=True)
    grad = torch.randn(2, 40, 24, device=dev)
    runs = [torch.autograd.grad(laplace_kernel(q, k, 4.0, use_triton=True), (q, k), grad) for _ in range(3)]
    for other in runs[1:]:
        assert all(torch.equal(a, b) for a, b in zip(runs[0], other, strict=True))


@interp
def test_triton_handles_batch_dims():
    q, k = torch.randn(2, 3, 10, 8), torch.randn(2, 3, 6, 8)
    torch.testing.assert_close(
        laplace_kernel(q, k, 4.0, use_triton=True), laplace_kernel_reference(q, k, 4.0)
    )
