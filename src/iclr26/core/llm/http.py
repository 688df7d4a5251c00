"""ChatModel over any OpenAI-compatible HTTP server (vLLM, llama.cpp server, Ollama, ...)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from iclr26.core.errors import UserError
from iclr26.core.llm.base import LLMConnectionError, LLMError, OpenAIWireModel, sse_chunks
from iclr26.core.llm.choice import without_credentials

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

    Retries on 408/409/429/5xx, timeouts and dropped connections, with exponential backoff
    (honouring `Retry-After`); a refused connection fails at once with `LLMConnectionError`, and
    every other transport or parse failure is an `LLMError` (an episode records it as its stop).
    Servers that ignore `n` (Ollama, some llama.cpp builds) are topped up with further requests. Images are
    sent as they are (the server decides; pass `supports_images=False` for a text-only server
    to get the refusal here). At most `max_concurrency` requests are in flight at once, however
    many threads call (`iclr26.core.llm.chat_many` runs a bounded pool over it).
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
        supports_images: bool = True,
        max_concurrency: int = 8,
    ) -> None:
        super().__init__()
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise UserError(f"max_concurrency must be a positive int, got {max_concurrency!r}")
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        parts = urlsplit(base_url)  # a user:password@ in the URL is sent as basic auth, never shown
        auth = (unquote(parts.username), unquote(parts.password or "")) if parts.username else None
        base_url = without_credentials(base_url)
        self.base_url = base_url
        self.url = _chat_url(base_url)
        self.model = model
        self.name = f"http:{model or 'default'}@{base_url}"
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.supports_images = supports_images
        self.max_concurrency = max_concurrency
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._identity: str | None = None
        self._identity_lock = threading.Lock()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, auth=None if api_key else auth)

    @classmethod
    def from_env(
        cls, *, base_url: str | None = None, model: str | None = None, **kwargs: Any
    ) -> OpenAIChatModel:
        """Build from ICLR26_LLM_BASE_URL, ICLR26_LLM_MODEL, ICLR26_LLM_API_KEY and
        ICLR26_LLM_MAX_CONCURRENCY (default 8); `base_url` and `model` take the place of the first
        two (a run's resolved choice, in a worker whose environment may lack them)."""
        base = base_url or os.environ.get("ICLR26_LLM_BASE_URL")
        if not base:
            raise UserError("ICLR26_LLM_BASE_URL is not set (e.g. http://127.0.0.1:8000/v1)")
        conc = os.environ.get("ICLR26_LLM_MAX_CONCURRENCY")
        if conc is not None and "max_concurrency" not in kwargs:
            if not conc.isdigit() or int(conc) < 1:
                raise UserError(f"ICLR26_LLM_MAX_CONCURRENCY must be a positive integer, got {conc!r}")
            kwargs["max_concurrency"] = int(conc)
        name = model or os.environ.get("ICLR26_LLM_MODEL")
        return cls(base, name, os.environ.get("ICLR26_LLM_API_KEY"), **kwargs)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def identity(self) -> str:
        """The model the server serves, asked once: `http:<id>` from its `/v1/models` (the id
        matching `model`, else the only one listed); `http:<model>@<base_url>` when the server
        does not say."""
        with self._identity_lock:
            if self._identity is None:
                self._identity = f"http:{self._served_model()}"
            return self._identity

    def _served_model(self) -> str:
        url = self.url.removesuffix("/chat/completions") + "/models"
        try:
            resp = self._client.get(url)
        except httpx.ConnectError as e:
            raise LLMConnectionError(
                f"cannot connect to the LLM server at {url} ({e}); start the server, "
                "or fix/unset ICLR26_LLM_BASE_URL to use the embedded SmolLM2"
            ) from e
        except httpx.TransportError:
            resp = None
        ids: list[str] = []
        if resp is not None and resp.status_code == 200:
            with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                ids = sorted(str(m["id"]) for m in resp.json()["data"])
        if self.model in ids:
            return str(self.model)
        if len(ids) == 1:  # a one-model server (llama.cpp) answers with it whatever name is asked for
            return ids[0]
        return f"{self.model or 'default'}@{self.base_url}"

    def _send(self, body: dict[str, Any], stream: bool) -> httpx.Response:
        """POST `body`, retrying on 408/409/429/5xx and timeouts; the caller closes the response."""
        delay = self.backoff
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                req = self._client.build_request("POST", self.url, json=body)
                resp = self._client.send(req, stream=stream)
            except httpx.ConnectError as e:
                raise LLMConnectionError(
                    f"cannot connect to the LLM server at {self.url} ({e}); start the server, "
                    "or fix/unset ICLR26_LLM_BASE_URL to use the embedded SmolLM2"
                ) from e
            except httpx.TransportError as e:  # a timeout, a dropped connection, a broken read or write
                if last:
                    why = (
                        "timed out"
                        if isinstance(e, httpx.TimeoutException)
                        else f"the connection failed ({type(e).__name__}: {e})"
                    )
                    raise LLMError(f"{self.url}: {why} after {attempt + 1} tries") from e
                time.sleep(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            if resp.status_code in RETRY_STATUS and not last:
                resp.close()
                retry_after = resp.headers.get("retry-after")
                wait = float(retry_after) if retry_after and retry_after.isdigit() else delay
                time.sleep(min(wait, self.max_backoff))
                delay = min(delay * 2, self.max_backoff)
                continue
            if resp.status_code != 200:
                text = resp.read().decode(errors="replace") if stream else resp.text
                resp.close()
                raise LLMError(f"{self.url}: HTTP {resp.status_code} after {attempt + 1} tries: {text[:300]}")
            return resp
        raise AssertionError("unreachable")

    def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._slots:
            resp = self._send(body, stream=False)
        try:
            return resp.json()
        except ValueError as e:
            raise LLMError(f"{self.url}: response is not JSON: {resp.text[:200]!r}") from e

    def _stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Server-sent events of one streamed request; closing the iterator drops the connection,
        which stops generation on vLLM and llama.cpp."""
        with self._slots:
            resp = self._send(body, stream=True)
            try:
                yield from sse_chunks(resp.iter_lines(), self.url)
            except httpx.TransportError as e:
                raise LLMError(f"{self.url}: stream broke off ({e})") from e
            finally:
                with contextlib.suppress(httpx.HTTPError):
                    resp.close()
