"""Run a script or module under torchrun from a test: `python -m torch.distributed.run --standalone
--nproc_per_node=N ...` with output captured and stdin closed (the DDP tests of several systems)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def torchrun(
    *args: str | Path, nproc: int = 2, timeout: float = 300, **kwargs
) -> subprocess.CompletedProcess:
    """`args` is a script path with its arguments, or `-m module ...`; `kwargs` go to subprocess.run
    (cwd, env)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    return subprocess.run(
        [*cmd, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        **kwargs,
    )
