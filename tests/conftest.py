import os
import sys

# `make test` runs two pytest-xdist workers on two cores, and each must leave the other its core when
# it waits. OpenMP's threads (torch's, and llama.cpp's) spin at every barrier by default: beside
# scaf_grpo's torchrun test, the slt_reliability smoke test took 206 s spinning against 47 s with
# passive waits, and the glow smoke test 223 s against 37 s with the embedded model on one thread
# (its own threads spin too). Set before torch loads libgomp, which reads the variable once; the
# subprocesses (torchrun ranks, Ray workers, scripts) inherit both.
if os.environ.get("PYTEST_XDIST_WORKER"):
    if "torch" in sys.modules:
        raise RuntimeError("torch was imported before tests/conftest.py could set OMP_WAIT_POLICY")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("ICLR26_LLM_THREADS", "1")

import pytest
import torch

# Triton kernels (dash, laplacianformer) run on CPU tensors through the interpreter when no GPU is
# present. Set here, before any test module imports triton.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

LONG_MODULES = (
    "tests/scienceboard/test_apps.py",
    "tests/scienceboard/test_system.py",
    "tests/slt_reliability/test_system.py",
    "tests/pic/test_device_script.py",
    "tests/scaf_grpo/test_scaf_grpo.py",
    "tests/spatial_dise/test_tasks2d.py",
    "tests/scienceboard/test_env.py",
    "tests/glow/test_system.py",
    "tests/tiered_pruning/test_pruning.py",
)
"""The modules that take longest (`--durations`), started first: xdist hands whole modules to the
workers in collection order (`--dist loadscope --no-loadscope-reorder`; xdist's own reorder puts
the modules with most tests first and these last), so a long one collected last would run alone."""


def pytest_collection_modifyitems(config, items):
    """Move the items of `LONG_MODULES` to the front, in that order; the rest keep theirs."""
    rank = {m: i for i, m in enumerate(LONG_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "debian(*packages): needs these Debian packages (declared in iclr26.core.sysdeps); "
        "skips naming them when missing, fails under CI=true",
    )


def pytest_runtest_setup(item):
    """`@pytest.mark.debian("tmux")`: skip with the package's name, or fail under CI=true."""
    from iclr26.core.sysdeps import skip_or_fail

    for mark in item.iter_markers(name="debian"):
        skip_or_fail(mark.args)


@pytest.fixture(scope="session")
def smollm2():
    """The embedded SmolLM2-135M-Instruct on xllamacpp: the process-wide shared instance, the
    same one `get_chat_model("embedded")` and every run in this process use."""
    from iclr26.core.llm import shared_embedded_model

    return shared_embedded_model()
