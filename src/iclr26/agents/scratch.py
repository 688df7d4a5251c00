"""Host scratch folders that a killed run does not leave behind.

A run's sandboxes, tmux sockets and completion folders are made by `scratch_dir(prefix)` under
`<tmp>/iclr26-<uid>/<pid>/`, one folder per live process. SIGKILL gives a process no chance to
clean up, so the first `scratch_dir` of every process removes the folders of processes that no
longer exist (`sweep`). The owner is read from the folder's *name* in a folder only the caller may
write (0711: the sandbox uid can pass through to the sandbox folder it was given, never list or
create), so nothing an agent writes decides what the host removes. A pid reused by another process
only delays the sweep of its folder.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from pathlib import Path


class _Swept:
    """The pid whose first `process_dir` swept (a forked child has another pid, so it sweeps again)."""

    lock = threading.Lock()
    by: int | None = None


_SWEPT = _Swept()


def scratch_root() -> Path:
    """`<tmp>/iclr26-<uid>`: ours alone (refused when another user owns it or may write it)."""
    root = Path(tempfile.gettempdir()) / f"iclr26-{os.geteuid()}"
    _own_dir(root)
    return root


def _own_dir(path: Path) -> None:
    """Create `path` (0711), or check that the one there is a real folder of ours no one else may write."""
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o711)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise RuntimeError(
            f"{path} is not a folder of uid {os.geteuid()} that only it may write "
            f"({stat.filemode(st.st_mode)}, uid {st.st_uid}); remove it"
        )
    os.chmod(path, 0o711)  # mkdir's mode is cut by the umask


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner(name: str) -> tuple[int, str] | None:
    """(the pid a scratch entry belongs to, the process folder's name): `<pid>` is its own, and
    `.<pid>-<name>` is a sweep's claim of `<name>`; None for any other name."""
    head, _, folder = name[1:].partition("-") if name.startswith(".") else (name, "", name)
    return (int(head), folder) if head.isdigit() and folder else None


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the folders of processes that are gone; returns what was removed.

    Each dead folder is first claimed by an atomic rename to `.<our pid>-<name>`, so processes that
    sweep at once (pytest-xdist workers, a pool) never remove the same tree; a claim whose sweeper
    was killed belongs to a dead pid and is claimed again.
    """
    from iclr26.agents.sandbox import _rmtree

    root = root or scratch_root()
    removed = []
    for folder in root.iterdir():
        owner = _owner(folder.name)
        if owner is None or owner[0] == os.getpid() or _alive(owner[0]):
            continue
        if not folder.is_dir() or folder.is_symlink():
            continue
        claim = root / f".{os.getpid()}-{owner[1]}"
        try:
            folder.rename(claim)
        except OSError:
            continue  # another sweep claimed it first
        _rmtree(claim)
        removed.append(folder)
    return removed


def process_dir() -> Path:
    """`<tmp>/iclr26-<uid>/<pid>` (0711), swept of dead processes' folders on first use."""
    root = scratch_root()
    with _SWEPT.lock:
        if _SWEPT.by != os.getpid():
            _SWEPT.by = os.getpid()
            sweep(root)
    mine = root / str(os.getpid())
    _own_dir(mine)
    return mine


def scratch_dir(prefix: str) -> Path:
    """A fresh 0700 folder `prefix...` in this process's scratch folder (as `tempfile.mkdtemp`)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=process_dir()))


__all__ = ["process_dir", "scratch_dir", "scratch_root", "sweep"]
