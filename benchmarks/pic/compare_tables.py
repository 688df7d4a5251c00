"""Run pic's preset before and after its port to `core.study` and compare the tables.

    python benchmarks/pic/compare_tables.py [--preset smoke] [--set seeds=3] [--old-commit c305694]
        [--work runs/pic_compare]

The old code runs from a `git worktree` of `--old-commit` (made under `--work` and removed after), the new
from this checkout, each as `python -m iclr26 run pic` in its own process, into `--work/old` and
`--work/new`. The script prints, as markdown: the normalized-score rows of every algorithm side by side
(they must be equal: the same seeds, the same training), the rows the new table adds (the floors), the
throughput table's algorithms (timings differ run to run, so only the rows are compared), and the claim
check before and after (the one claim rule may change its verdict). It exits 1 when an algorithm's row
differs, and saves the comparison as `--work/compare.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from iclr26.core.records import ClaimCheck

ROOT = Path(__file__).resolve().parents[2]


def run_preset(tree: Path, out: Path, preset: str, sets: list[str]) -> dict:
    """`iclr26 run pic --preset PRESET --set ... --out OUT` with `tree`'s code; its results.json."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    cmd = [sys.executable, "-m", "iclr26", "run", "pic", "--preset", preset, "--out", str(out)]
    cmd += [x for s in sets for x in ("--set", s)]
    subprocess.run(cmd, env=env, cwd=tree, check=True, stdout=subprocess.DEVNULL)
    return json.loads((out / "results.json").read_text())


def compare(old: dict, new: dict) -> dict:
    """The differences between two pic results: algorithm rows, added rows, speed rows, claim checks."""
    old_t, new_t = old["report"]["tables"][0], new["report"]["tables"][0]
    old_rows = {(r[0], r[1]): r for r in old_t["rows"]}
    new_rows = {(r[0], r[1]): r for r in new_t["rows"]}
    changed = {f"{k[0]} {k[1]}": {"old": old_rows[k], "new": new_rows.get(k)} for k in old_rows
               if new_rows.get(k) != old_rows[k]}  # fmt: skip
    added = [new_rows[k] for k in new_rows if k not in old_rows]
    speed = (
        [r[0] for r in old["report"]["tables"][1]["rows"]],
        [r[0] for r in new["report"]["tables"][1]["rows"]],
    )
    return {
        "columns_equal": old_t["columns"] == new_t["columns"],
        "changed_rows": changed,
        "added_rows": added,
        "speed_algorithms_equal": speed[0] == speed[1],
        "claim_old": old["report"]["claim_check"],
        "claim_new": new["report"]["claim_check"],
    }


def markdown(diff: dict) -> str:
    def claim(c: dict | None) -> str:
        if c is None:
            return "none"
        check = ClaimCheck(**c)  # a record from before the study: the margin rule's verdict
        noise = check.rule or f"margin ±{check.margin:.4g}"
        means = f"{check.method} {check.method_value:.4g} vs {check.baseline} {check.baseline_value:.4g}"
        return f"{means} → {check.verdict} ({noise})"

    lines = [
        f"- columns equal: {diff['columns_equal']}",
        f"- algorithm rows changed: {len(diff['changed_rows'])}"
        + "".join(f"\n  - {k}: {v['old']} → {v['new']}" for k, v in diff["changed_rows"].items()),
        f"- rows added (floors): {', '.join(str(r[1]) for r in diff['added_rows']) or 'none'}",
        f"- throughput table: same algorithms {diff['speed_algorithms_equal']} (timings not compared)",
        f"- claim before: {claim(diff['claim_old'])}",
        f"- claim after: {claim(diff['claim_new'])}",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="smoke")
    ap.add_argument("--set", action="append", default=[], help="a config override for both runs: field=value")
    ap.add_argument("--old-commit", default="c305694")
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "pic_compare")
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    tree = (a.work / "old-tree").resolve()
    add = ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), a.old_commit]
    subprocess.run(add, check=True, stdout=subprocess.DEVNULL)
    try:
        old = run_preset(tree, (a.work / "old").resolve(), a.preset, a.set)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    new = run_preset(ROOT, (a.work / "new").resolve(), a.preset, a.set)
    diff = compare(old, new)
    (a.work / "compare.json").write_text(json.dumps(diff, indent=2) + "\n")
    print(markdown(diff))
    return 1 if diff["changed_rows"] or not diff["columns_equal"] else 0


if __name__ == "__main__":
    sys.exit(main())
