"""Shared fixtures of the icl_analysis tests."""

import pytest
import torch


@pytest.fixture
def one_torch_thread():
    """Tiny models train fastest on one thread; two threads on a busy 2-core machine ran 10-70x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
