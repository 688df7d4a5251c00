"""Reading a user's JSON and JSON-lines files with one-line errors that name the file and the place;
appending to and reading back the JSON-lines logs a run writes as it goes (`append_log`, `read_log`).

Loaders of user data (question sets, corpora) raise their own `UserError` subclass; pass it as
`error`, so that a caller catching that class keeps working.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError


def _existing(path: str | Path, error: type[Exception]) -> Path:
    path = Path(path)
    if path.is_dir():
        raise error(f"{path}: is a folder; give the file itself")
    if not path.is_file():
        raise error(f"{path}: no such file")
    return path


def read_json(path: str | Path, error: type[Exception] = UserError) -> Any:
    """The JSON document at `path`; a missing file, a folder, bad UTF-8 or bad JSON raises `error`."""
    path = _existing(path, error)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise error(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None


def read_jsonl(path: str | Path, error: type[Exception] = UserError) -> list[tuple[int, Any]]:
    """(line number, value) for each non-blank line of the JSON-lines file at `path`; a line that is
    not JSON raises `error` naming it."""
    path = _existing(path, error)
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                out.append((n, json.loads(line)))
            except json.JSONDecodeError as e:
                raise error(f"{path}: line {n} is not JSON ({e.msg})") from None
    return out


_TAIL_CHUNK = 1 << 16


def _complete_size(fd: int) -> int:
    """The size of the file open at `fd` up to and including its last newline: what precedes a
    torn last line (a record cut off by a kill mid-write)."""
    end = os.fstat(fd).st_size
    pos = end
    while pos > 0:
        start = max(0, pos - _TAIL_CHUNK)
        cut = os.pread(fd, pos - start, start).rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        pos = start
    return 0


def append_log(path: str | Path, record: Any) -> None:
    """Append `record` to the append-only JSON-lines log at `path` (created if missing), whole: a
    torn last line left by a kill mid-write is cut off first, then the record is written as one line
    with its newline, flushed and fsynced. Whatever byte a kill lands on, `read_log` reads the log
    back and loses only the record being written."""
    data = json.dumps(record, ensure_ascii=False).encode() + b"\n"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    try:
        complete = _complete_size(fd)
        if complete < os.fstat(fd).st_size:
            os.ftruncate(fd, complete)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def read_log(path: str | Path, error: type[Exception] = UserError) -> list[Any]:
    """The records of an append-only JSON-lines log a run writes as it goes (`runs.jsonl`, ...): []
    when it does not exist yet. A record counts once its newline is written: bytes after the last
    newline (a record cut off by a kill, a UTF-8 character cut in two included) are dropped, and that
    record is redone; a bad line before them raises `error` naming it."""
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    out = []
    for n, line in enumerate(data[: data.rfind(b"\n") + 1].split(b"\n")[:-1], 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line.decode("utf-8")))
        except UnicodeDecodeError as e:
            raise error(f"{path}: line {n} is not UTF-8 ({e.reason}); remove it to resume") from None
        except json.JSONDecodeError as e:
            raise error(f"{path}: line {n} is not JSON ({e.msg}); remove it to resume") from None
    return out
