"""What the release-file benchmarks share: the file must be named on the command line."""

from __future__ import annotations

import sys

GET = (
    "git -C <bare copy of YuchenFan48/LFQA-E> show HEAD:data/unified_benchmark_zh.json "
    "> /tmp/unified_benchmark_zh.json"
)


def require_data(argv: list[str]) -> None:
    """Exit 2 with one line unless `argv` sets `data=` (the released file: nothing ships with us)."""
    if not any(a.startswith("data=") or a.startswith("--set=data=") for a in argv):
        print(f"error: name the released file: --set data=/tmp/unified_benchmark_zh.json (made by {GET})")
        sys.exit(2)
