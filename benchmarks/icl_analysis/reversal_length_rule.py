"""A rule that reads no exemplar on the reversal task: label 1 when the two sides of `w#v` have as
many tokens, else 0 (a deletion in a negative shortens v). Scored on the first 200 items of each
split the reversal GPT grid scores (seed 0, the bench sizes), beside that grid's gpt@10.

    python benchmarks/icl_analysis/reversal_length_rule.py

Saves results/reversal_length_rule.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.icl_analysis import SYSTEM
from iclr26.icl_analysis.tasks import TASKS, make_splits
from iclr26.icl_analysis.tasks.strings import split_tokens

DELTAS = (0.0, 0.2, 0.45, 0.65, 0.85)
ITEMS = 200


def same_length(entry: str) -> int:
    """1 when both sides of `w#v` hold as many tokens."""
    left, _, right = entry.partition("#")
    a, b = split_tokens(left) or [], split_tokens(right) or []
    return int(len(a) == len(b))


def main() -> None:
    cfg = SYSTEM.config("bench", {"deltas": ",".join(map(str, DELTAS))})
    splits = make_splits(TASKS["reversal"], cfg.seed, n_train=cfg.n_train, n_test=cfg.n_test,
                         n_ood=cfg.n_ood, deltas=cfg.ood_deltas)  # fmt: skip
    rows = {}
    for d in DELTAS:
        items = splits.split(d)[:ITEMS]
        rows[str(d)] = round(100 * sum(same_length(it.shown) == it.label for it in items) / len(items), 1)
    out = Path(__file__).parent / "results" / "reversal_length_rule.json"
    payload = {**provenance(), "items_per_split": ITEMS, "accuracy_%": rows,
               "mean": round(sum(rows.values()) / len(rows), 1)}  # fmt: skip
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print(payload["accuracy_%"], payload["mean"])


if __name__ == "__main__":
    main()
