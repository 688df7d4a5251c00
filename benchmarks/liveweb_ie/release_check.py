"""The README's release figures: the shape of our generated release and, given its path, of the public
LiveWeb-IE release (queries per type, groups, pages), and how its ground-truth files read.

    python benchmarks/liveweb_ie/release_check.py                           # our five sites at v0
    python benchmarks/liveweb_ie/release_check.py --release /path/to/LiveWeb_IE   # and the public one

Saves results/release_check.json. The public release is read by path and never copied.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.liveweb_ie.release import load_release, read_groundtruth, write_release
from iclr26.liveweb_ie.sites import make_sites


def shape(root: Path) -> dict:
    """Counts of a release, and what reading every ground-truth file met."""
    rel = load_release(root)
    files = sorted({rel.root / r.label[a] for r in rel.records for a in r.attribute})
    warnings: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    handler = Keep()
    logging.getLogger("iclr26.liveweb_ie.release").addHandler(handler)
    try:
        values = sum(len(v) for f in files for v in read_groundtruth(f).values())
    finally:
        logging.getLogger("iclr26.liveweb_ie.release").removeHandler(handler)
    continued = [
        f.name
        for f in files
        if any(ln.strip() and not ln.startswith('"') for ln in f.read_text().splitlines()[2:])
    ]
    pages = sorted(len(u) for u in rel.groups.values())
    return {
        "queries": len(rel.records),
        "by_type": rel.by_type(),
        "groups": len(rel.groups),
        "pages_median": pages[len(pages) // 2],
        "pages_max": pages[-1],
        "label_files": len(files),
        "values": values,
        "files_with_continued_lines": continued,
        "count_mismatches": warnings,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", type=Path, default=None, help="the public release's LiveWeb_IE folder")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "release_check.json")
    args = ap.parse_args()
    out: dict = {**provenance()}
    with tempfile.TemporaryDirectory() as tmp:
        out["ours_v0"] = shape(write_release(make_sites(0), Path(tmp), 0))
    print("ours:", json.dumps(out["ours_v0"]))
    if args.release is not None:
        out["public"] = shape(args.release)
        print("public:", json.dumps(out["public"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
