"""How fast the static metrics score a release file: each of the 10 metrics timed on every
comparison, and the projection to the full release's 7,323 comparisons.

    git -C <bare copy of YuchenFan48/LFQA-E> show HEAD:data/unified_benchmark_zh.json > /tmp/zh.json
    python benchmarks/lfqa_e/static_speed.py --data /tmp/zh.json

Saves results/static_speed_<file stem>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _meta import provenance
from iclr26.lfqa_e.data import load_comparisons
from iclr26.lfqa_e.scoring import agreement, preferences
from iclr26.lfqa_e.static import STATIC_METRICS, score_static

FULL_RELEASE = 7323  # comparisons in unified_benchmark.json (English and Chinese)
# BERTScore and the embedding cosine share one encoder pass (static.encoder_scores), so one group
GROUPS = (("length",), ("rouge1", "rouge2", "rougeL"), ("bleu",), ("chrf",),
          ("bertscore_p", "bertscore_r", "bertscore_f1", "embed_cosine"))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--tie-margin", type=float, default=0.01)
    a = ap.parse_args()
    comps = load_comparisons(a.data)
    assert sum(len(g) for g in GROUPS) == len(STATIC_METRICS)
    rows, total = [], 0.0
    from iclr26.lfqa_e.static import encoder_scores

    encoder_scores(["load"], ["the encoder"])  # loading the encoder is not scoring
    for group in GROUPS:
        start = time.perf_counter()
        scores = score_static(list(group), comps)
        secs = time.perf_counter() - start
        total += secs
        for name in group:
            ag = agreement(preferences(scores[name], a.tie_margin), [c.label for c in comps])
            rows.append({"metric": name, "group_seconds": round(secs, 2), "accuracy": round(ag.accuracy, 1),
                         "macro_f1": round(ag.macro_f1, 1)})  # fmt: skip
            print(rows[-1])
    rate = len(comps) / total
    projected = FULL_RELEASE / rate
    out = {**provenance(), "data": str(a.data), "comparisons": len(comps), "seconds": round(total, 1),
           "comparisons_per_s": round(rate, 1), "projected_seconds_full_release": round(projected, 1),
           "rows": rows}  # fmt: skip
    print(f"{len(comps)} comparisons, 10 metrics: {total:.1f} s ({rate:.1f}/s); 7,323 -> {projected:.0f} s")
    path = Path(__file__).parent / "results" / f"static_speed_{a.data.stem}.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
