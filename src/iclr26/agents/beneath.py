"""The host's reads and writes under a folder an agent's process can change (a ScienceBoard task's
folder, which the app writes): every step of the path is opened relative to the one before, without
following a link, so a link the agent swaps in anywhere on the way, even after a check, is refused
instead of followed out of the folder. Reads are bounded and only of regular files."""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from pathlib import Path

MAX_READ_BYTES = 64 * 1024**2
"""The most the host reads of one file under such a folder."""


class NotBeneath(ValueError):
    """A path that leaves its folder, passes through a link, or names something not a regular file."""


def parts_beneath(path: str) -> list[str]:
    """The steps of `path` (absolute or relative, read as relative to the folder) after removing `.`
    and folding `x/..`; a path that climbs above the folder is refused."""
    norm = posixpath.normpath(str(path).lstrip("/") or ".")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise NotBeneath(f"path {path!r} leaves its folder")
    if not parts:
        raise NotBeneath(f"path {path!r} names no file inside its folder")
    return parts


def _folder_fd(root: str | os.PathLike[str], steps: list[str], make: bool) -> int:
    """An fd for the folder `root`/`steps...`, each step opened without following a link; with
    `make`, a missing step is created (mode 0755)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for step in steps:
            try:
                nxt = os.open(step, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not make:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: the open checks what it is
                    os.mkdir(step, 0o755, dir_fd=fd)
                nxt = os.open(step, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd
    except (NotADirectoryError, OSError) as e:
        os.close(fd)
        if isinstance(e, FileNotFoundError):
            raise
        raise NotBeneath(f"{'/'.join(steps)}: a link or a non-folder on the way ({e.strerror})") from None


def read_beneath(root: str | os.PathLike[str], path: str, max_bytes: int = MAX_READ_BYTES) -> bytes:
    """The bytes of the regular file `path` under `root`; FileNotFoundError when it is absent,
    `NotBeneath` when it is a link, a FIFO, a folder, or more than `max_bytes`."""
    *folders, name = parts_beneath(path)
    dir_fd = _folder_fd(root, folders, make=False)
    try:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise NotBeneath(f"{path}: a link or not a file ({e.strerror})") from None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotBeneath(f"{path}: not a regular file")
        if st.st_size > max_bytes:
            raise NotBeneath(f"{path}: {st.st_size} bytes, more than the {max_bytes} read")
        chunks, left = [], max_bytes + 1
        while left > 0 and (data := os.read(fd, min(left, 1 << 20))):
            chunks.append(data)
            left -= len(data)
        if left <= 0:
            raise NotBeneath(f"{path}: grew past the {max_bytes} bytes read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_beneath(root: str | os.PathLike[str], path: str, data: bytes) -> Path:
    """Write `data` to the file `path` under `root` (its folders made as needed), replacing a regular
    file there; a link or other non-file in its place, or on the way, is refused (`NotBeneath`).
    Returns where it wrote, for messages."""
    *folders, name = parts_beneath(path)
    dir_fd = _folder_fd(root, folders, make=True)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
        except OSError as e:
            raise NotBeneath(f"{path}: a link or not a file ({e.strerror})") from None
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotBeneath(f"{path}: not a regular file")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return Path(root, *folders, name)
