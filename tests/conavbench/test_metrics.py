"""CoNavBench metrics against hand-computed values (LH-VLN's definitions)."""

import math

import pytest

from iclr26.conavbench.metrics import (
    EpisodeRecord,
    bootstrap_ci,
    cgt,
    csr,
    episode_success,
    isr,
    navigation_error,
    spl,
    step_level_sr,
    success_rate,
    summarize,
    tar,
    target_approach,
    wilson_ci,
)


def test_sr_spl_ne():
    assert success_rate([1, 0, 1, 1]) == 0.75
    assert success_rate([]) == 0.0
    # s * G / max(G, P): 1 * 10/15, 0, 1 * 10/10 (P < G), and a P = 0 term
    assert spl([1, 0, 1, 1], [10, 15, 10, 5], [15, 20, 8, 0]) == pytest.approx((10 / 15 + 0 + 1 + 0) / 4)
    assert navigation_error([2.0, 5.0]) == 3.5


def test_isr_pools_subtasks():
    assert isr([[1, 1, 1], [1, 0, 1]]) == pytest.approx(5 / 6)
    assert isr([[1], [0, 0, 0]]) == pytest.approx(1 / 4)


def test_csr_ordering_term():
    # N = 3: s1 N + s2 (1 + 2 s1) + s3 (1 + 2 s2), over N^2
    assert csr([[1, 0, 1]]) == pytest.approx((3 + 0 + 1) / 9)
    assert csr([[1, 1, 0]]) == pytest.approx((3 + 3 + 0) / 9)
    assert csr([[0, 1, 1]]) == pytest.approx((0 + 1 + 3) / 9)
    assert csr([[1, 1, 1]]) == pytest.approx(1.0)
    assert csr([[1, 0, 1], [1, 1, 0]]) == pytest.approx((4 / 9 + 6 / 9) / 2)
    assert csr([[1], []]) == pytest.approx(0.5)  # an empty episode counts 0; N = 1 gives s


def test_cgt_weights_by_gt_share():
    # weights 5/20, 10/20, 5/20; terms 3 * 1, 0, 1 * (1 + 2 * 0); over N = 3
    assert cgt([[1, 0, 1]], [[5, 10, 5]]) == pytest.approx((3 * 0.25 + 0 + 1 * 0.25) / 3)
    assert cgt([[1, 1, 0]], [[5, 10, 5]]) == pytest.approx((3 * 0.25 + 3 * 0.5) / 3)
    assert cgt([[1, 1, 1]], [[1, 2, 3]]) == pytest.approx(1.0)
    assert cgt([[1, 1]], [[0, 0]]) == pytest.approx(1.0)  # zero ground truth: equal weights


def test_tar_and_edge_cases():
    assert target_approach(0.0, 0.0) == 1.0
    assert target_approach(2.0, 0.0) == 0.0
    assert target_approach(0.5, 4.0) == 1.0  # within 1 m
    assert target_approach(3.0, 4.0) == pytest.approx(1 - 2 / 4)
    assert target_approach(6.0, 4.0) == pytest.approx(1 - 5 / 6)
    assert tar([[0.5, 3.0], [6.0]], [[4.0, 4.0], [4.0]]) == pytest.approx((1 + 0.5 + 1 / 6) / 3)


def test_episode_success_rules():
    assert episode_success([0, 1, 1, 1], final=3, rule="delivered")
    assert not episode_success([0, 1, 1, 1], final=3, rule="all")
    assert not episode_success([1, 1, 1, 0], final=3)
    with pytest.raises(ValueError, match="success_rule"):
        episode_success([1], 0, rule="any")


def test_wilson_and_bootstrap():
    lo, hi = wilson_ci(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    assert wilson_ci(0, 0) == (0.0, 1.0)
    assert wilson_ci(10, 10)[1] == 1.0
    lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0], seed=1)
    assert 1.0 <= lo <= 2.5 <= hi <= 4.0
    assert bootstrap_ci([1.0, 2.0], seed=3) == bootstrap_ci([1.0, 2.0], seed=3)
    assert all(math.isnan(v) for v in bootstrap_ci([]))


def _rec(succ, final, **kw):
    n = len(succ)
    base = dict(
        episode="e",
        kind="single",
        collab_type=None,
        subtask_successes=tuple(succ),
        subtask_oracle_successes=tuple(succ),
        subtask_steps=(10,) * n,
        subtask_gt_steps=(10,) * n,
        subtask_nav_errors=(0.5,) * n,
        subtask_gt_lengths=(4.0,) * n,
        final=final,
    )
    base.update(kw)
    return EpisodeRecord(**base)


def test_summarize_matches_parts():
    recs = [
        _rec([1, 0, 1, 1], 3, makespan=100.0, interference=2, repairs=1),
        _rec([1, 1, 1, 0], 3, makespan=50.0, subtask_steps=(20,) * 4),
    ]
    m = summarize(recs)
    assert m["sr"] == 0.5  # delivered: the first episode's final place succeeded
    assert summarize(recs, success_rule="all")["sr"] == 0.0
    assert m["spl"] == pytest.approx((1 * 40 / 40 + 0) / 2)
    assert m["isr"] == pytest.approx(6 / 8)
    assert m["csr"] == pytest.approx(csr([[1, 0, 1, 1], [1, 1, 1, 0]]))
    assert m["makespan"] == 75.0 and m["interference"] == 1.0 and m["repairs"] == 0.5
    assert m["sr_lo"] < 0.5 < m["sr_hi"]


def test_step_level_sr_is_trial_success_rate():
    trials = [_rec([1], 0), _rec([0], 0), _rec([1], 0), _rec([1], 0)]
    sr, lo, hi = step_level_sr(trials)
    assert sr == 0.75 and (lo, hi) == wilson_ci(3, 4)
