"""Atomic file writes: a crash mid-write leaves the previous file intact."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch


def atomic_write(path: Path | str, write: Callable[[IO[bytes]], Any]) -> None:
    """Call `write(f)` on a temporary binary file beside `path`, flush it to disk, then rename it
    over `path`; on any failure the temporary file is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _fsync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_text_atomic(path: Path | str, text: str) -> None:
    """`atomic_write` of UTF-8 text."""
    atomic_write(path, lambda f: f.write(text.encode()))


def save_checkpoint(path: Path | str, state: dict[str, Any]) -> None:
    """torch.save `state` atomically (see `atomic_write`)."""
    atomic_write(path, lambda f: torch.save(state, f))
