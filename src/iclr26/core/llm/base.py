"""The ChatModel protocol that every system talks to, and the OpenAI wire format it shares.

A backend turns chat messages into `n` sampled `Completion`s. Options a backend cannot honour
(JSON-schema-constrained output, token log-probs) raise `LLMUnsupported` rather than being
silently ignored; `supports_json_schema` and `supports_logprobs` say what it can do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable


class Message(TypedDict):
    """One chat message in the OpenAI shape."""

    role: Literal["system", "user", "assistant"]
    content: str


class LLMError(RuntimeError):
    """A language-model backend failed; the message says which backend and why."""


class LLMConnectionError(LLMError):
    """The backend's server could not be reached."""


class LLMUnsupported(LLMError):
    """The backend cannot do what was asked (e.g. JSON-schema output, log-probs)."""


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token, its log-probability, and the most likely alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    """One sampled completion."""

    text: str
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    usage: dict[str, int] = field(default_factory=dict)

    def json(self) -> Any:
        """The completion parsed as JSON (for `json_schema=` requests)."""
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as e:
            raise LLMError(f"completion is not valid JSON ({e}): {self.text[:200]!r}") from e


@runtime_checkable
class ChatModel(Protocol):
    """A chat-completion model: `chat(messages, ...) -> list[Completion]` with `n` samples."""

    name: str
    supports_json_schema: bool
    supports_logprobs: bool

    def chat(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        json_schema: dict[str, Any] | None = None,
        logprobs: bool = False,
        top_logprobs: int = 0,
        seed: int | None = None,
    ) -> list[Completion]:
        """Sample `n` completions of `messages`."""
        ...


def validate_request(
    messages: Sequence[Message],
    n: int,
    temperature: float,
    max_tokens: int,
    top_logprobs: int,
) -> None:
    """Check chat arguments up front, naming the bad one."""
    if not messages:
        raise ValueError("messages is empty: give at least one {'role', 'content'} message")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content', got {m!r}")
        if m["role"] not in ("system", "user", "assistant"):
            raise ValueError(f"messages[{i}]['role'] must be system/user/assistant, got {m['role']!r}")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if top_logprobs < 0 or top_logprobs > 20:
        raise ValueError(f"top_logprobs must be in 0..20, got {top_logprobs}")


def build_payload(
    messages: Sequence[Message],
    *,
    model: str | None,
    n: int,
    temperature: float,
    max_tokens: int,
    stop: Sequence[str] | None,
    json_schema: dict[str, Any] | None,
    logprobs: bool,
    top_logprobs: int,
    seed: int | None,
) -> dict[str, Any]:
    """An OpenAI `/v1/chat/completions` request body."""
    body: dict[str, Any] = {
        "messages": [dict(m) for m in messages],
        "n": n,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    if model:
        body["model"] = model
    if stop:
        body["stop"] = list(stop)
    if json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": json_schema, "strict": True},
        }
    if logprobs or top_logprobs:
        body["logprobs"] = True
        # llama.cpp returns no log-probs at all for top_logprobs=0; ask for 1, trim on parsing.
        body["top_logprobs"] = max(top_logprobs, 1)
    if seed is not None:
        body["seed"] = seed
    return body


def parse_response(data: dict[str, Any], backend: str, top_logprobs: int | None = None) -> list[Completion]:
    """Completions from an OpenAI chat-completion response body (alternatives cut to
    `top_logprobs` when given)."""
    if "error" in data:
        err = data["error"]
        msg = err.get("message", err) if isinstance(err, dict) else err
        raise LLMError(f"{backend}: server returned an error: {msg}")
    try:
        choices = sorted(data["choices"], key=lambda c: c.get("index", 0))
    except (KeyError, TypeError) as e:
        raise LLMError(f"{backend}: response has no 'choices': {str(data)[:300]}") from e
    usage = {k: v for k, v in (data.get("usage") or {}).items() if isinstance(v, int)}
    out = []
    for c in choices:
        msg = c.get("message") or {}
        lp = None
        content_lp = (c.get("logprobs") or {}).get("content")
        if content_lp is not None:
            lp = tuple(
                TokenLogprob(
                    token=t["token"],
                    logprob=float(t["logprob"]),
                    top=tuple(
                        (a["token"], float(a["logprob"])) for a in t.get("top_logprobs", [])[:top_logprobs]
                    ),
                )
                for t in content_lp
            )
        out.append(
            Completion(
                text=msg.get("content") or "",
                finish_reason=c.get("finish_reason"),
                logprobs=lp,
                usage=usage,
            )
        )
    return out


class OpenAIWireModel:
    """`chat` shared by the backends that speak the OpenAI chat-completions JSON.

    Subclasses set `name` (and `model`) and implement `_request(body) -> response dict`. Servers
    that return fewer than `n` choices are topped up with further requests (seed + k).
    """

    supports_json_schema = True
    supports_logprobs = True
    name: str = "openai-wire"
    model: str | None = None

    def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def chat(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        json_schema: dict[str, Any] | None = None,
        logprobs: bool = False,
        top_logprobs: int = 0,
        seed: int | None = None,
    ) -> list[Completion]:
        """Sample `n` completions of `messages`."""
        validate_request(messages, n, temperature, max_tokens, top_logprobs)
        out: list[Completion] = []
        while len(out) < n:
            body = build_payload(
                messages,
                model=self.model,
                n=n - len(out),
                temperature=temperature,
                max_tokens=max_tokens,
                stop=stop,
                json_schema=json_schema,
                logprobs=logprobs,
                top_logprobs=top_logprobs,
                seed=None if seed is None else seed + len(out),
            )
            got = parse_response(self._request(body), self.name, top_logprobs)
            if not got:
                raise LLMError(f"{self.name}: server returned no choices")
            out.extend(got)
        return out[:n]
