"""Done markers: the JSON record of a finished unit of work (a task, a training, a seed) that a
resume trusts instead of redoing the work. `write_done` writes it atomically, so a marker exists only
once it is whole; `read_done` counts an empty, cut-off or otherwise broken one as not done."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from iclr26.core.checkpoint import write_text_atomic

log = logging.getLogger(__name__)


def write_done(path: Path | str, record: dict[str, Any]) -> None:
    """Mark a unit of work done by writing its result `record` (a JSON object) to `path` atomically:
    the marker exists only once it is whole."""
    if not isinstance(record, dict):
        raise TypeError(f"write_done: a done record is a dict, not {type(record).__name__}")
    write_text_atomic(path, json.dumps(record))


def read_done(path: Path | str) -> dict[str, Any] | None:
    """The result recorded by `write_done` at `path`, or None when that work is not done: no file, or
    a marker that is not a whole JSON object (empty, cut off, not UTF-8), which is then redone."""
    path = Path(path)
    try:
        record = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (UnicodeDecodeError, json.JSONDecodeError):
        record = None
    if not isinstance(record, dict):
        log.warning("%s: not a whole done record; that work is redone", path)
        return None
    return record
