"""An opt-in on-disk response cache for chat models, in SQLite.

`CachedChatModel(model, ResponseCache(path))` answers a request it has seen before from disk,
so an interrupted evaluation resumes without asking the model again and a rerun costs nothing.
The key is a SHA-256 of the model's name, the messages (images included), every sampling
parameter and the seed. A request with `temperature > 0` and no seed is cached too: a rerun
replays the same samples (what resuming needs); give seeds to draw new ones.

Each entry is written in its own SQLite transaction (atomic: a crash leaves the old state or the
new, never half an entry). An entry that does not decode is dropped and recomputed; a file that
is not an SQLite database is moved aside (`<name>.corrupt-<time>`) and a new cache started.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.llm.base import ChatModel, Completion, Message, TextStream, TokenLogprob

SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, value TEXT, created REAL)"


def request_key(model: str, messages: Sequence[Message], params: dict[str, Any]) -> str:
    """The cache key: SHA-256 of the model name, messages and parameters (canonical JSON)."""
    blob = json.dumps({"model": model, "messages": list(messages), "params": params}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _encode(completions: list[Completion]) -> str:
    return json.dumps([asdict(c) for c in completions])


def _decode(value: str) -> list[Completion]:
    out = []
    for d in json.loads(value):
        lp = d.get("logprobs")
        logprobs = (
            None
            if lp is None
            else tuple(TokenLogprob(t["token"], float(t["logprob"]), tuple(map(tuple, t["top"]))) for t in lp)
        )
        out.append(Completion(str(d["text"]), d.get("finish_reason"), logprobs, dict(d.get("usage") or {})))
    return out


class ResponseCache:
    """Completions keyed by request, in one SQLite file (safe across threads)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create the cache folder {self.path.parent}: {e.strerror}") from e
        self._lock = threading.Lock()
        self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(SCHEMA)
            return db
        except sqlite3.DatabaseError:
            if not self.path.exists():
                raise
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            self.path.rename(aside)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute(SCHEMA)
            return db
        except sqlite3.OperationalError as e:  # pragma: no cover - permissions, full disk
            raise UserError(f"cannot open the response cache {self.path}: {e}") from e

    def get(self, key: str) -> list[Completion] | None:
        """The cached completions for `key`, or None; a broken entry is deleted and gives None."""
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            try:
                return _decode(row[0])
            except (ValueError, KeyError, TypeError):
                self._db.execute("DELETE FROM responses WHERE key = ?", (key,))
                return None

    def put(self, key: str, model: str, completions: list[Completion]) -> None:
        """Store `completions` under `key` in one transaction."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                (key, model, _encode(completions), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


def _replay(completion: Completion) -> Iterator[dict[str, Any]]:
    """The chunks of a cached completion: all of its text as one delta."""
    yield {"choices": [{"delta": {"content": completion.text}, "finish_reason": completion.finish_reason}]}


class CachedChatModel:
    """A `ChatModel` that answers repeated requests from a `ResponseCache`.

    Hits are recorded in `usage` as cached calls (no tokens, no server time). A stream is stored
    only when it ran to its end; one the caller stopped is not a full answer.
    """

    def __init__(self, model: ChatModel, cache: ResponseCache) -> None:
        self.model = model
        self.cache = cache
        self.name = model.name
        self.usage = model.usage
        self.supports_images = model.supports_images
        self.supports_json_schema = model.supports_json_schema
        self.supports_logprobs = model.supports_logprobs

    def chat(self, messages: Sequence[Message], **params: Any) -> list[Completion]:
        """`model.chat`, from the cache when this exact request was answered before."""
        key = request_key(self.name, messages, {"call": "chat", **params})
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.record(cached=True)
            return hit
        got = self.model.chat(messages, **params)
        self.cache.put(key, self.name, got)
        return got

    def stream(self, messages: Sequence[Message], **params: Any) -> TextStream:
        """`model.stream`, replayed from the cache when this request once streamed to its end."""
        key = request_key(self.name, messages, {"call": "stream", **params})
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.record(cached=True)
            return TextStream(_replay(hit[0]), self.name, None)
        live = self.model.stream(messages, **params)
        cache, name = self.cache, self.name

        def store_when_complete() -> Iterator[dict[str, Any]]:
            for delta in live:
                yield {"choices": [{"delta": {"content": delta}}]}
            if live.stopped:
                return
            done = Completion(
                live.text, live.finish_reason, None, {"completion_tokens": live.completion_tokens}
            )
            cache.put(key, name, [done])
            yield {"choices": [{"delta": {}, "finish_reason": live.finish_reason}]}

        def chunks() -> Iterator[dict[str, Any]]:
            try:
                yield from store_when_complete()
            finally:
                live.close()

        # The live stream records its own usage; this wrapper records none.
        return TextStream(chunks(), self.name, None)

    def close(self) -> None:
        """Close the cache and the wrapped model."""
        self.cache.close()
        close = getattr(self.model, "close", None)
        if close is not None:
            close()
