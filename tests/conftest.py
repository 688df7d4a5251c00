import pytest


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
    """The embedded SmolLM2-135M-Instruct on xllamacpp, shared by the whole test session."""
    from iclr26.core.llm import EmbeddedChatModel

    model = EmbeddedChatModel(n_ctx=4096, n_parallel=4)
    yield model
    model.close()
