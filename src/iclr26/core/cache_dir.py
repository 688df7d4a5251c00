"""Where iclr26 keeps what it derives once per machine (converted checkpoints, extracted models)."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_dir() -> Path:
    """`$ICLR26_CACHE`, else `$XDG_CACHE_HOME/iclr26`, else `~/.cache/iclr26`."""
    if os.environ.get("ICLR26_CACHE"):
        return Path(os.environ["ICLR26_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "iclr26"
