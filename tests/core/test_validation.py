"""The shared argument checks: each error names the parameter, the value and what is accepted."""

import numpy as np
import pytest
import torch

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.seeding import derive_seed
from iclr26.core.validation import (
    check_finite_tensor,
    check_in,
    check_int,
    check_interval,
    debug_checks,
    node_set,
    set_debug_checks,
)


def test_check_in_names_options_and_the_closest():
    assert check_in("mode", "ieee", ("ieee", "tf32")) == "ieee"
    with pytest.raises(
        ConfigError, match=r"mode must be one of 'ieee', 'tf32', got 'iee'; did you mean 'ieee'"
    ):
        check_in("mode", "iee", ("ieee", "tf32"))
    with pytest.raises(ConfigError, match="got \\[1\\]"):
        check_in("mode", [1], {"a"})  # an unhashable value is an error, not a TypeError


def test_check_interval_open_and_closed_ends():
    assert check_interval("gamma", 0.99, 0, 1, closed=(True, False)) == 0.99
    assert check_interval("gamma", 0, 0, 1, closed=(True, False)) == 0.0
    with pytest.raises(ConfigError, match=r"gamma must be a finite number in \[0, 1\), got 1"):
        check_interval("gamma", 1, 0, 1, closed=(True, False))
    for bad in (float("nan"), float("inf"), True, "0.5"):
        with pytest.raises(ConfigError, match="gamma"):
            check_interval("gamma", bad, 0, 1)
    with pytest.raises(ConfigError, match=r"lr must be a finite number > 0, got 0"):
        check_interval("lr", 0, 0, closed=(False, True))
    assert check_interval("tau", None, 0, 1, optional=True) is None


def test_check_int_rejects_bools_and_floats():
    assert check_int("k", 3, 1) == 3
    for bad in (True, 3.0, 0):
        with pytest.raises(ConfigError, match=r"k must be an int >= 1"):
            check_int("k", bad, 1)


def test_check_finite_tensor_counts_bad_entries_and_debug_flag(monkeypatch):
    check_finite_tensor("x", torch.ones(3))
    with pytest.raises(
        ConfigError, match=r"x must be finite, got 1 NaN and 2 infinite entries \(shape \(4,\)\)"
    ):
        check_finite_tensor("x", torch.tensor([1.0, float("nan"), float("inf"), -float("inf")]))
    with pytest.raises(ConfigError, match="1 NaN"):
        check_finite_tensor("x", np.array([np.nan, 1.0]))
    monkeypatch.delenv("ICLR26_DEBUG_CHECKS", raising=False)
    assert not debug_checks()
    monkeypatch.setenv("ICLR26_DEBUG_CHECKS", "1")
    assert debug_checks()
    set_debug_checks(False)
    try:
        assert not debug_checks()
    finally:
        set_debug_checks(None)


def test_node_set_one_rule_for_tuples():
    nodes = {"X", "Y", ("Z", 1)}
    assert node_set("treatments", None) == frozenset()
    assert node_set("treatments", "X", nodes) == {"X"}
    assert node_set("treatments", ["X", "Y"], nodes) == {"X", "Y"}
    assert node_set("treatments", ("Z", 1), nodes) == {("Z", 1)}  # a tuple that is a node
    assert node_set("treatments", ("X", "Y"), nodes) == {"X", "Y"}  # a tuple of nodes
    assert node_set("treatments", ("X", "Y")) == {"X", "Y"}  # without nodes: a collection
    assert node_set("t", 3) == {3}
    with pytest.raises(ConfigError, match=r"outcomes: unknown node 'W'; the graph has 3 nodes"):
        node_set("outcomes", ["X", "W"], nodes)
    with pytest.raises(ConfigError, match="outcomes must name at least one node"):
        node_set("outcomes", [], nodes, allow_empty=False)
    with pytest.raises(ConfigError, match="hashable"):
        node_set("outcomes", [["X"]])


def test_errors_are_user_errors_and_value_errors():
    with pytest.raises(UserError):
        check_in("a", 1, (2,))
    with pytest.raises(ValueError):
        check_in("a", 1, (2,))


def test_derive_seed_streams():
    assert derive_seed(3, 0, bits=32) == int(np.random.SeedSequence([3, 0]).generate_state(1)[0])
    assert derive_seed(3, 2, "abc") == int(np.random.SeedSequence([3, 2, *b"abc"]).generate_state(1)[0] >> 1)
    assert derive_seed(0, "sampler") != derive_seed(0, "evaluation")
    assert 0 <= derive_seed(7, "x") < 2**31
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        derive_seed(-1)
    with pytest.raises(ValueError, match="non-negative ints and names"):
        derive_seed(0, 1.5)
