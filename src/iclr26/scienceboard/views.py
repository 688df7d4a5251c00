"""ScienceBoard's own tables, computed from the study's cells: success per domain (with the paper's
rows), app start-up times, per-task verdicts and the model agent's actions; `episodes.jsonl` (the
viewer's format), `episodes.html` and `checks.jsonl` are written from the cells."""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter, defaultdict
from typing import Any

from iclr26.agents import Episode, check_suite, write_episodes, write_html
from iclr26.core import Report, RunContext, Table
from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.records import markdown_table
from iclr26.core.study import StudyResult
from iclr26.scienceboard.config import DOMAINS, ScienceBoardConfig
from iclr26.scienceboard.suite import BuiltTask

DOMAIN_OF = {"KAlgebra": "algebra", "PyMOL": "biochemistry", "ChimeraX": "biochemistry", "GrassGIS": "gis",
             "Celestia": "astronomy", "Stellarium": "astronomy", "TeXstudio": "documents",
             "Lean": "theorem proving"}  # fmt: skip
NAMES = {"algebra": "Algebra", "biochemistry": "Biochem", "gis": "GIS", "astronomy": "Astron",
         "documents": "Doc"}  # fmt: skip
PAPER_ROWS = [
    ["Claude-3.7, screenshot + a11y tree (paper)", 12.90, 41.37, 8.82, 9.09, 18.75, 15.79, "", ""],
    ["GPT-4o, screenshot + a11y tree (paper)", "", "", "", "", "", 14.45, "", ""],
    ["GPT-4o, screenshot only (paper)", "", "", "", "", "", 1.58, "", ""],
]
"""The paper's success rates (%): Algebra / Biochemistry / GIS / Astronomy / Documents / overall."""


def domain_rates(success: dict[str, bool], by_id: dict[str, BuiltTask]) -> dict[str, float]:
    """Success (%) per domain, from each task's outcome."""
    per: dict[str, list[bool]] = defaultdict(list)
    for task_id, ok in success.items():
        per[DOMAIN_OF[by_id[task_id].spec["type"]]].append(ok)
    return {d: 100 * sum(v) / len(v) for d, v in per.items()}


def views(
    cfg: ScienceBoardConfig, by_id: dict[str, BuiltTask], result: StudyResult, ctx: RunContext
) -> Report:
    """ScienceBoard's domain table (every arm, the paper's rows below), app start-up times, per-task
    verdicts, the model agent's actions; the episodes (`episodes.jsonl`, `episodes.html`) and the
    checks' verdicts (`checks.jsonl`) written from the cells."""
    runs = {a.name: [c for c in result.records(a.name) if c.metrics] for a in result.study.arms}
    episodes = {
        name: [Episode.from_json(c.metrics["episode"]) for c in cells] for name, cells in runs.items()
    }
    cols = ["agent", *(NAMES[d] for d in DOMAINS), "overall", "steps / task", "tokens / task"]
    rows: list[list[Any]] = []
    for name, eps in episodes.items():
        rates = domain_rates({e.task_id: e.success for e in eps}, by_id)
        overall = statistics.mean(rates.values()) if rates else float("nan")  # the mean of domain rates
        steps = statistics.mean(len(e.steps) for e in eps) if eps else 0
        tokens = statistics.mean(e.prompt_tokens + e.completion_tokens for e in eps) if eps else 0
        label = eps[0].agent if eps else name
        if sum(bool(e) and e[0].agent == label for e in episodes.values()) > 1:
            label = f"{label} [{name}]"  # two arms, one agent name: the arm tells them apart
        rows.append(
            [label, *(round(rates[d], 1) if d in rates else "" for d in DOMAINS), round(overall, 2),
             round(steps, 1), round(tokens)]
        )  # fmt: skip
    rows += PAPER_ROWS
    caption = (
        f"Observation: {cfg.observation}; {len(by_id)} built-here tasks (PyMOL for ChimeraX, Stellarium for "
        "Celestia); overall is the mean of the domain rates. The floors: always-FAIL passes exactly the "
        "infeasible tasks; random clicks clicks the task's step budget of random points, then says DONE. "
        "The paper's rows use its own 169 tasks on the authors' VM."
    )
    table = Table("Success rate (%) by domain", cols, rows, caption=caption)
    tables = [table]
    print(markdown_table(table.columns, table.rows))
    notes = []
    if episodes.get("oracle") and episodes.get("null"):
        notes.append(f"task set: {check_suite(episodes['oracle'], episodes['null']).describe()}")
    startup: dict[str, list[float]] = defaultdict(list)
    for cells in runs.values():
        for c in cells:
            if c.metrics.get("startup_s"):
                startup[c.metrics["app"]].append(c.metrics["startup_s"])
    if startup:
        up = Table(
            "App start-up (s): launch to a window on screen and the state probe answering",
            ["app", "starts", "median", "max"],
            [[app, len(v), round(statistics.median(v), 2), round(max(v), 2)]
             for app, v in sorted(startup.items())],
        )  # fmt: skip
        print(markdown_table(up.columns, up.rows))
        tables.append(up)
    verdicts = {n: {e.task_id: "pass" if e.success else "fail" for e in eps} for n, eps in episodes.items()}
    per_task = Table(
        "Per task: success by agent",
        ["task", "domain", "kind", *episodes],
        [[tid, DOMAIN_OF[t.spec["type"]], t.kind, *(v.get(tid, "") for v in verdicts.values())]
         for tid, t in by_id.items()],
    )  # fmt: skip
    tables.append(per_task)
    models = [n for n in episodes if n.startswith("llm") and episodes[n]]
    for name in models:
        tables.append(action_table(episodes[name], "" if name == "llm" else name))
    if models:
        shown = [e for n in models for e in episodes[n]]
        write_html(ctx.out_dir / "episodes.html", shown, "the model agent on ScienceBoard")
    if any("found" in c.metrics for cells in runs.values() for c in cells):
        tables.append(grounding_table(runs))
    everything = [e for eps in episodes.values() for e in eps]
    write_episodes(ctx.out_dir / "episodes.jsonl", everything, append=False)  # the viewer's file
    checks = [
        {"agent": n, "task": c.unit, "checks": c.metrics["checks"]} for n, cs in runs.items() for c in cs
    ]
    write_text_atomic(ctx.out_dir / "checks.jsonl", "".join(json.dumps(c) + "\n" for c in checks))
    notes += [f"{name}: {sum(c.wall_s for c in cells):.0f} s wall" for name, cells in runs.items()]
    figures = [p.name for p in sorted(ctx.out_dir.glob("screen_*.png"))]
    return Report(tables=tables, figures=figures, notes=notes)


def grounding_table(runs: dict[str, list[Any]]) -> Table:
    """Per app: the plan's elements the grounding-only agent found in the accessibility tree, those it
    did not, and the tasks it passed."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for c in runs.get("grounding", []):
        row = per[c.metrics["app"]]
        row[0] += c.metrics["found"]
        row[1] += c.metrics["missed"]
        row[2] += int(c.metrics["success"])
        row[3] += 1
    rows = [[app, f, m, f"{s}/{n}"] for app, (f, m, s, n) in sorted(per.items())]
    return Table("The grounding-only agent: the plan's elements found in the accessibility tree",
                 ["app", "elements found", "elements not found", "tasks passed"], rows)  # fmt: skip


def action_table(episodes: list[Episode], arm: str = "") -> Table:
    """What an agent did, over all its turns: clicks (and those at one point, the commonest), commands,
    replies that did not parse and actions the environment could not carry out, and how its episodes
    ended."""
    steps = [s for e in episodes for s in e.steps]
    clicks: Counter[tuple[str, ...]] = Counter()
    for s in steps:
        code = (s.action or {}).get("content") or ""
        for m in re.finditer(r"pyautogui\.(?:click|doubleClick|rightClick)\(([^)]*)\)", code):
            clicks[tuple(x.strip() for x in m.group(1).split(",")[:2])] += 1
    point, at = clicks.most_common(1)[0] if clicks else ((), 0)
    ends = Counter(e.stop_reason for e in episodes)
    commands = sum(len(re.findall(r"^command\(", (s.action or {}).get("content") or "", re.M)) for s in steps)
    rows = [
        ["turns", len(steps)],
        ["click calls", sum(clicks.values())],
        ["command calls", commands],
        [f"click calls at the commonest point ({', '.join(point) or '-'})", at],
        ["replies that did not parse", sum(bool(s.parse_error) for s in steps)],
        ["actions that could not be carried out", sum("invalid_action" in s.info for s in steps)],
        *[[f"episodes ended by {reason}", n] for reason, n in sorted(ends.items())],
    ]
    who = f"The model agent's actions ({arm}" if arm else "The model agent's actions ("
    return Table(f"{who}{', ' if arm else ''}{len(episodes)} episodes)", ["what", "count"], rows)
