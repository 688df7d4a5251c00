"""Batched ensembles equal E separate networks; Polyak averaging."""

from __future__ import annotations

import pytest
import torch

from iclr26.pic.networks import EnsembleLinear, EnsembleMLP, soft_update


def _member_forward(m: EnsembleMLP, e: int, x: torch.Tensor) -> torch.Tensor:
    h = x
    for i, layer in enumerate(m.layers):
        h = h @ layer.weight[e] + layer.bias[e, 0]
        if i < len(m.layers) - 1:
            h = torch.relu(h)
    return torch.tanh(h) if m.output == "tanh" else h


@pytest.mark.parametrize("output", ["none", "tanh"])
def test_ensemble_equals_separate_members(output):
    torch.manual_seed(0)
    m = EnsembleMLP(5, 3, hidden=(8, 8), ensemble=4, output=output)
    x = torch.randn(6, 5)
    y = m(x)
    assert y.shape == (4, 6, 3)
    for e in range(4):
        assert torch.allclose(y[e], _member_forward(m, e, x), atol=1e-6)
    xs = torch.randn(4, 6, 5)  # a different batch per member
    ys = m(xs)
    for e in range(4):
        assert torch.allclose(ys[e], _member_forward(m, e, xs[e]), atol=1e-6)


def test_members_are_initialised_independently():
    torch.manual_seed(0)
    layer = EnsembleLinear(16, 16, ensemble=3)
    assert not torch.allclose(layer.weight[0], layer.weight[1])
    assert layer.weight.abs().max() <= 0.25 + 1e-6  # U(±1/√in), nn.Linear's range


def test_bad_shapes_and_options():
    m = EnsembleMLP(5, 1, ensemble=2)
    with pytest.raises(ValueError, match=r"expected \(B, 5\) or \(2, B, 5\)"):
        m(torch.randn(3, 3, 5))
    with pytest.raises(ValueError, match="output must be"):
        EnsembleMLP(5, 1, output="relu")
    with pytest.raises(ValueError, match="must be >= 1"):
        EnsembleLinear(0, 1)


def test_soft_update_is_polyak_average():
    torch.manual_seed(0)
    a, b = EnsembleMLP(3, 1, hidden=(4,)), EnsembleMLP(3, 1, hidden=(4,))
    before = [p.clone() for p in a.parameters()]
    soft_update(a, b, 0.25)
    for p0, p, s in zip(before, a.parameters(), b.parameters(), strict=True):
        assert torch.allclose(p, 0.75 * p0 + 0.25 * s)
