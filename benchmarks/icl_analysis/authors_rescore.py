"""Rescore the authors' released predictions (GPT-4 Turbo, GPT-4o, Phi-3.5 MoE, Mixtral) with the
paper's rule, with our parser and against labels our tasks' checks give, and compare with the
authors' own accuracy workbooks.

    python benchmarks/icl_analysis/authors_rescore.py --from-git PATH/TO/bare/is-icl-learning

Reads `predictions/<model>/<Task>/predictions_<style>_<k>_shot.json` for the direct styles (modus
ponens, description, automaton, word salad, APO; the CoT files are mostly absent from the copy and
read by another parser) and `annotations/all_results_no_shuffle_{punished,unpunished}.xlsx`.
Per split: the paper's rule (punish and drop), ours, the released labels' majority (a floor), the
checked labels where a check reads the entry, and, for `--shuffle-pairs`, the share of replies that
equal the `_shuffled` twin's. Nothing is downloaded. Saves results/authors_rescore.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.icl_analysis.released import (
    CHECKED_TASKS,
    DIRECT_STYLES,
    MODELS,
    TASK_FOLDERS,
    checked_label,
    file_name,
    our_score,
    paper_score,
    paper_table,
    read_predictions,
    same_replies,
)

WORKBOOKS = {
    "punished": "annotations/all_results_no_shuffle_punished.xlsx",
    "unpunished": "annotations/all_results_no_shuffle_unpunished.xlsx",
}


class Blobs:
    """Blobs of a bare git copy through one `git cat-file --batch` process."""

    def __init__(self, repo: Path):
        self.repo = repo
        self.proc = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def listing(self, under: str) -> dict[str, str]:
        """{path: blob id} under a folder at HEAD."""
        out = subprocess.run(
            ["git", "-C", str(self.repo), "ls-tree", "-r", "HEAD", under],
            capture_output=True,
            text=True,
            check=True,
        )
        return {line.split("\t", 1)[1]: line.split()[2] for line in out.stdout.splitlines()}

    def read(self, blob: str) -> bytes | None:
        """The blob's bytes, or None when the copy lacks it."""
        self.proc.stdin.write(f"{blob}\n".encode())
        self.proc.stdin.flush()
        head = self.proc.stdout.readline().split()
        if len(head) < 3 or head[1] == b"missing":
            return None
        data = self.proc.stdout.read(int(head[2]))
        self.proc.stdout.read(1)
        return data


def split_row(model: str, task: str, style: str, shots: int, delta: float, items: list) -> dict:
    labels = Counter(p.label for p in items)
    p, o = paper_score(items, task), our_score(items, task)
    row = {
        "model": model, "task": task, "style": style, "shots": shots, "delta": delta, "items": len(items),
        "paper_n": p.n, "paper_punish": round(p.punish, 2), "paper_drop": round(p.drop, 2),
        "ours_punish": round(o.punish, 2), "ours_drop": round(o.drop, 2),
        "ours_unparsed": round(o.failure_rate, 2),
        "majority_label": round(100 * labels.most_common(1)[0][1] / len(items), 2) if items else None,
    }  # fmt: skip
    if task in CHECKED_TASKS:
        c = our_score(items, task, checked=True)
        read = [checked_label(task, q.entry) for q in items]
        row |= {
            "checked_n": c.n,
            "checked_punish": round(c.punish, 2),
            "label_disagree": sum(r is not None and r != q.label for r, q in zip(read, items, strict=True)),
        }
        if task == "vending_machine_sum":  # the paper's target (stated balance added back) vs the balance
            row["label_disagree"] = sum(
                r is not None and r != q for r, q in zip(read, _sum_targets(items), strict=True)
            )
    if task == "stack":  # the OOD format tell: a list repr ("[...]") versus comma-joined operations
        tell = ["[" in str(q.entry) for q in items]
        row["format_rule"] = round(100 * mean(int(t) == q.label for t, q in zip(tell, items, strict=True)), 2)
        row["list_repr_share"] = round(100 * mean(tell), 2)
    return row


def _sum_targets(items: list) -> list[int]:
    from iclr26.icl_analysis.released import tape_sum

    return [tape_sum(str(q.entry)) for q in items]


def rescore(blobs: Blobs, models: list[str], tasks: list[str], styles: list[str]) -> tuple[list, list]:
    rows, absent = [], []
    for model in models:
        for task in tasks:
            folder = f"predictions/{model}/{TASK_FOLDERS[task]}"
            for path, blob in sorted(blobs.listing(folder).items()):
                style, shots, shuffled = file_name(path)
                if shuffled or style not in styles:
                    continue
                data = blobs.read(blob)
                if data is None:
                    absent.append(path)
                    continue
                for delta, items in sorted(read_predictions(json.loads(data), path).items()):
                    rows.append(split_row(model, task, style, shots, delta, items))
            print(f"{model} {task}: {len(rows)} splits", file=sys.stderr, flush=True)
    return rows, absent


def shuffle_pairs(blobs: Blobs, models: list[str], tasks: list[str], shots: list[int]) -> list[dict]:
    out = []
    for model in models:
        for task in tasks:
            listing = blobs.listing(f"predictions/{model}/{TASK_FOLDERS[task]}")
            for k in shots:
                base = f"predictions/{model}/{TASK_FOLDERS[task]}/predictions_modus_ponens_{k}_shot"
                a, b = listing.get(f"{base}.json"), listing.get(f"{base}_shuffled.json")
                da, db = (blobs.read(x) if x else None for x in (a, b))
                if da is None or db is None:
                    out.append({"model": model, "task": task, "shots": k, "absent": True})
                    continue
                total, same = same_replies(read_predictions(json.loads(da)), read_predictions(json.loads(db)))
                out.append({"model": model, "task": task, "shots": k, "matched": total, "same_reply": same,
                            "same_blob": a == b})  # fmt: skip
    return out


def compare(rows: list[dict], table: dict, field: str) -> dict:
    """Our restatement of the paper's rule against the workbook, cell by cell (its figures carry
    one decimal)."""
    diffs = []
    for r in rows:
        key = (r["model"], r["task"], r["style"], r["shots"], r["delta"])
        if key in table:
            diffs.append((abs(r[field] - table[key]), key, r[field], table[key]))
    diffs.sort(reverse=True)
    return {
        "cells": len(diffs),
        "within_0.05": sum(d <= 0.05 + 1e-9 for d, *_ in diffs),
        "within_1": sum(d <= 1 + 1e-9 for d, *_ in diffs),
        "worst": [{"cell": list(k), "ours": o, "workbook": w} for d, k, o, w in diffs[:15]],
    }


def summaries(rows: list[dict]) -> dict:
    """Means the README quotes: per model and style at each shot count over the nine tasks and five
    splits; the label bugs per model and δ; the parser's effect per model."""
    by = defaultdict(list)
    for r in rows:
        by[(r["model"], r["style"], r["shots"])].append(r)
    headline = [
        {"model": m, "style": s, "shots": k, "splits": len(v),
         **{f: round(mean(x[f] for x in v), 2) for f in
            ("paper_punish", "paper_drop", "ours_punish", "ours_drop", "ours_unparsed", "majority_label")}}
        for (m, s, k), v in sorted(by.items())
    ]  # fmt: skip
    labels = defaultdict(list)
    for r in rows:
        if "checked_punish" in r:
            labels[(r["task"], r["model"], r["delta"])].append(r)
    label_bugs = [
        {"task": t, "model": m, "delta": d, "splits": len(v),
         "released": round(mean(x["ours_punish"] for x in v), 2),
         "checked": round(mean(x["checked_punish"] for x in v), 2),
         "label_disagree_pct":
             round(100 * sum(x["label_disagree"] for x in v) / sum(x["items"] for x in v), 2)}
        for (t, m, d), v in sorted(labels.items())
    ]  # fmt: skip
    stack = defaultdict(list)
    for r in rows:
        if "format_rule" in r:
            stack[r["delta"]].append(r)
    stack_tell = [
        {"delta": d, "format_rule": v[0]["format_rule"], "list_repr_share": v[0]["list_repr_share"],
         "majority_label": v[0]["majority_label"],
         "models_mean_punish": round(mean(x["paper_punish"] for x in v), 2)}
        for d, v in sorted(stack.items())
    ]  # fmt: skip
    return {"headline": headline, "label_bugs": label_bugs, "stack_format_tell": stack_tell}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from-git", type=Path, required=True, help="a bare git copy of the authors' repository")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--tasks", default=",".join(TASK_FOLDERS))
    ap.add_argument("--styles", default=",".join(DIRECT_STYLES))
    ap.add_argument("--shuffle-shots", default="5,100", help="modus ponens shot counts for the shuffle check")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "authors_rescore.json")
    a = ap.parse_args()
    models, tasks, styles = (x.split(",") for x in (a.models, a.tasks, a.styles))
    for name, allowed, values in (("model", MODELS, models), ("task", TASK_FOLDERS, tasks),
                                  ("style", DIRECT_STYLES, styles)):  # fmt: skip
        bad = [v for v in values if v not in allowed]
        if bad:
            print(f"error: unknown {name} {bad[0]!r}; have {', '.join(allowed)}", file=sys.stderr)
            sys.exit(2)
    if not (a.from_git / "HEAD").is_file() and not (a.from_git / ".git").exists():
        print(f"error: {a.from_git} is not a git copy of the authors' repository", file=sys.stderr)
        sys.exit(2)
    blobs = Blobs(a.from_git)
    rows, absent = rescore(blobs, models, tasks, styles)
    workbooks = {}
    for mode, path in WORKBOOKS.items():
        listing = blobs.listing(path)
        data = blobs.read(listing[path]) if path in listing else None
        if data is not None:
            field = "paper_punish" if mode == "punished" else "paper_drop"
            workbooks[mode] = compare(rows, paper_table(data), field)
    shots = [int(k) for k in a.shuffle_shots.split(",") if k]
    head = subprocess.run(["git", "-C", str(a.from_git), "rev-parse", "HEAD"], capture_output=True, text=True)
    result = {
        **provenance(),
        "authors_commit": head.stdout.strip(),
        "absent_files": absent,
        "workbooks": workbooks,
        "shuffle_pairs": shuffle_pairs(blobs, models, tasks, shots),
        **summaries(rows),
        "splits": rows,
    }
    a.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("splits", "headline")}, indent=1)[:6000])


if __name__ == "__main__":
    main()
