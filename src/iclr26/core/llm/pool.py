"""A bounded pool of parallel chat requests.

`chat_many(model, requests, max_concurrency=k)` sends up to k requests at once and returns the
answers in request order. The HTTP backend keeps its own bound too (`max_concurrency` on
`OpenAIChatModel`), so several pools over one server never exceed it; the embedded llama.cpp
server decodes up to `n_parallel` requests together.

`RefusalsAsEmpty(model)` turns a request the server refuses (a prompt over its context, say) into
an empty reply and counts it, for harnesses whose parsers treat an empty reply as unparsed.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.llm.base import ChatModel, Completion, LLMConnectionError, LLMError, Message


def chat_many(
    model: ChatModel,
    requests: Sequence[Mapping[str, Any]],
    *,
    max_concurrency: int = 4,
) -> list[list[Completion]]:
    """`model.chat(**request)` for each request, at most `max_concurrency` at a time, in order.

    Each request is a mapping with `messages` and any `chat` keyword (`n`, `temperature`, ...).
    The first failure is raised once the requests already in flight have finished.
    """
    if not isinstance(max_concurrency, int) or max_concurrency < 1:
        raise UserError(f"max_concurrency must be a positive int, got {max_concurrency!r}")
    for i, r in enumerate(requests):
        if not isinstance(r, Mapping) or "messages" not in r:
            raise UserError(f"requests[{i}] must be a mapping with 'messages' (and chat keywords)")
    if not requests:
        return []

    def one(request: Mapping[str, Any]) -> list[Completion]:
        params = dict(request)
        return model.chat(params.pop("messages"), **params)

    with ThreadPoolExecutor(
        max_workers=min(max_concurrency, len(requests)), thread_name_prefix="chat"
    ) as pool:
        # each request in a copy of the caller's context: its usage counts in the caller's study cell
        futures = [pool.submit(contextvars.copy_context().run, one, r) for r in requests]
        return [f.result() for f in futures]


class RefusalsAsEmpty:
    """Wraps a model so that a request the server refuses reads as one empty completion
    (`finish_reason="error"`), counted in `refused`; a lost connection still raises."""

    def __init__(self, model: ChatModel) -> None:
        self.model, self.refused = model, 0
        self.name = model.name

    def chat(self, messages: Sequence[Message], **kw: Any) -> list[Completion]:
        """`model.chat`, with a refusal as an empty reply."""
        try:
            return self.model.chat(messages, **kw)
        except LLMConnectionError:
            raise
        except LLMError:
            self.refused += 1
            return [Completion("", finish_reason="error")]
