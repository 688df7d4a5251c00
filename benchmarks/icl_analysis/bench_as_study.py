"""The saved bench sweep (`results/icl_analysis_bench.json`, run before the port to `core.study`)
judged by the study's one rule, without asking the model again, and the README's figures that the
saved table holds but no earlier script computed.

    python benchmarks/icl_analysis/bench_as_study.py [--out runs/benchmarks/icl_bench_study]

1. Every language-model cell of the saved table becomes a line of a fresh run folder's `cells.jsonl`
   (the saved scores; the cell's wall time and token count were not saved, so they are 0 / absent).
   Then `iclr26 run icl_analysis --preset bench --set gpt_tasks= --set baselines=decision_tree,knn`
   resumes from it: the study skips those cells and measures only what needs no model (the two
   baselines and the two floors, on the same splits and items), and judges the claims. The MLP is
   left out: its fits on the 3,000 training items took 1-4 minutes each on the shared machine.
   Saved as `results/icl_analysis_bench_study.json`.
2. From the saved table alone: the per-task means at 5 and 20 shots over the three direct styles and
   over all four (CoT included), the log-prob means, the refusals in all and at 5 shots, and the
   prompts asked (the cells' items). Saved as `results/icl_analysis_bench_figures.json`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance, save_preset_result
from iclr26.core.ledger import CELLS_FILE, CellRecord, append_cell
from iclr26.core.runner import run_system
from iclr26.icl_analysis import SYSTEM
from iclr26.icl_analysis.evaluate import Cell
from iclr26.icl_analysis.prompts import REASONING
from iclr26.icl_analysis.system import _llm_arm, _unit, study

RESULTS = Path(__file__).parent / "results"
DIRECT = ("modus_ponens", "description", "word_salad")


def saved_cells() -> tuple[dict, list[dict]]:
    saved = json.loads((RESULTS / "icl_analysis_bench.json").read_text())
    table = next(t for t in saved["tables"] if t["title"].startswith("Language model"))
    col = {c: i for i, c in enumerate(table["columns"])}
    rows = []
    for r in table["rows"]:
        task, style, shots, delta = r[col["task"]], r[col["style"]], r[col["shots"]], r[col["δ"]]
        row = {"key": Cell(task, style, shots, delta).key, "task": task, "style": style, "shots": shots,
               "delta": delta, "shuffle": False, "punish": r[col["accuracy % (punish)"]],
               "drop": r[col["accuracy % (drop)"]], "failure_rate": r[col["unparsed %"]],
               "refused": r[col["refused"]], "seconds": 0.0}  # fmt: skip
        row["n"] = saved["config"]["reasoning_items"] if style in REASONING else saved["config"]["items"]
        if r[col["log-prob accuracy %"]] is not None:
            row["logprob"] = r[col["log-prob accuracy %"]]
        rows.append(row)
    return saved, rows


def figures(rows: list[dict]) -> dict:
    """The per-task table of the README (5 and 20 shots, ID and the far δ), the refusals, the prompts."""
    deltas = sorted({r["delta"] for r in rows})
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["task"], r["shots"], r["delta"])].append(r)

    def mean(xs: list[float]) -> float | None:
        return round(statistics.fmean(xs), 1) if xs else None

    per_task = {}
    for task in dict.fromkeys(r["task"] for r in rows):
        per_task[task] = {
            f"{k} shots {'ID' if d == 0 else f'δ={d:g}'}": {
                "direct_punish": mean([r["punish"] for r in by[(task, k, d)] if r["style"] in DIRECT]),
                "all_four_punish": mean([r["punish"] for r in by[(task, k, d)]]),
                "direct_logprob": mean([r["logprob"] for r in by[(task, k, d)] if "logprob" in r]),
                "refused": sum(r["refused"] for r in by[(task, k, d)]),
            }
            for k in (5, 20)
            for d in deltas
        }
    return {
        "per_task": per_task,
        "refused_total": sum(r["refused"] for r in rows),
        "refused_by_shots": {k: sum(r["refused"] for r in rows if r["shots"] == k) for k in (0, 5, 20)},
        "prompts": sum(r["n"] for r in rows),
        "cells": len(rows),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/benchmarks/icl_bench_study"))
    args = ap.parse_args()
    saved, rows = saved_cells()
    found = figures(rows)
    (RESULTS / "icl_analysis_bench_figures.json").write_text(
        json.dumps({**provenance(), "source": "results/icl_analysis_bench.json", **found}, indent=1) + "\n"
    )
    overrides = {"gpt_tasks": "", "baselines": "decision_tree,knn"}
    cfg = SYSTEM.config("bench", overrides)
    s = study(cfg, {})
    if args.out.exists():
        raise SystemExit(f"{args.out} exists: give a fresh --out")
    args.out.mkdir(parents=True)
    for r in rows:
        metrics = {"accuracy": r["punish"], **r}
        cell = CellRecord(_llm_arm(r["style"], r["shots"]), _unit(r["task"], r["delta"]), metrics,
                          cfg.seed, 0.0, None, [], s.config_hash())  # fmt: skip
        append_cell(args.out / CELLS_FILE, cell)
    record, run_dir = run_system(SYSTEM, "bench", overrides, out=args.out, llm="embedded")
    if record.llm_usage and record.llm_usage.get("calls"):
        raise SystemExit("the study asked the model again: a saved cell did not match its arm or unit")
    path = save_preset_result(record, run_dir, RESULTS, "icl_analysis", "bench", "study")
    payload = json.loads(path.read_text())
    payload["source"] = "language-model cells: results/icl_analysis_bench.json (" + saved["date"] + ")"
    path.write_text(json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
