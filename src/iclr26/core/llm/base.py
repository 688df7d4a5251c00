"""The ChatModel protocol that every system talks to, and the OpenAI wire format it shares.

A backend turns chat messages into `n` sampled `Completion`s (`chat`), or streams one completion
as text deltas that the caller may stop at any point (`stream`). Options a backend cannot honour
(images, JSON-schema-constrained output, token log-probs) raise `LLMUnsupported` rather than
being silently ignored; `supports_images`, `supports_json_schema` and `supports_logprobs` say
what it can do. Every backend counts tokens and wall time in its `usage` meter.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from iclr26.core.errors import UserError
from iclr26.core.llm.images import has_images
from iclr26.core.llm.usage import UsageMeter


class Message(TypedDict):
    """One chat message in the OpenAI shape; `content` is a string or a list of content parts
    (`{"type": "text", ...}`, `{"type": "image_url", ...}`: see `iclr26.core.llm.images`)."""

    role: Literal["system", "user", "assistant"]
    content: str | list[dict[str, Any]]


class LLMError(RuntimeError):
    """A language-model backend failed; the message says which backend and why."""


class LLMConnectionError(LLMError, UserError):
    """The backend's server could not be reached."""


class LLMUnsupported(LLMError, UserError):
    """The backend cannot do what was asked (e.g. images, JSON-schema output, log-probs)."""


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
    """A chat-completion model: `chat(messages, ...) -> list[Completion]` with `n` samples, and
    `stream(messages, ...) -> TextStream` for one completion read delta by delta."""

    name: str
    supports_images: bool
    supports_json_schema: bool
    supports_logprobs: bool
    usage: UsageMeter

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
        prefix: str | None = None,
    ) -> list[Completion]:
        """Sample `n` completions of `messages` (continuing the assistant text `prefix` if given)."""
        ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        prefix: str | None = None,
    ) -> TextStream:
        """Stream one completion of `messages` as text deltas; `close()` stops it."""
        ...


def _check_content(i: int, content: Any) -> None:
    """A message's content is a string or a list of text / image_url parts."""
    if isinstance(content, str):
        return
    if not isinstance(content, list) or not content:
        raise UserError(f"messages[{i}]['content'] must be a string or a non-empty list of content parts")
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind == "image_url":
            inner = part.get("image_url")
            url = inner.get("url") if isinstance(inner, dict) else None
            if isinstance(url, str) and url.startswith(("data:", "http://", "https://")):
                continue
            raise UserError(
                f"messages[{i}]['content'][{j}]: an image_url part needs image_url.url, a data: or http(s) "
                "URL (use iclr26.core.llm.image_part)"
            )
        raise UserError(
            f"messages[{i}]['content'][{j}] must be {{'type': 'text', 'text': str}} or an image_url part, "
            f"got {str(part)[:80]}"
        )


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
        _check_content(i, m["content"])
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if top_logprobs < 0 or top_logprobs > 20:
        raise ValueError(f"top_logprobs must be in 0..20, got {top_logprobs}")


def refuse_images(backend: str, messages: Sequence[Message]) -> None:
    """Raise `LLMUnsupported` for a text-only backend asked to look at images."""
    if has_images(messages):
        raise LLMUnsupported(
            f"{backend} cannot see images (a text-only model); point ICLR26_LLM_BASE_URL at a vision "
            "model server, e.g. `vllm serve Qwen/Qwen2.5-VL-7B-Instruct`"
        )


def text_only(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages with lists of text parts joined into one string (for text-only chat templates)."""
    out = []
    for m in messages:
        c = m["content"]
        out.append({**m, "content": c if isinstance(c, str) else "\n".join(p["text"] for p in c)})
    return out


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
    prefix: str | None = None,
    stream: bool = False,
) -> dict[str, Any]:
    """An OpenAI `/v1/chat/completions` request body.

    `prefix` is sent as a final assistant message to be continued (llama.cpp does this by default;
    vLLM needs `continue_final_message`, which llama.cpp ignores).
    """
    body: dict[str, Any] = {
        "messages": [dict(m) for m in messages],
        "n": n,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    if prefix:
        body["messages"].append({"role": "assistant", "content": prefix})
        body["continue_final_message"] = True
        body["add_generation_prompt"] = False
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
    if stream:
        body["stream"] = True
        # include_usage: a final chunk with the counts; continuous_usage_stats: vLLM's counts on
        # every chunk, so an interrupted stream is still counted exactly (others ignore it).
        body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    return body


def server_error(data: dict[str, Any], backend: str) -> LLMError:
    """The `LLMError` for a response body that carries an `error`."""
    err = data["error"]
    msg = err.get("message", err) if isinstance(err, dict) else err
    return LLMError(f"{backend}: server returned an error: {msg}")


def parse_response(data: dict[str, Any], backend: str, top_logprobs: int | None = None) -> list[Completion]:
    """Completions from an OpenAI chat-completion response body (alternatives cut to
    `top_logprobs` when given)."""
    if "error" in data:
        raise server_error(data, backend)
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


def _chunk_counts(chunk: dict[str, Any]) -> tuple[int, int] | None:
    """(prompt, completion) tokens a stream chunk reports: OpenAI `usage`, or llama.cpp `timings`."""
    usage = chunk.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
        return int(usage.get("prompt_tokens") or 0), int(usage["completion_tokens"])
    t = chunk.get("timings")
    if isinstance(t, dict) and isinstance(t.get("predicted_n"), int):
        return int(t.get("prompt_n", 0)) + int(t.get("cache_n", 0)), int(t["predicted_n"])
    return None


class TextStream:
    """One completion arriving as text deltas. Iterate for the deltas; `close()` stops generation
    at once (the server is told); `text` is everything received so far.

    Usage is recorded when the stream ends or is closed: the server's counts when it sent them
    (a final usage chunk, vLLM's per-chunk usage, llama.cpp's per-token timings), otherwise the
    number of deltas received, flagged as estimated.
    """

    def __init__(self, chunks: Iterator[dict[str, Any]], backend: str, meter: UsageMeter | None) -> None:
        self.backend = backend
        self.text = ""
        self.finish_reason: str | None = None
        self.stopped = False  # closed by the caller before the model finished
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._chunks = chunks
        self._meter = meter
        self._counted: tuple[int, int] | None = None
        self._deltas = 0
        self._start = time.perf_counter()
        self._done = False

    def __iter__(self) -> TextStream:
        return self

    def __next__(self) -> str:
        while not self._done:
            try:
                chunk = next(self._chunks)
            except StopIteration:
                self._finish()
                break
            if "error" in chunk:
                self._finish()
                raise server_error(chunk, self.backend)
            counts = _chunk_counts(chunk)
            if counts is not None:
                self._counted = counts
            for choice in chunk.get("choices") or ():
                if choice.get("finish_reason"):
                    self.finish_reason = choice["finish_reason"]
                delta = (choice.get("delta") or {}).get("content")
                if delta:
                    self.text += delta
                    self._deltas += 1
                    return delta
        raise StopIteration

    def read(self) -> str:
        """Consume the rest of the stream and return the whole text."""
        for _ in self:
            pass
        return self.text

    def close(self) -> None:
        """Stop the stream (the server stops generating); safe to call twice."""
        if not self._done:
            self.stopped = True
            self._finish()

    def _finish(self) -> None:
        self._done = True
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        prompt, completion = self._counted if self._counted else (0, self._deltas)
        # A final usage chunk can lag the deltas of an interrupted stream; never count fewer.
        self.prompt_tokens, self.completion_tokens = prompt, max(completion, self._deltas)
        if self._meter is not None:
            self._meter.record(
                prompt,
                self.completion_tokens,
                time.perf_counter() - self._start,
                estimated=self._counted is None,
            )

    def __enter__(self) -> TextStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sse_chunks(lines: Iterable[str], source: str) -> Iterator[dict[str, Any]]:
    """The JSON chunks of server-sent-event lines (`data: {...}`), up to `data: [DONE]`; blank
    and comment lines are skipped, a chunk that is not JSON is an `LLMError` naming `source`."""
    for line in lines:
        data = line.strip().removeprefix("data:").strip()
        if not data or data.startswith(":"):
            continue
        if data == "[DONE]":
            return
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError as e:
            raise LLMError(f"{source}: stream chunk is not JSON: {data[:200]!r}") from e
        yield chunk


def callback_chunks(start: Callable[[Callable[[str], bool]], None]) -> Iterator[dict[str, Any]]:
    """Turn a blocking, callback-driven stream into a closable iterator of chunk dicts.

    `start(on_chunk)` runs in a worker thread and calls `on_chunk(json_text)` per chunk; the
    callback returns True to ask the producer to stop, which it does once this iterator is closed.
    """
    q: queue.Queue[Any] = queue.Queue()
    stop = threading.Event()
    end = object()

    def on_chunk(text: str) -> bool:
        q.put(text)
        return stop.is_set()

    def work() -> None:
        try:
            start(on_chunk)
        except BaseException as e:  # handed to the reader, raised there
            q.put(e)
        finally:
            q.put(end)

    worker = threading.Thread(target=work, name="llm-stream", daemon=True)
    worker.start()
    try:
        while True:
            item = q.get()
            if item is end:
                return
            if isinstance(item, BaseException):
                raise LLMError(f"stream failed: {item}") from item
            yield from sse_chunks(str(item).splitlines(), "in-process stream")
    finally:
        stop.set()
        worker.join(timeout=30)


def strip_echoed_prefix(text: str, prefix: str | None) -> str:
    """Servers that echo a continued assistant prefix (llama.cpp, non-streaming) return it too."""
    return text[len(prefix) :] if prefix and text.startswith(prefix) else text


class OpenAIWireModel:
    """`chat` and `stream` shared by the backends that speak the OpenAI chat-completions JSON.

    Subclasses set `name` (and `model`) and implement `_request(body) -> response dict` and
    `_stream(body) -> iterator of chunk dicts` (closing it stops generation). Servers that return
    fewer than `n` choices are topped up with further requests (seed + k).
    """

    supports_images = True
    supports_json_schema = True
    supports_logprobs = True
    native_n = True  # the server samples n choices in one request and counts all their tokens
    name: str = "openai-wire"
    model: str | None = None

    def __init__(self) -> None:
        self.usage = UsageMeter()

    def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _stream(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def _prepare(self, messages: Sequence[Message]) -> Sequence[Message]:
        """Refuse images on a text-only backend, and flatten text parts for its chat template."""
        if self.supports_images:
            return messages
        refuse_images(self.name, messages)
        return text_only(messages)  # type: ignore[return-value]

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
        prefix: str | None = None,
    ) -> list[Completion]:
        """Sample `n` completions of `messages` (continuing the assistant text `prefix` if given)."""
        validate_request(messages, n, temperature, max_tokens, top_logprobs)
        messages = self._prepare(messages)

        def request(k: int, count: int) -> list[Completion]:
            """`count` samples in one request, the first with seed + k; its usage recorded."""
            body = build_payload(
                messages,
                model=self.model,
                n=count,
                temperature=temperature,
                max_tokens=max_tokens,
                stop=stop,
                json_schema=json_schema,
                logprobs=logprobs,
                top_logprobs=top_logprobs,
                seed=None if seed is None else seed + k,
                prefix=prefix,
            )
            start = time.perf_counter()
            got = parse_response(self._request(body), self.name, top_logprobs)
            if not got:
                raise LLMError(f"{self.name}: server returned no choices")
            u = got[0].usage
            self.usage.record(
                u.get("prompt_tokens", 0), u.get("completion_tokens", 0), time.perf_counter() - start
            )
            return [dataclasses.replace(c, text=strip_echoed_prefix(c.text, prefix)) for c in got]

        if not self.native_n and n > 1:
            # One request per sample (seed + k), one after another: llama.cpp's usage for an n > 1
            # request counts one choice only, and slots decoded side by side are batched
            # differently from run to run, so seeded samples would not repeat.
            return [c for k in range(n) for c in request(k, 1)]
        out: list[Completion] = []
        while len(out) < n:
            out.extend(request(len(out), n - len(out)))
        return out[:n]

    def stream(
        self,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int | None = None,
        prefix: str | None = None,
    ) -> TextStream:
        """Stream one completion as text deltas (continuing `prefix`); `close()` stops it."""
        validate_request(messages, 1, temperature, max_tokens, 0)
        messages = self._prepare(messages)
        body = build_payload(
            messages,
            model=self.model,
            n=1,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            json_schema=None,
            logprobs=False,
            top_logprobs=0,
            seed=seed,
            prefix=prefix,
            stream=True,
        )
        return TextStream(self._stream(body), self.name, self.usage)
