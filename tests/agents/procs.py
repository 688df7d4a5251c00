"""Process checks shared by the agent tests (is a pid alive, which chromium processes exist)."""

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, IndexError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def chromium_pids() -> set[int]:
    """Live processes named like chromium (its crashpad handlers daemonize out of our group)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and alive(int(entry)):
            try:
                if "chrom" in Path(f"/proc/{entry}/comm").read_text():
                    found.add(int(entry))
            except (FileNotFoundError, ProcessLookupError):  # it exited between listdir and read
                continue
    return found


def all_dead(pids: set[int], within: float = 3.0) -> set[int]:
    """The pids among `pids` still alive after waiting up to `within` seconds."""
    deadline = time.monotonic() + within
    while (still := {p for p in pids if alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return still
