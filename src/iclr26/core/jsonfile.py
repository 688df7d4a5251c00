"""Reading a user's JSON and JSON-lines files with one-line errors that name the file and the place.

Loaders of user data (question sets, corpora) raise their own `UserError` subclass; pass it as
`error`, so that a caller catching that class keeps working.
"""

from __future__ import annotations

import json
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


def read_log(path: str | Path, error: type[Exception] = UserError) -> list[Any]:
    """The records of an append-only JSON-lines log a run writes as it goes (`runs.jsonl`, ...): [] when
    it does not exist yet; a last line cut off by an interruption is dropped (that record is redone);
    a bad line before the last raises `error` naming it."""
    path = Path(path)
    if not path.exists():
        return []
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    out = []
    for i, line in enumerate(lines):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            if i < len(lines) - 1:
                raise error(f"{path}: line {i + 1} is not JSON ({e.msg}); remove it to resume") from None
    return out
