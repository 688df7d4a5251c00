"""ChatModel over any OpenAI-compatible HTTP server (vLLM, llama.cpp server, Ollama, ...)."""

from __future__ import annotations

import os
import time
from typing import Any

import httpx

from iclr26.core.llm.base import LLMConnectionError, LLMError, OpenAIWireModel

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


def _chat_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    if base.endswith("/chat/completions"):
        return base
    if not base.endswith("/v1"):
        base += "/v1"
    return base + "/chat/completions"


class OpenAIChatModel(OpenAIWireModel):
    """Chat completions from an OpenAI-compatible server, with retries and timeouts.

    Retries on 408/409/429/5xx and on timeouts, with exponential backoff (honouring
    `Retry-After`); a refused connection fails at once with `LLMConnectionError`. Servers that
    ignore `n` (Ollama, some llama.cpp builds) are topped up with further requests.
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.base_url = base_url
        self.url = _chat_url(base_url)
        self.model = model
        self.name = f"http:{model or 'default'}@{base_url}"
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    @classmethod
    def from_env(cls) -> OpenAIChatModel:
        """Build from ICLR26_LLM_BASE_URL, ICLR26_LLM_MODEL and ICLR26_LLM_API_KEY."""
        base = os.environ.get("ICLR26_LLM_BASE_URL")
        if not base:
            raise LLMError("ICLR26_LLM_BASE_URL is not set (e.g. http://127.0.0.1:8000/v1)")
        return cls(base, os.environ.get("ICLR26_LLM_MODEL"), os.environ.get("ICLR26_LLM_API_KEY"))

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        delay = self.backoff
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                resp = self._client.post(self.url, json=body)
            except httpx.ConnectError as e:
                raise LLMConnectionError(
                    f"cannot connect to the LLM server at {self.url} ({e}); start the server, "
                    "or fix/unset ICLR26_LLM_BASE_URL to use the embedded SmolLM2"
                ) from e
            except httpx.TimeoutException as e:
                if last:
                    raise LLMError(f"{self.url}: timed out after {attempt + 1} tries") from e
                time.sleep(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            if resp.status_code in RETRY_STATUS and not last:
                retry_after = resp.headers.get("retry-after")
                wait = float(retry_after) if retry_after and retry_after.isdigit() else delay
                time.sleep(min(wait, self.max_backoff))
                delay = min(delay * 2, self.max_backoff)
                continue
            if resp.status_code != 200:
                raise LLMError(
                    f"{self.url}: HTTP {resp.status_code} after {attempt + 1} tries: {resp.text[:300]}"
                )
            try:
                return resp.json()
            except ValueError as e:
                raise LLMError(f"{self.url}: response is not JSON: {resp.text[:200]!r}") from e
        raise AssertionError("unreachable")
