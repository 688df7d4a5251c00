"""An opt-in on-disk response cache for chat models, in SQLite.

`CachedChatModel(model, ResponseCache(path))` answers a request it has seen before from disk,
so an interrupted evaluation resumes without asking the model again and a rerun costs nothing.
The key is a SHA-256 of the served model's identity (`model_identity`: the server's model id,
or the model file's fingerprint, so a cache never mixes two models), the messages (images
included), every sampling parameter and the seed. A request with `temperature > 0` and no seed
is cached too: a rerun replays the same samples (what resuming needs); give seeds to draw new ones.

Each entry is written in its own SQLite transaction (atomic: a crash leaves the old state or the
new, never half an entry). A cache another process holds locked is waited for (`timeout`
seconds, then a one-line `UserError`); a cache this process cannot write (a read-only file or
folder) is opened read-only and still answers, storing nothing new. An entry that does not
decode is dropped and recomputed; only a file that is not an SQLite database at all is moved
aside (`<name>.corrupt-<time>`) and a new cache started.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.llm.base import ChatModel, Completion, Message, TextStream, TokenLogprob
from iclr26.core.llm.identity import model_identity

SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, value TEXT, created REAL)"
SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 60.0  # how long to wait for another process's lock on the cache
_BUSY = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED"})
_NOT_A_DATABASE = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


def request_key(model: str, messages: Sequence[Message], params: dict[str, Any]) -> str:
    """The cache key: SHA-256 of the model's identity, messages and parameters (canonical JSON)."""
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


def _looks_like_a_database(path: Path) -> bool:
    """True for an empty file, one that starts with SQLite's header, or one we cannot read (never
    moved aside on a guess)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError:
        return True
    return head in (b"", SQLITE_HEADER)


class ResponseCache:
    """Completions keyed by request, in one SQLite file (safe across threads and processes).

    `read_only` is True when the file or its folder cannot be written: hits are served and
    `put` stores nothing.
    """

    def __init__(self, path: Path | str, *, timeout: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.read_only = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create the cache folder {self.path.parent}: {e.strerror}") from e
        self._lock = threading.Lock()
        self._db = self._open()

    def _connect(self, target: str, uri: bool = False) -> sqlite3.Connection:
        return sqlite3.connect(
            target, timeout=self.timeout, uri=uri, check_same_thread=False, isolation_level=None
        )

    def _writable(self) -> bool:
        folder_ok = os.access(self.path.parent, os.W_OK)  # WAL keeps -wal and -shm files beside it
        return folder_ok and (not self.path.exists() or os.access(self.path, os.W_OK))

    def _open(self) -> sqlite3.Connection:
        if self.path.exists() and not _looks_like_a_database(self.path):
            self._move_aside()
        if not self._writable():
            return self._open_read_only()
        try:
            return self._open_writable()
        except sqlite3.DatabaseError as e:
            name = getattr(e, "sqlite_errorname", "")
            if name in _BUSY:
                raise self._locked() from e
            if name in _NOT_A_DATABASE:  # a database header over pages that are not one
                self._move_aside()
                return self._open_writable()
            if name in ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM"):
                return self._open_read_only()
            raise UserError(f"cannot open the response cache {self.path}: {e}") from e

    def _open_writable(self) -> sqlite3.Connection:
        db = self._connect(str(self.path))
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def _open_read_only(self) -> sqlite3.Connection:
        """The cache opened read-only: `mode=ro`, else `immutable=1` (a WAL database in a folder where
        its -shm file cannot be made; a cache someone else writes meanwhile is then not seen)."""
        if not self.path.exists():
            raise UserError(f"cannot create the response cache {self.path}: its folder is not writable")
        uri = self.path.absolute().as_uri() + "?mode=ro"
        error: sqlite3.DatabaseError | None = None
        for target in (uri, uri + "&immutable=1"):
            db = None
            try:
                db = self._connect(target, uri=True)
                db.execute("SELECT COUNT(*) FROM responses").fetchone()
            except sqlite3.DatabaseError as e:
                if db is not None:
                    db.close()
                if getattr(e, "sqlite_errorname", "") in _BUSY:
                    raise self._locked() from e
                error = e
                continue
            self.read_only = True
            return db
        raise UserError(f"cannot read the read-only response cache {self.path}: {error}")

    def _move_aside(self) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
        try:
            self.path.rename(aside)
        except OSError as e:
            raise UserError(
                f"{self.path} is not an SQLite database and cannot be moved aside ({e.strerror}); "
                "remove it or give another cache path"
            ) from e

    def _locked(self) -> UserError:
        return UserError(
            f"the response cache {self.path} is locked by another process (waited {self.timeout:g} s); "
            "let that process finish, or give this run another --out"
        )

    def _execute(self, sql: str, args: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """Run one statement (the caller holds `_lock`); a lock held past `timeout` is a `UserError`."""
        try:
            return self._db.execute(sql, args)
        except sqlite3.OperationalError as e:
            if getattr(e, "sqlite_errorname", "") in _BUSY:
                raise self._locked() from e
            raise

    def get(self, key: str) -> list[Completion] | None:
        """The cached completions for `key`, or None; a broken entry is deleted and gives None."""
        with self._lock:
            row = self._execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            try:
                return _decode(row[0])
            except (ValueError, KeyError, TypeError):
                if not self.read_only:
                    self._execute("DELETE FROM responses WHERE key = ?", (key,))
                return None

    def put(self, key: str, model: str, completions: list[Completion]) -> None:
        """Store `completions` under `key` in one transaction (nothing, when read-only)."""
        if self.read_only:
            return
        with self._lock:
            self._execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                (key, model, _encode(completions), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._execute("SELECT COUNT(*) FROM responses").fetchone()[0])

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
        self._identity: str | None = None
        self.usage = model.usage
        self.supports_images = model.supports_images
        self.supports_json_schema = model.supports_json_schema
        self.supports_logprobs = model.supports_logprobs

    def identity(self) -> str:
        """The wrapped model's identity (`model_identity`), asked once: part of every key."""
        if self._identity is None:
            self._identity = model_identity(self.model)
        return self._identity

    def chat(self, messages: Sequence[Message], **params: Any) -> list[Completion]:
        """`model.chat`, from the cache when this exact request was answered before."""
        key = request_key(self.identity(), messages, {"call": "chat", **params})
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.record(cached=True)
            return hit
        got = self.model.chat(messages, **params)
        self.cache.put(key, self.identity(), got)
        return got

    def stream(self, messages: Sequence[Message], **params: Any) -> TextStream:
        """`model.stream`, replayed from the cache when this request once streamed to its end."""
        key = request_key(self.identity(), messages, {"call": "stream", **params})
        hit = self.cache.get(key)
        if hit is not None:
            self.usage.record(cached=True)
            return TextStream(_replay(hit[0]), self.name, None)
        live = self.model.stream(messages, **params)
        cache, name = self.cache, self.identity()

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
