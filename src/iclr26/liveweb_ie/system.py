"""`iclr26 run liveweb_ie`: serve the generated sites on 127.0.0.1, write the query set and ground truth
in LiveWeb-IE's layout, make each method's wrapper on each group's first page, apply it to the
group's other pages before and after the sites drift, and print F1 by method and type."""

from __future__ import annotations

import json
import shutil
import statistics
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table
from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.records import markdown_table
from iclr26.core.system import preset_table
from iclr26.liveweb_ie.config import LLM_METHODS, LiveWebConfig
from iclr26.liveweb_ie.evaluate import build_wrappers, f1_table, score_version
from iclr26.liveweb_ie.release import TYPES, Record, Release, load_release, write_release
from iclr26.liveweb_ie.server import LiveSites
from iclr26.liveweb_ie.sites import layout_of

PAPER_F1 = {  # GPT-4o, overall F1 on LiveWeb-IE (and VGS by type)
    "CoT": 24.60,
    "AutoScraper": 26.76,
    "VGS": 48.58,
}
PAPER_VGS_TYPES = (65.87, 46.35, 45.38, 41.50)
NAMES = {"oracle": "oracle", "rules": "autoscraper (rules)", "cot": "CoT", "reflexion": "Reflexion",
         "autoscraper": "AutoScraper", "vgs": "VGS"}  # fmt: skip


def select_records(records: list[Record], per_type: int, types: tuple[str, ...] = TYPES) -> list[Record]:
    """Up to `per_type` queries of each of `types`, taken from the (site, group)s in turn (0: all)."""
    if not per_type:
        return [r for r in records if r.type in types]
    out = []
    for i, t in enumerate(TYPES):
        if t not in types:
            continue
        groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
        for r in records:
            if r.type == t:
                groups[(r.website, r.group_id)].append(r)
        queues = list(groups.values())
        queues = (
            queues[i % len(queues) :] + queues[: i % len(queues)] if queues else []
        )  # types start at different sites
        picked: list[Record] = []
        while len(picked) < per_type and any(queues):
            for q in queues:
                if q and len(picked) < per_type:
                    picked.append(q.pop(0))
        out += picked
    return out


def _summary(release: Release) -> Report:
    """A loaded release's shape: queries per type, groups and pages."""
    counts = release.by_type()
    pages = [len(u) for u in release.groups.values()]
    rows = [[t, counts[t]] for t in TYPES] + [
        ["groups", len(release.groups)],
        ["pages (median per group)", sorted(pages)[len(pages) // 2]],
    ]
    table = Table(f"LiveWeb-IE release at {release.root}", ["", "count"], rows)
    print(markdown_table(table.columns, table.rows))
    return Report(
        tables=[table],
        notes=[
            "scoring the public release needs its live sites (the web); "
            "this machine serves only the generated sites"
        ],
    )


def _methods(
    cfg: LiveWebConfig, ctx: RunContext, stack: ExitStack, live: LiveSites, release: Release
) -> tuple[list[Any], dict[str, Any]]:
    from iclr26.liveweb_ie.baselines import AutoScraperLLM, CoT, Oracle, Reflexion, RuleBased

    model = ctx.chat_model() if set(cfg.methods) & set(LLM_METHODS) else None
    common = {"max_tokens": cfg.max_tokens, "prefill": cfg.prefill, "seed": cfg.seed}
    out: list[Any] = []
    for name in cfg.methods:
        if name == "oracle":
            out.append(Oracle(live.sites, cfg.versions[0]))
        elif name == "rules":
            out.append(RuleBased(lambda r, a: release.groundtruth(r, a).get(release.urls(r)[0], [])))
        elif name == "cot":
            out.append(CoT(model, html_chars=cfg.html_chars, **common))
        elif name == "reflexion":
            out.append(Reflexion(model, rounds=cfg.reflexion_rounds, html_chars=cfg.html_chars, **common))
        elif name == "autoscraper":
            out.append(
                AutoScraperLLM(model, steps=cfg.autoscraper_steps, html_chars=cfg.html_chars, **common)
            )
        else:
            from iclr26.agents.browser import headless_chromium
            from iclr26.liveweb_ie.vgs import VisualGroundingScraper

            browser = stack.enter_context(headless_chromium())
            out.append(
                VisualGroundingScraper(
                    model, browser, region_height=cfg.region_height, max_regions=cfg.max_regions,
                    region_chars=cfg.region_chars, figures=ctx.out_dir / "vgs_marks", **common,
                )
            )  # fmt: skip
    models = {m.name: model for m, name in zip(out, cfg.methods, strict=True) if name in LLM_METHODS}
    return out, models


def run(cfg: LiveWebConfig, ctx: RunContext) -> Report:
    """Build every method's wrappers at the first version and score them at every version."""
    if cfg.release:
        return _summary(load_release(cfg.release))
    with ExitStack() as stack:
        live = stack.enter_context(LiveSites(cfg.seed, cfg.sites))
        releases = {
            v: load_release(write_release(live.sites, ctx.out_dir / "release" / f"v{v}", v, seed=cfg.seed))
            for v in cfg.versions
        }
        first = releases[cfg.versions[0]]
        records = select_records(first.records, cfg.records_per_type, cfg.types)
        counts = ", ".join(f"{t} {sum(r.type == t for r in records)}" for t in TYPES)
        ctx.log(f"{len(records)} queries ({counts}) on {len(cfg.sites)} sites")
        methods, models = _methods(cfg, ctx, stack, live, first)
        live.version = cfg.versions[0]
        with ctx.progress(
            f"wrappers for {len(records)} queries x {len(methods)} methods", len(records) * len(methods)
        ) as advance:
            built = build_wrappers(
                live,
                first,
                records,
                methods,
                ctx.out_dir / "wrappers.jsonl",
                models=models,
                on_built=lambda: advance(1),
            )
        firsts = {r.sample_id: first.urls(r)[0] for r in records}
        results = []
        for v in cfg.versions:
            live.version = v
            results += score_version(
                live, releases[v], records, built, firsts, pages_per_group=cfg.pages_per_group
            )
            ctx.log(f"version {v} (layout {layout_of(v).version}) scored")
        write_text_atomic(ctx.out_dir / "pages.jsonl", "".join(json.dumps(asdict(r)) + "\n" for r in results))
        _save_wrappers(ctx.out_dir / "wrappers.json", built, methods)
    return _report(cfg, ctx, methods, built, results)


def _save_wrappers(path: Path, built: dict[tuple[str, str], Any], methods: list[Any]) -> None:
    out: dict[str, Any] = defaultdict(dict)
    for (m, sample), b in built.items():
        js = getattr(b.extractor, "json", lambda: {})()
        out[m][sample] = {**js, "seconds": round(b.seconds, 2), "tokens": b.tokens, "error": b.error}
    for m in methods:
        for sample, ts in getattr(m, "traces", {}).items():  # VGS: what each stage decided
            out[m.name][sample]["stages"] = [t.json() for t in ts]
        for sample, replies in getattr(m, "replies", {}).items():  # the baselines' raw replies
            out[m.name][sample]["replies"] = replies
    path.write_text(json.dumps(out, indent=1), encoding="utf-8")


def _fmt(x: float) -> float | str:
    return "" if x != x else round(x, 1)  # NaN: no page of that type


def _report(
    cfg: LiveWebConfig,
    ctx: RunContext,
    methods: list[Any],
    built: dict[tuple[str, str], Any],
    results: list[Any],
) -> Report:
    names = [m.name for m in methods]
    vs = list(cfg.versions)
    f1 = f1_table(results, names, vs)
    cost = defaultdict(list)
    for (m, _), b in built.items():
        cost[m].append(b)
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
                round(sum(b.seconds for b in bs) / max(1, len(bs)), 2),
                round(sum(b.tokens for b in bs) / max(1, len(bs))),
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
        "The oracle is not a model: its v0 row validates the metric.",
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
    for m in methods:
        errs = sum(len(getattr(b.extractor, "errors", [])) for (k, _), b in built.items() if k == m.name)
        if errs:
            notes.append(f"{m.name}: {errs} invalid XPaths counted as empty extractions")
        secs = getattr(m, "render_seconds", None)
        if secs:
            notes.append(
                f"VGS: Chromium render into regions, median {sorted(secs)[len(secs) // 2]:.2f} s, "
                f"max {max(secs):.2f} s per page"
            )
    figures = _figures(ctx, f1, names, (vs[0], after))
    claim = None
    base = [b for b in ("CoT", "AutoScraper", "Reflexion") if b in f1]
    if "VGS" in f1 and base:
        best = max(base, key=lambda b: f1[b][vs[0]]["overall"])
        claim = ClaimCheck(
            f"overall F1 at v{vs[0]} (%)",
            "VGS",
            f1["VGS"][vs[0]]["overall"],
            best,
            f1[best][vs[0]]["overall"],
            margin=_paired_margin(results, "VGS", best, vs[0]),
        )
    return Report(
        tables=[overall, by_type, _per_query(results, names, vs[0])],
        figures=figures,
        claim_check=claim,
        notes=notes,
    )


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


def _first_layout_drift(vs: list[int]) -> int:
    """The first scored version served with another layout than the first one (else the last)."""
    return next((v for v in vs if layout_of(v) != layout_of(vs[0])), vs[-1])


def _paired_margin(results: list[Any], a: str, b: str, version: int) -> float:
    """1.96 standard errors of the per-query F1 difference between methods `a` and `b` (points): the
    claim's noise band, as the queries are the unit of sampling."""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in results:
        if r.version == version and r.method in (a, b):
            per[(r.method, r.sample_id)].append(r.f1)
    queries = sorted({q for m, q in per if m == a} & {q for m, q in per if m == b})
    diffs = [100 * (statistics.mean(per[(a, q)]) - statistics.mean(per[(b, q)])) for q in queries]
    return 1.96 * statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0


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


PRESETS = preset_table(
    bench=LiveWebConfig(),
    # CI: two sites, one query per type, the oracle and the rule-based wrapper, no model, no browser
    smoke={
        "sites": ("books", "quotes"),
        "records_per_type": 1,
        "pages_per_group": 3,
        "versions": (0, 2),
        "methods": ("oracle", "rules"),
    },
    # the tour: one query per type, SmolLM2 in CoT and VGS, before and after drift
    demo={
        "records_per_type": 1,
        "pages_per_group": 5,
        "methods": ("oracle", "rules", "cot", "vgs"),
        "max_tokens": 48,
        "max_regions": 2,
    },
    # the paper's protocol: every query, every page, a strong served model, no prefilled formats
    paper={
        "records_per_type": 0,
        "pages_per_group": 0,
        "max_tokens": 1024,
        "html_chars": 60_000,
        "region_chars": 6000,
        "max_regions": 6,
        "prefill": False,
    },
)
SYSTEM = implemented_system("liveweb_ie", presets=PRESETS, run=run)
