"""Checks of the authors' released files that the README quotes: does a "shuffled" run change
Mixtral's replies, and how many released labels disagree with a direct check of the string.

    python benchmarks/icl_analysis/authors_checks.py --from-git PATH/TO/bare/is-icl-learning

1. `predictions/mixtral/PARITY/predictions_modus_ponens_5_shot.json` against its `_shuffled` twin:
   items matched by split, index and entry; the share whose reply is the same text.
2. The released vending-machine and reversal corpora (`corpus.load_authors_splits`): the share of
   items whose label differs from our task's `check` of the entry (their 5% label noise included),
   per split; a file absent from the copy is reported as absent.

Nothing is downloaded. Saves results/authors_checks.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from authors_baselines import export_datasets

from _meta import provenance
from iclr26.icl_analysis.corpus import load_authors_splits
from iclr26.icl_analysis.tasks import TASKS

PREDICTIONS = "predictions/mixtral/PARITY/predictions_modus_ponens_5_shot{}.json"


def git_json(repo: Path, name: str) -> dict:
    out = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{name}"], capture_output=True, check=True)
    return json.loads(out.stdout)


def shuffled_replies(repo: Path) -> dict:
    plain, shuffled = (git_json(repo, PREDICTIONS.format(s)) for s in ("", "_shuffled"))
    same = total = 0
    for split, items in plain.items():
        other = {(r["Index"], r["Entry"]): r["Response"] for r in shuffled.get(split, [])}
        for r in items:
            key = (r["Index"], r["Entry"])
            if key in other:
                total += 1
                same += other[key] == r["Response"]
    return {"files": [PREDICTIONS.format(s) for s in ("", "_shuffled")], "matched_items": total,
            "same_reply": same}  # fmt: skip


def label_checks(root: Path) -> dict:
    out = {}
    for task in ("vending_machine", "reversal"):
        splits = load_authors_splits(root, task)
        check = TASKS[task].check
        parts = {
            "train": splits.train,
            "test": splits.test,
            **{f"ood δ={d:g}": v for d, v in splits.ood.items()},
        }
        rows = {}
        for name, items in parts.items():
            bad = sum(check(i.entry) != i.label for i in items)
            rows[name] = {
                "items": len(items),
                "disagree": bad,
                "disagree_pct": round(100 * bad / len(items), 2),
            }
        out[task] = rows | ({} if splits.ood else {"ood": "absent from the copy"})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from-git", type=Path, required=True, help="a bare git copy of the authors' repository")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "authors_checks.json")
    a = ap.parse_args()
    root = export_datasets(a.from_git, Path(tempfile.mkdtemp(prefix="icl-authors-")))
    head = subprocess.run(["git", "-C", str(a.from_git), "rev-parse", "HEAD"], capture_output=True, text=True)
    result = {
        **provenance(),
        "authors_commit": head.stdout.strip(),
        "shuffled_replies": shuffled_replies(a.from_git),
        "label_checks": label_checks(root),
    }
    a.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
