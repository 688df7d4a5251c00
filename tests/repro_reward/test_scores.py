"""Magnitude, stability and composite scores: known values, the rank correlations against scipy,
and the limits the paper states (magnitude in (0, 1], stability 1 rising / 0 falling)."""

import math

import pytest
import torch
from scipy import stats

from iclr26.repro_reward.scores import (
    ema,
    kendall_tau,
    magnitude_score,
    spearman_rho,
    stability_score,
    trajectory_scores,
)

RISING = torch.tensor([-3.0, -2.5, -1.0, -0.9, -0.2])


@pytest.mark.parametrize("method", ["kendall", "spearman"])
@pytest.mark.parametrize("beta", [None, 0.7])
def test_stability_is_one_rising_and_zero_falling(method, beta):
    assert float(stability_score(RISING, method, beta)) == pytest.approx(1.0)
    assert float(stability_score(RISING.flip(0), method, beta)) == pytest.approx(0.0)
    assert float(stability_score(torch.tensor([-1.0]), method, beta)) == 0.5  # one point: no trend
    assert float(stability_score(torch.full((4,), -1.0), method, beta)) == 0.5  # flat: no trend


def test_rank_correlations_match_scipy():
    g = torch.Generator().manual_seed(0)
    for n in (2, 3, 7, 12):
        x = torch.randint(0, 4, (n,), generator=g).double()  # many ties
        if len(set(x.tolist())) == 1:
            continue
        idx = list(range(n))
        assert float(kendall_tau(x)) == pytest.approx(stats.kendalltau(x.numpy(), idx).statistic)  # τ_b
        assert float(spearman_rho(x)) == pytest.approx(stats.spearmanr(x.numpy(), idx).statistic)
    x = torch.tensor([-2.0, -1.0, -1.5, -0.5])  # by hand: pairs 6, discordant 1 (−1 > −1.5)
    assert float(kendall_tau(x)) == pytest.approx((5 - 1) / 6)
    assert float(stability_score(x)) == pytest.approx((4 / 6 + 1) / 2)


def test_ema():
    torch.testing.assert_close(
        ema(torch.tensor([0.0, 1.0, 1.0]), 0.5), torch.tensor([0.0, 0.5, 0.75]).double()
    )
    with pytest.raises(ValueError, match=r"beta must be in \[0, 1\)"):
        ema(RISING, 1.0)


def test_magnitude_score_hand_example():
    # J_b = −2: Δ = (J − J_b)/J_b; S = 1 − tanh(Δ + 1) = 1 − tanh(J / J_b)
    J = torch.tensor([-2.0, -1.0, 0.0, -4.0])
    want = [1 - math.tanh(1.0), 1 - math.tanh(0.5), 1.0, 1 - math.tanh(2.0)]
    torch.testing.assert_close(magnitude_score(J, -2.0), torch.tensor(want).double())
    grid = torch.linspace(-20, 0, 101)
    s = magnitude_score(grid, -2.0)
    assert (s > 0).all() and (s <= 1).all() and (s.diff() > 0).all()  # in (0, 1], rising with J
    assert float(magnitude_score(torch.tensor(-0.1), 0.0)) < 1e-6  # J_b = 0 is clamped, not a NaN


def test_trajectory_scores_hand_example():
    J = torch.tensor([-2.0, -1.0, -0.5, -1.0])
    w = 0.25
    magn = [1 - math.tanh(1.0), 1 - math.tanh(0.5), 1 - math.tanh(0.25), 1 - math.tanh(0.5)]
    # Kendall τ_b of prefixes: one point → 0 (0.5 after rescaling); rising → 1;
    # [−2, −1, −0.5, −1]: pairs 6, concordant 4, discordant 1, tied 1 → τ_b = 3 / sqrt(5·6)
    stab = [0.5, 1.0, 1.0, (3 / math.sqrt(30) + 1) / 2]
    want = torch.tensor([(1 - w) * m + w * s for m, s in zip(magn, stab, strict=True)]).double()
    torch.testing.assert_close(trajectory_scores(J, w), want)
    with pytest.raises(ValueError, match=r"w must be in \[0, 1\]"):
        trajectory_scores(J, 1.5)
