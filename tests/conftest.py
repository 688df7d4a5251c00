import pytest


@pytest.fixture(scope="session")
def smollm2():
    """The embedded SmolLM2-135M-Instruct on xllamacpp, shared by the whole test session."""
    from iclr26.core.llm import EmbeddedChatModel

    model = EmbeddedChatModel(n_ctx=4096, n_parallel=4)
    yield model
    model.close()
