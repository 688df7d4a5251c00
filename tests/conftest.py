import os

import pytest
import torch

# Triton kernels (dash, laplacianformer) run on CPU tensors through the interpreter when no GPU is
# present. Set here, before any test module imports triton.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")


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
