"""`python -m tests.faults.reaper CMD...`: run CMD as our child with this process as a child
subreaper, so that every process CMD starts stays a descendant of ours, daemons included (a tmux
server, a session bus, a setsid'd app). It prints `pid <CMD's pid>`, forwards nothing, prints
`rc <status>` when CMD ends, then waits for its stdin to close and kills what is left (so a failing
test leaves nothing behind). `descendants(pid)` lists the live processes under a pid."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def _stat(pid: str) -> tuple[int, str] | None:
    """(parent pid, state) of `pid`, None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[0]


def descendants(root: int) -> dict[int, str]:
    """The live (not zombie) processes under `root`, each with its command line."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(entry)) is not None and st[1] != "Z":
            parent[int(entry)] = st[0]
    out, frontier = {}, {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in out}
        for p in frontier:
            try:
                out[p] = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                out[p] = "?"
    return out


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=sys.stderr)
    print(f"pid {proc.pid}", flush=True)
    print(f"rc {proc.wait()}", flush=True)
    sys.stdin.read()
    for pid in descendants(os.getpid()):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    main()
