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
import sys
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import save_study_result
from iclr26.core import RunContext
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
    path = Path(__file__).parent / "results" / f"no_llm_{args.preset}.json"
    save_study_result(result, out, path, args.preset, cfg)


if __name__ == "__main__":
    main()
