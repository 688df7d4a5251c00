"""VGS without an LLM and the XPath styles under graded drift (`liveweb_ie.nollm`), with provenance.

    python benchmarks/liveweb_ie/no_llm.py                  # bench: 24 queries (6 a type), 10 pages a version
    python benchmarks/liveweb_ie/no_llm.py --preset bench_query   # the description names the query too
    python benchmarks/liveweb_ie/no_llm.py --preset bench_r240    # 240-pixel regions (12 of them)
    python benchmarks/liveweb_ie/no_llm.py --preset smoke   # two sites, one query a type

Saves results/no_llm_<preset>.json (the drift table, the standard table, the claims, the config and
provenance) and the cells ledger beside it. Cells resume from the run folder's cells.jsonl.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.core import RunContext
from iclr26.core.records import markdown_table
from iclr26.core.study import run_study
from iclr26.liveweb_ie.nollm import NoLLMConfig, study
from iclr26.liveweb_ie.release import load_release, write_release
from iclr26.liveweb_ie.server import LiveSites

PRESETS = {
    "bench": NoLLMConfig(),
    "bench_query": NoLLMConfig(description="query"),  # the description with the query (the first run)
    "bench_r240": NoLLMConfig(region_height=240, max_regions=12),  # regions a third as tall
    "smoke": NoLLMConfig(sites=("books", "tables"), records_per_type=1, pages_per_group=3),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="bench", choices=sorted(PRESETS))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cfg = PRESETS[args.preset]
    out = args.out or Path(f"runs/benchmarks/no_llm_{args.preset}")
    out.mkdir(parents=True, exist_ok=True)
    with LiveSites(cfg.seed, cfg.sites) as live, ExitStack() as stack:
        releases = {
            v: load_release(write_release(live.sites, out / "release" / f"v{v}", v, seed=cfg.seed))
            for v in (0, 2, 4)
        }
        result = run_study(study(cfg, live, releases, stack), RunContext(out_dir=out))
    report = result.report
    for t in report.tables:
        print(f"\n{t.title}\n" + markdown_table(t.columns, t.rows))
    for c in result.checks:
        print(f"claim {c.method} vs {c.baseline}: {c.verdict} ({c.rule})")
    results = Path(__file__).parent / "results"
    path = results / f"no_llm_{args.preset}.json"
    payload = {
        **provenance(),
        "preset": args.preset,
        "run_dir": str(out),
        "config": asdict(cfg),
        "claim_checks": [asdict(c) for c in result.checks],
        "tables": [asdict(t) for t in report.tables],
        "notes": report.notes,
    }
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")
    shutil.copyfile(out / "cells.jsonl", path.with_suffix(".cells.jsonl"))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
