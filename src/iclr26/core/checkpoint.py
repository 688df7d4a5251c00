"""Atomic file writes (a crash mid-write leaves the previous file intact), and checkpoints that
are loaded as tensors and plain data only, never as code."""

from __future__ import annotations

import contextlib
import os
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch

from iclr26.core.errors import UserError


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


def load_checkpoint(path: Path | str, map_location: Any = None) -> Any:
    """`torch.load(path, weights_only=True)`: tensors, dicts, lists, tuples, strings and numbers only.

    A run folder may be shared, so a checkpoint in it is data, never code: a file that holds any
    other pickled object (one whose unpickling would run code) is refused with a `UserError`
    naming it, and nothing in it is executed.
    """
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        raise UserError(
            f"{path} holds more than tensors and plain data (a pickled object, which could run code), "
            "so it is not loaded; delete it to start afresh"
        ) from e
