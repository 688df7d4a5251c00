"""The paper's baselines (decision tree, kNN, MLP with the authors' encodings) on the authors'
released corpora, against the numbers they report, and the same baselines on our generated splits.

    python benchmarks/icl_analysis/authors_baselines.py --data PATH/TO/is-icl-learning/datasets
    python benchmarks/icl_analysis/authors_baselines.py --from-git PATH/TO/bare/repo   # exports datasets/

Nothing is downloaded: the corpora come from a local copy of the authors' repository
(adewynter/is-icl-learning). Saves results/authors_baselines.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.icl_analysis.baselines import ANCHORS, fit_baseline
from iclr26.icl_analysis.corpus import load_authors_splits
from iclr26.icl_analysis.tasks import TASKS, make_splits


def export_datasets(repo: Path, dest: Path) -> Path:
    """Write the `datasets/` files of the bare git repository `repo` (HEAD) under `dest`."""
    names = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD", "datasets/"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    for name in names:
        if "shuffled_labels" in name:
            continue
        blob = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{name}"], capture_output=True)
        if blob.returncode == 0:  # files absent from a partial copy are skipped
            out = dest / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(blob.stdout)
    return dest / "datasets"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", type=Path, help="the authors' datasets/ folder")
    src.add_argument("--from-git", type=Path, help="a bare git copy of the authors' repository")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "authors_baselines.json")
    a = ap.parse_args()
    root = a.data if a.data else export_datasets(a.from_git, Path(tempfile.mkdtemp(prefix="icl-authors-")))
    rows = []
    for (task, kind), (anchor_id, anchor_ood) in ANCHORS.items():
        start = time.perf_counter()
        theirs = load_authors_splits(root, task)
        b = fit_baseline(task, kind, theirs.train)
        their_ood = b.accuracy(theirs.ood[0.85]) if 0.85 in theirs.ood else None
        ours = make_splits(TASKS[task], a.seed, n_train=3000, n_test=2000, n_ood=3000, deltas=(0.85,))
        o = fit_baseline(task, kind, ours.train)
        rows.append({
            "task": task, "baseline": kind,
            "anchor_id": anchor_id, "theirs_id": round(b.accuracy(theirs.test), 2),
            "anchor_ood_0.85": anchor_ood,
            "theirs_ood_0.85": None if their_ood is None else round(their_ood, 2),
            "ours_id": round(o.accuracy(ours.test), 2), "ours_ood_0.85": round(o.accuracy(ours.ood[0.85]), 2),
            "seconds": round(time.perf_counter() - start, 1),
        })  # fmt: skip
        r = rows[-1]
        shown_ood = r["theirs_ood_0.85"] if their_ood is not None else "(no OOD file)"
        ours_text = f"our data {r['ours_id']:6.2f} → {r['ours_ood_0.85']:6.2f}"
        print(f"{task:17s} {kind:14s} anchor {anchor_id:5.1f} → {anchor_ood:5.1f} | their data "
              f"{r['theirs_id']:6.2f} → {shown_ood} | {ours_text}")  # fmt: skip
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({**provenance(), "rows": rows}, indent=1) + "\n")
    print(f"saved {a.out}")


if __name__ == "__main__":
    main()
