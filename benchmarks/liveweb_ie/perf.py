"""The README's performance figures: the site server's throughput on loopback (a bounded load test that
stops by itself), a wrapper applied to a 1,000-page group with lxml, and Chromium rendering pages
into regions.

    python benchmarks/liveweb_ie/perf.py                  # ~1 minute
    python benchmarks/liveweb_ie/perf.py --requests 6000  # a longer load test

Saves results/perf.json with provenance.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.agents.browser import headless_chromium
from iclr26.liveweb_ie.baselines import RuleBased
from iclr26.liveweb_ie.release import Record
from iclr26.liveweb_ie.render import render_page
from iclr26.liveweb_ie.server import LiveSites, load_test
from iclr26.liveweb_ie.sites import groundtruth, layout_of, oracle_xpaths
from iclr26.liveweb_ie.wrapper import Wrapper


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=3000, help="requests in the load test")
    ap.add_argument("--clients", type=int, default=4, help="keep-alive client connections")
    ap.add_argument("--render-pages", type=int, default=10, help="pages Chromium renders into regions")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "perf.json")
    args = ap.parse_args()
    out: dict = {**provenance()}
    with LiveSites(seed=0) as live:
        books = live.sites["books"]
        group = books.group("g_000")
        paths = books.pages(group, 0)
        assert len(paths) == 1000, len(paths)
        targets = [("books", p) for p in paths]
        out["load_test_cold"] = load_test(
            live, targets, requests=len(targets), clients=args.clients
        )  # each page rendered once
        out["load_test"] = load_test(
            live, targets, requests=args.requests, clients=args.clients
        )  # served from the page cache
        print("server:", {k: round(v, 1) for k, v in out["load_test"].items()})

        t0 = time.perf_counter()
        html = [live.fetch("books", p).html for p in paths]
        fetch_s = time.perf_counter() - t0
        kinds = {f.name: f.kind for f in group.fields}
        oracle = Wrapper(oracle_xpaths(group, layout_of(0)), kinds)
        t0 = time.perf_counter()
        for h in html:
            oracle.extract(h)
        oracle_s = time.perf_counter() - t0
        record = Record("w", books.website, "g_000", "", "q", "", tuple(kinds), "type_2", {}, "s")
        first = groundtruth(books.page(paths[0], 0))
        rules = RuleBased(lambda r, a: first[a]).build(record, "", html[0])
        t0 = time.perf_counter()
        for h in html[:200]:
            rules.extract(h)
        rules_s = (time.perf_counter() - t0) * len(html) / 200
        out["wrapper_1000_pages"] = {
            "pages": len(html),
            "attributes": len(kinds),
            "fetch_s": fetch_s,
            "lxml_oracle_wrapper_s": oracle_s,
            "autoscraper_rules_s_extrapolated_from_200": rules_s,
        }
        print("wrapper:", out["wrapper_1000_pages"])

        t0 = time.perf_counter()
        with headless_chromium() as browser:
            launch_s = time.perf_counter() - t0
            urls = []
            for key, site in live.sites.items():
                for g in site.groups:
                    urls.append(live.url(key, site.pages(g, 0)[0]))
            secs = [render_page(browser, u).seconds for u in urls[: args.render_pages]]
        out["render"] = {
            "pages": len(secs),
            "browser_launch_s": launch_s,
            "median_s": statistics.median(secs),
            "max_s": max(secs),
        }
        print("render:", out["render"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
