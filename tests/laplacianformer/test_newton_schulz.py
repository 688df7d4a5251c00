import pytest
import torch

from iclr26.laplacianformer.newton_schulz import (
    NewtonSchulzWarning,
    newton_schulz_init,
    newton_schulz_inverse,
)


def _well_conditioned(batch, m, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*batch, m, m, generator=g, dtype=dtype) / m**0.5
    return a + 2 * torch.eye(m, dtype=dtype)  # non-symmetric, eigenvalues near 2


@pytest.mark.parametrize("m", [4, 16, 49])
def test_matches_linalg_inv(m):
    a = _well_conditioned((3, 2), m)
    x = newton_schulz_inverse(a, iters=30, tol=1e-10)
    torch.testing.assert_close(x, torch.linalg.inv(a), atol=1e-9, rtol=1e-9)


def test_init_contracts_the_residual():
    """X0 = Aᵀ/(‖A‖₁‖A‖∞) gives ‖I − A X0‖₂ < 1, so the iteration converges."""
    a = _well_conditioned((5,), 12, seed=3)
    res = torch.eye(12, dtype=a.dtype) - a @ newton_schulz_init(a)
    assert (torch.linalg.matrix_norm(res, ord=2) < 1).all()


def test_backward_passes_gradcheck():
    a = _well_conditioned((2,), 5).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: newton_schulz_inverse(t, iters=40, tol=1e-12), (a,))


def test_backward_equals_autograd_of_exact_inverse():
    a = _well_conditioned((2,), 6).requires_grad_()
    g = torch.randn(2, 6, 6, dtype=torch.float64)
    (ours,) = torch.autograd.grad(newton_schulz_inverse(a, iters=40), a, g)
    (ref,) = torch.autograd.grad(torch.linalg.inv(a), a, g)
    torch.testing.assert_close(ours, ref)


def test_non_convergence_warns_or_raises_naming_iterations():
    a = torch.tensor([[1.0, 0.0], [0.0, 1e-6]], dtype=torch.float64)  # cond 1e6
    with pytest.warns(NewtonSchulzWarning, match=r"residual.*after 3 iterations"):
        newton_schulz_inverse(a, iters=3)
    with pytest.raises(RuntimeError, match="did not converge"):
        newton_schulz_inverse(a, iters=3, on_fail="raise")


@pytest.mark.parametrize(
    ("arg", "match"),
    [(torch.ones(3, 4), "square"), (torch.full((2, 2), float("nan")), "non-finite")],
)
def test_bad_input(arg, match):
    with pytest.raises(ValueError, match=match):
        newton_schulz_inverse(arg)
