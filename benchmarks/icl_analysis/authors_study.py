"""The paper's own models judged by the study's one rule: the rescored released predictions
(`results/authors_rescore.json`, made by `authors_rescore.py`) as the arms of a `core.study.Study`.

    python benchmarks/icl_analysis/authors_study.py --from-git PATH/TO/bare/is-icl-learning

Units: task × split (ID test and the four OOD δ) of the seven binary tasks whose predictions the copy
holds (Hamiltonian's are absent; VM-Sum is graded as a number and has no label floor). The four
models see the same 1,000 items per split, so arms pair per unit. Arms, named before the run:

- methods: each model in modus ponens (bare exemplars) at 5 and at 100 shots; `accuracy` is the
  paper's punished accuracy on the released labels, `accuracy_checked` our parser against the labels
  our checks give (reversal and vending machine; the released ones elsewhere);
- floors: `majority_label` (the authors' training file's most frequent label) and `shot_majority@k`
  (the most frequent label among the first k training items, the exemplars their builders take).

Claims: each model at 100 shots beats both floors; each model at 100 shots beats itself at 5 (the
paper's "accuracy rises with exemplars"). Saves results/authors_study.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from authors_baselines import export_datasets

from _meta import provenance
from iclr26.core import RunContext
from iclr26.core.claim import Claim
from iclr26.core.records import markdown_table
from iclr26.core.study import Arm, Study, Unit, run_study
from iclr26.icl_analysis.corpus import load_authors_splits
from iclr26.icl_analysis.released import MODELS, TASK_FOLDERS, read_predictions

RESULTS = Path(__file__).parent / "results"
TASKS = ("parity", "pattern_matching", "reversal", "stack", "vending_machine", "maze_solve", "maze_complete")
SHOTS = (5, 100)
STYLE = "modus_ponens"


def _unit(task: str, delta: float) -> str:
    return f"{task}/{'ID' if delta == 0 else f'δ={delta:g}'}"


def _majority(labels: list[int]) -> int:
    counts = Counter(labels)
    return max(counts, key=lambda y: (counts[y], -y))  # ties go to the smaller label


def floor_values(repo: Path) -> dict[str, dict[str, float]]:
    """Each floor's accuracy per unit, from the released labels of the split's 1,000 items and the
    authors' training file."""
    root = export_datasets(repo, Path(tempfile.mkdtemp(prefix="icl-authors-")))
    out: dict[str, dict[str, float]] = {"majority_label": {}, **{f"shot_majority@{k}": {} for k in SHOTS}}
    for task in TASKS:
        train = [i.label for i in load_authors_splits(root, task).train]
        guesses = {
            "majority_label": _majority(train),
            **{f"shot_majority@{k}": _majority(train[:k]) for k in SHOTS},
        }
        name = f"predictions/mixtral/{TASK_FOLDERS[task]}/predictions_{STYLE}_100_shot.json"
        blob = subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{name}"], capture_output=True, check=True
        )
        for delta, items in read_predictions(json.loads(blob.stdout), name).items():
            for arm, guess in guesses.items():
                out[arm][_unit(task, delta)] = 100 * sum(p.label == guess for p in items) / len(items)
    return out


def build(rows: list[dict], floors: dict[str, dict[str, float]]) -> Study:
    values: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows:
        if r["task"] in TASKS and r["style"] == STYLE and r["shots"] in SHOTS:
            arm = f"{r['model']}:{STYLE}@{r['shots']}"
            values[(arm, _unit(r["task"], r["delta"]))] = {
                "accuracy": r["paper_punish"],
                "accuracy_checked": r.get("checked_punish", r["ours_punish"]),
            }
    for arm, per_unit in floors.items():
        for unit, v in per_unit.items():
            values[(arm, unit)] = {"accuracy": v, "accuracy_checked": v}
    units = sorted({u for _, u in values})
    arms = [Arm(f"{m}:{STYLE}@{k}", "method") for m in MODELS for k in SHOTS]
    arms += [Arm("majority_label", "floor", floor="majority label")]
    arms += [Arm(f"shot_majority@{k}", "floor", floor="the shot labels' majority") for k in SHOTS]
    what = "paper's punished accuracy %, paired over task × split"
    claims = []
    for m in MODELS:
        top, low = f"{m}:{STYLE}@{SHOTS[-1]}", f"{m}:{STYLE}@{SHOTS[0]}"
        floors_k = ("majority_label", f"shot_majority@{SHOTS[-1]}")
        claims.append(Claim("accuracy", top, floors_k, floor=0.0, label=f"{what}: {MODELS[m]} vs the floors"))
        claims.append(Claim("accuracy", top, (low,), floor_arm="majority_label",
                            label=f"{what}: {MODELS[m]} at {SHOTS[-1]} vs {SHOTS[0]} shots"))  # fmt: skip

    def measure(arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, float]:
        return values.get((arm.name, unit.key), {})

    return Study("icl_analysis_authors", arms, [Unit(u) for u in units], measure, claims=claims,
                 metrics=("accuracy", "accuracy_checked"))  # fmt: skip


def figures(rescore: dict) -> dict:
    """The README's figures from the saved rescore: the workbook agreement, the parser's effect per
    model, the label bugs at ID and the far δ, the stack's format tell and the shuffle check."""
    rows = rescore["splits"]
    parser = {}
    for m in MODELS:
        mine = [r for r in rows if r["model"] == m and r["task"] != "vending_machine_sum"]
        parser[m] = {
            "splits": len(mine),
            **{f: round(statistics.fmean(r[f] for r in mine), 2)
               for f in ("paper_punish", "ours_punish", "paper_drop", "ours_drop", "ours_unparsed")},
        }  # fmt: skip
    bugs = {}
    for b in rescore["label_bugs"]:
        if b["delta"] in (0.0, 0.85):
            bugs.setdefault(b["task"], {}).setdefault(b["model"], {})[f"{b['delta']:g}"] = b
    shuffle = {}
    for p in rescore["shuffle_pairs"]:
        if not p.get("absent"):
            s = shuffle.setdefault(p["model"], {"pairs": 0, "same_blob": 0, "min_same": 5000, "max_same": 0})
            s["pairs"] += 1
            s["same_blob"] += p["same_blob"]
            share = 100 * p["same_reply"] / p["matched"]
            s["min_same"], s["max_same"] = min(s["min_same"], share), max(s["max_same"], share)
    return {
        "workbooks": {
            k: {f: v[f] for f in ("cells", "within_0.05", "within_1")}
            for k, v in rescore["workbooks"].items()
        },
        "absent_files": len(rescore["absent_files"]),
        "parser_effect": parser,
        "label_bugs": bugs,
        "stack_format_tell": rescore["stack_format_tell"],
        "shuffle": shuffle,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from-git", type=Path, required=True, help="a bare git copy of the authors' repository")
    ap.add_argument("--rescore", type=Path, default=RESULTS / "authors_rescore.json")
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/icl_authors_study"))
    a = ap.parse_args()
    if not a.rescore.is_file():
        print(f"error: {a.rescore} is missing; run authors_rescore.py first", file=sys.stderr)
        sys.exit(2)
    rescore = json.loads(a.rescore.read_text())
    study = build(rescore["splits"], floor_values(a.from_git))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "cells.jsonl").unlink(missing_ok=True)  # the values come from the rescore; never stale
    result = run_study(study, RunContext(a.out))
    tables = [{"title": t.title, "columns": t.columns, "rows": t.rows, "caption": t.caption}
              for t in result.report.tables]  # fmt: skip
    checks = [c.__dict__ for c in result.checks]
    found = figures(rescore)
    payload = {**provenance(), "source": str(a.rescore), "tables": tables, "claims": checks, "figures": found}
    out = RESULTS / "authors_study.json"
    out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    for t in result.report.tables:
        print(f"\n{t.title}\n" + markdown_table(t.columns, t.rows))
    for c in result.checks:
        print(f"{c.method} vs {c.baseline}: {c.method_value:.1f} vs {c.baseline_value:.1f} → {c.verdict} "
              f"{[round(x, 1) for x in c.interval or []]} (n={c.n})")  # fmt: skip
    print(json.dumps(found, indent=1, ensure_ascii=False))
    print(f"saved {out}")


if __name__ == "__main__":
    main()
