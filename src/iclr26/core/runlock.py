"""One run per run folder: `RunFolderLock` holds an exclusive lock on `<run folder>/.lock` for the
whole run, so a second run into the same `--out` stops at once and names the process that holds it,
instead of racing the first on its temporary files, logs and checkpoints.

The lock is `flock` on a file that stays in the folder: the kernel drops it when the holding process
ends, however it ends, so a killed run never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from iclr26.core.errors import UserError

LOCK_FILE = ".lock"


class RunFolderInUse(UserError):
    """Another live process is running into this run folder."""


class RunFolderLock:
    """An exclusive lock on a run folder, taken at construction; `release()` (or the end of the
    `with` block, or of the process) gives it back. The file holds the holder's pid, for the
    message a second run gets."""

    def __init__(self, run_dir: Path | str) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise RunFolderInUse(
                f"{Path(run_dir)} is in use by process {holder} (another run into the same folder); "
                "wait for it to finish, or give another --out"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd: int | None = fd

    def __enter__(self) -> RunFolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        """Give the lock back (the file stays: removing it would let two runs lock two files)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
