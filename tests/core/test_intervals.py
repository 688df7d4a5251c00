import pytest

from iclr26.core.intervals import wilson_interval


@pytest.mark.parametrize("n", [1, 3, 7, 100])
def test_wilson_is_exactly_closed_at_zero_and_all_successes(n):
    low, high = wilson_interval(0, n)
    assert low == 0.0 and 0 < high < 1
    low, high = wilson_interval(n, n)
    assert high == 1.0 and 0 < low < 1


def test_wilson_matches_the_formula_inside():
    low, high = wilson_interval(3, 10)  # the textbook value for 3/10 at 95%
    assert (round(low, 4), round(high, 4)) == (0.1078, 0.6032)
