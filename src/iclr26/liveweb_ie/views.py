"""LiveWeb-IE's own tables and figures, computed from the study's cells: F1 by method and version, by
query type, per query, the F1-by-type figure and a VGS region with its marks; `pages.jsonl` (every
page's score) and `wrappers.json` (what each method made) are written beside them."""

from __future__ import annotations

import json
import shutil
import statistics
from collections import defaultdict
from dataclasses import asdict
from typing import Any

from iclr26.core import Report, RunContext, Table
from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.records import markdown_table
from iclr26.core.study import StudyResult
from iclr26.liveweb_ie.config import LiveWebConfig
from iclr26.liveweb_ie.evaluate import PageResult, f1_table
from iclr26.liveweb_ie.release import TYPES
from iclr26.liveweb_ie.sites import layout_of

PAPER_F1 = {  # GPT-4o, overall F1 on LiveWeb-IE (and VGS by type)
    "CoT": 24.60,
    "AutoScraper": 26.76,
    "VGS": 48.58,
}
PAPER_VGS_TYPES = (65.87, 46.35, 45.38, 41.50)


def views(cfg: LiveWebConfig, result: StudyResult, ctx: RunContext) -> Report:
    """The F1 tables (by method and version, by type, per query) and figures from the cells;
    `pages.jsonl` (every page's score) and `wrappers.json` (what each method made) written beside."""
    results, names = _pages(result)
    write_text_atomic(ctx.out_dir / "pages.jsonl", "".join(json.dumps(asdict(r)) + "\n" for r in results))
    saved: dict[str, Any] = defaultdict(dict)
    for arm in result.study.arms:
        for c in result.records(arm.name):
            m = c.metrics
            extra = {k: m[k] for k in ("stages", "replies") if k in m}
            wrapper = {
                **m["wrapper"],
                "seconds": m["build_s"],
                "tokens": m["build_tokens"],
                "error": m["error"],
            }
            saved[m["method"]][c.unit] = {**wrapper, **extra}
    write_text_atomic(ctx.out_dir / "wrappers.json", json.dumps(saved, indent=1))
    return _report(cfg, ctx, result, names, results)


def _pages(result: StudyResult) -> tuple[list[PageResult], list[str]]:
    """Every (method, query, page, version) score from the cells, and the methods' names in arm order."""
    types = {u.key: u.params["type"] for u in result.study.units}
    out, names = [], []
    for arm in result.study.arms:
        cells = [c for c in result.records(arm.name) if c.metrics]
        if cells:
            names.append(cells[0].metrics["method"])
        for c in cells:
            m = c.metrics["method"]
            out += [
                PageResult(m, c.unit, types[c.unit], v, u, p, r, f) for v, u, p, r, f in c.metrics["pages"]
            ]
    return out, names


def _report(
    cfg: LiveWebConfig, ctx: RunContext, result: StudyResult, names: list[str], results: list[PageResult]
) -> Report:
    vs = list(cfg.versions)
    f1 = f1_table(results, names, vs)
    cost: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for arm in result.study.arms:
        for c in result.records(arm.name):
            if c.metrics:
                cost[c.metrics["method"]].append(c.metrics)
    cols = (
        ["method"]
        + [f"F1 v{v} ({layout_of(v).version})" for v in vs]
        + ["change first to last (%)", "build s / query", "tokens / query"]
    )
    rows = []
    for m in names:
        first, last = f1[m][vs[0]]["overall"], f1[m][vs[-1]]["overall"]
        change = 100 * (last - first) / first if first else float("nan")
        bs = cost[m]
        rows.append(
            [m]
            + [_fmt(f1[m][v]["overall"]) for v in vs]
            + [
                _fmt(change),
                round(sum(b["build_s"] for b in bs) / max(1, len(bs)), 2),
                round(sum(b["build_tokens"] for b in bs) / max(1, len(bs))),
            ]
        )
    for m, v in PAPER_F1.items():
        rows.append([f"{m} (paper, GPT-4o, live)", v] + [""] * (len(vs) - 1) + ["", "", ""])
    overall = Table(
        "F1 (%) by method, before and after the sites drift",
        cols,
        rows,
        caption=f"Wrappers made on each group's first page at v{vs[0]}; v1: content drift; "
        "v2: layout v2 (+ content); v4: layout v3. Macro F1 over (query, page). "
        "The oracle is not a model: its v0 row validates the metric. The floor (empty extraction) scores "
        "only where the truth is empty too; the null extracts a value on no page (0 everywhere).",
    )
    after = _first_layout_drift(vs)
    type_cols = ["method"] + [f"{t} v{vs[0]}" for t in TYPES] + [f"{t} v{after}" for t in TYPES]
    type_rows = [
        [m] + [_fmt(f1[m][vs[0]][t]) for t in TYPES] + [_fmt(f1[m][after][t]) for t in TYPES] for m in names
    ]
    type_rows.append(["VGS (paper, GPT-4o)", *PAPER_VGS_TYPES] + [""] * 4)
    by_type = Table(
        f"F1 (%) by query type, at v{vs[0]} and after the first layout drift (v{after})", type_cols, type_rows
    )
    print(markdown_table(overall.columns, overall.rows))
    print(markdown_table(by_type.columns, by_type.rows))
    notes = [
        f"{len({r.sample_id for r in results})} queries; "
        f"{cfg.pages_per_group or 'all'} pages per group per version"
    ]
    if "oracle" in f1:
        o = f1["oracle"]
        notes.append(
            f"oracle F1 at v{vs[0]}: {o[vs[0]]['overall']:.1f}% (must be 100: the metric and ground truth "
            f"agree); at v{vs[-1]}: {o[vs[-1]]['overall']:.1f}%"
        )
    for m in names:
        errs = sum(b["xpath_errors"] for b in cost[m])
        if errs:
            notes.append(f"{m}: {errs} invalid XPaths counted as empty extractions")
    secs = [s for b in cost.get("VGS", []) for s in b.get("render_s", [])]
    if secs:
        notes.append(
            f"VGS: Chromium render into regions, median {sorted(secs)[len(secs) // 2]:.2f} s, "
            f"max {max(secs):.2f} s per page"
        )
    figures = _figures(ctx, f1, names, (vs[0], after))
    return Report(tables=[overall, by_type, _per_query(results, names, vs[0])], figures=figures, notes=notes)


def _per_query(results: list[Any], names: list[str], version: int) -> Table:
    """Each query's F1 (%) at `version` per method (the mean over its pages)."""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    info: dict[str, str] = {}
    for r in results:
        if r.version == version:
            per[(r.method, r.sample_id)].append(r.f1)
            info[r.sample_id] = r.type
    rows = [
        [q, info[q]] + [_fmt(100 * statistics.mean(per[(m, q)])) if per[(m, q)] else "" for m in names]
        for q in sorted(info)
    ]
    return Table(f"F1 (%) per query at v{version}", ["query", "type", *names], rows)


def _fmt(x: float) -> float | str:
    return "" if x != x else round(x, 1)  # NaN: no page of that type


def _first_layout_drift(vs: list[int]) -> int:
    """The first scored version served with another layout than the first one (else the last)."""
    return next((v for v in vs if layout_of(v) != layout_of(vs[0])), vs[-1])


def _figures(ctx: RunContext, f1: dict[str, Any], names: list[str], vs: tuple[int, int]) -> list[str]:
    from iclr26.core.records import pyplot, save_figure

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    width = 0.8 / max(1, len(names))
    for ax, v in zip(axes, vs, strict=True):
        for i, m in enumerate(names):
            vals = [f1[m][v][t] for t in (*TYPES, "overall")]
            ax.bar([k + i * width for k in range(5)], [0 if x != x else x for x in vals], width, label=m)
        ax.set_xticks(
            [k + 0.4 - width / 2 for k in range(5)], ["type 1", "type 2", "type 3", "type 4", "overall"]
        )
        ax.set_title(f"v{v} (layout {layout_of(v).version})")
    axes[0].set_ylabel("F1 (%)")
    axes[1].legend(fontsize=7, loc="upper right")
    out = [save_figure(fig, ctx.out_dir, "f1_by_type")]
    marks = sorted((ctx.out_dir / "vgs_marks").glob("*.png")) if (ctx.out_dir / "vgs_marks").is_dir() else []
    if marks:
        shutil.copy(marks[0], ctx.out_dir / "vgs_region_marks.png")
        out.append("vgs_region_marks.png")
    return out
