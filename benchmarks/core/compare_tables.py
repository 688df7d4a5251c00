"""A system's tables before and after a change, on one preset: the check that a port to `core.study`
left every measured row as it was (issue 58).

    python benchmarks/core/compare_tables.py sci_refine --old-commit 1cf2dbc [--preset smoke]
        [--set field=value ...] [--work runs/compare_sci_refine]

The old code runs from a detached `git worktree` of `--old-commit` (made under `--work`, removed
after), the new from this checkout, each as `python -m iclr26 run SYSTEM` in its own process. Tables
are matched by title, rows by their leading label cells (the cells before the first number), and
cells by column name. Columns that time something (seconds, wall, throughput, ...) are not compared:
the machine is shared and they move run to run. Prints, as markdown, the rows that changed, the rows
and tables the new run adds (floors, the standard table), those it dropped, and both claim checks;
saves `--work/compare.json`. Exits 1 when a row both runs have differs in a compared column.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance

ROOT = Path(__file__).resolve().parents[2]
# a timing column's name: a unit of time or a rate per second as a word ("timeout rate" and
# "second half" are not timings; "wall s", "latency (ms)", "tokens/s" and "time to first token" are)
TIMED = re.compile(
    r"\b(s|ms|min|secs?|seconds|wall|times?|timing|latency|throughput|speed|it/s)\b|/\s*s\b|\bper s\b",
    re.IGNORECASE,
)


def run_preset(tree: Path, system: str, out: Path, preset: str, sets: list[str]) -> dict:
    """`iclr26 run SYSTEM --preset PRESET --set ... --out OUT` with `tree`'s code; its results.json."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    cmd = [sys.executable, "-m", "iclr26", "run", system, "--preset", preset, "--out", str(out)]
    cmd += [x for s in sets for x in ("--set", s)]
    subprocess.run(cmd, env=env, cwd=tree, check=True, stdout=subprocess.DEVNULL)
    return json.loads((out / "results.json").read_text())


def is_number(cell: object) -> bool:
    if isinstance(cell, int | float) and not isinstance(cell, bool):
        return True
    return isinstance(cell, str) and re.fullmatch(r"[-+−]?[\d.]+%?( ± [\d.]+%?)?", cell.strip()) is not None


def label(row: list) -> tuple:
    """The row's leading label cells: those before its first number (at least the first cell)."""
    n = next((i for i, c in enumerate(row) if is_number(c)), len(row))
    return tuple(str(c) for c in row[: max(n, 1)])


def by_title(result: dict) -> dict[str, dict]:
    return {t["title"]: t for t in result["report"]["tables"]}


def compare(old: dict, new: dict) -> dict:
    """Rows changed, added and dropped per table both runs have; tables added and dropped."""
    old_t, new_t = by_title(old), by_title(new)
    tables: dict[str, dict] = {}
    for title in old_t.keys() & new_t.keys():
        o, n = old_t[title], new_t[title]
        shared = [c for c in o["columns"] if c in n["columns"] and not TIMED.search(c)]
        o_rows, n_rows = {label(r): r for r in o["rows"]}, {label(r): r for r in n["rows"]}
        changed = {}
        for key in o_rows.keys() & n_rows.keys():
            was = {c: o_rows[key][o["columns"].index(c)] for c in shared}
            now = {c: n_rows[key][n["columns"].index(c)] for c in shared}
            if was != now:
                changed[" / ".join(key)] = {c: [was[c], now[c]] for c in shared if was[c] != now[c]}
        tables[title] = {
            "compared_columns": shared,
            "not_compared": [c for c in o["columns"] if c not in shared],
            "rows_both": len(o_rows.keys() & n_rows.keys()),
            "changed": changed,
            "added": [" / ".join(k) for k in n_rows if k not in o_rows],
            "dropped": [" / ".join(k) for k in o_rows if k not in n_rows],
        }
    return {
        "tables": tables,
        "tables_added": sorted(new_t.keys() - old_t.keys()),
        "tables_dropped": sorted(old_t.keys() - new_t.keys()),
        "claim_old": old["report"].get("claim_check"),
        "claim_new": new["report"].get("claim_check"),
    }


def claim_line(c: dict | None) -> str:
    if not c:
        return "none"
    means = f"{c.get('method')} {c.get('method_value')} vs {c.get('baseline')} {c.get('baseline_value')}"
    noise = c.get("rule") or f"margin ±{c.get('margin')}"
    return f"{means} → {c.get('verdict')} ({noise})"


def markdown(diff: dict) -> str:
    lines = []
    for title, t in sorted(diff["tables"].items()):
        lines.append(f"- **{title}**: {t['rows_both']} rows in both, {len(t['changed'])} changed")
        lines += [f"  - changed {k}: {v}" for k, v in t["changed"].items()]
        lines += [f"  - added: {', '.join(t['added'])}"] if t["added"] else []
        lines += [f"  - dropped: {', '.join(t['dropped'])}"] if t["dropped"] else []
        lines += [f"  - not compared (timings): {', '.join(t['not_compared'])}"] if t["not_compared"] else []
    lines.append(f"- tables added: {', '.join(diff['tables_added']) or 'none'}")
    lines.append(f"- tables dropped: {', '.join(diff['tables_dropped']) or 'none'}")
    lines.append(f"- claim before: {claim_line(diff['claim_old'])}")
    lines.append(f"- claim after: {claim_line(diff['claim_new'])}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("system")
    ap.add_argument("--old-commit", required=True)
    ap.add_argument("--preset", default="smoke")
    ap.add_argument("--set", action="append", default=[], help="a config override for both runs: field=value")
    ap.add_argument("--work", type=Path, default=None, help="default: runs/compare_SYSTEM")
    ap.add_argument("--save", type=Path, default=None, help="also save the comparison here (a results file)")
    a = ap.parse_args()
    work = (a.work or ROOT / "runs" / f"compare_{a.system}").resolve()
    work.mkdir(parents=True, exist_ok=True)
    tree = work / "old-tree"
    add = ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), a.old_commit]
    subprocess.run(add, check=True, stdout=subprocess.DEVNULL)
    try:
        old = run_preset(tree, a.system, work / "old", a.preset, a.set)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    new = run_preset(ROOT, a.system, work / "new", a.preset, a.set)
    diff = compare(old, new)
    cmd = " ".join(["python benchmarks/core/compare_tables.py", *sys.argv[1:]])
    payload = {**provenance(), "command": cmd, "old_commit": a.old_commit, "preset": a.preset, **diff}
    for path in [work / "compare.json", *([a.save] if a.save else [])]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(payload, indent=1) + "\n")
    print(markdown(diff))
    return 1 if any(t["changed"] for t in diff["tables"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
