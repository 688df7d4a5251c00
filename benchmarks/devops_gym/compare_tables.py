"""The category table before and after a change, on one preset: runs `iclr26 run devops_gym --preset
PRESET` from two source trees and checks that the oracle and null rows are the same (issue 58: the
port to `core.study` must leave them unchanged; the rows it adds, the floor's, are listed apart).

    python benchmarks/devops_gym/compare_tables.py OLD_TREE [NEW_TREE] [--preset smoke]

e.g. `git worktree add /tmp/old 1cf2dbc` and `python benchmarks/devops_gym/compare_tables.py /tmp/old`.
Exits 1 when a row shared by both differs, or the oracle or null row is missing from either."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
TITLE = "Success by category"
MUST_MATCH = ("oracle (reference solution)", "null (does nothing)")


def category_rows(tree: Path, preset: str, out: Path) -> dict[str, list]:
    """The category table's rows by agent, from a run of `tree`'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    argv = [sys.executable, "-m", "iclr26", "run", "devops_gym", "--preset", preset, "--out", str(out)]
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    tables = json.loads((out / "results.json").read_text())["report"]["tables"]
    table = next(t for t in tables if t["title"].startswith(TITLE))
    return {row[0]: row for row in table["rows"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path, help="the source tree before (a git worktree)")
    ap.add_argument(
        "new", type=Path, nargs="?", default=HERE, help="the source tree after (default: this one)"
    )
    ap.add_argument("--preset", default="smoke")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = category_rows(args.old.resolve(), args.preset, Path(tmp) / "old")
        new = category_rows(args.new.resolve(), args.preset, Path(tmp) / "new")
    bad = [a for a in MUST_MATCH if a not in old or a not in new]
    for agent in sorted(old.keys() | new.keys()):
        was, now = old.get(agent), new.get(agent)
        status = "new" if was is None else "gone" if now is None else "same" if was == now else "DIFFERS"
        bad += [agent] if status == "DIFFERS" else []
        print(f"{status}: before {was} / after {now}")
    print(f"rows that differ or are missing: {bad}" if bad else "the rows both have are the same")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
