"""The README's H200 tables from the device script's JSON.

python benchmarks/laplacianformer/report_h200.py [benchmarks/laplacianformer/results/h200.json]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DEFAULT = Path(__file__).parent / "results" / "h200.json"


def tables(result: dict) -> str:
    """Markdown: time and memory against length, the crossovers, the kernel, the ViT throughput."""
    rows = [r for r in result["sweep"] if "ms" in r]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    lengths = sorted({r["tokens"] for r in rows})
    cell = {(r["method"], r["tokens"]): r for r in rows}
    out = []
    for key, title in (("ms", "forward + backward, ms"), ("peak_mib", "peak memory above the inputs, MiB")):
        out.append(f"{title}:\n")
        out.append("| method | " + " | ".join(f"{n // 1024}k" for n in lengths) + " |")
        out.append("|---" * (len(lengths) + 1) + "|")
        for m in methods:
            vals = [cell.get((m, n), {}).get(key) for n in lengths]
            out.append(f"| {m} | " + " | ".join("—" if v is None else f"{v:,.4g}" for v in vals) + " |")
        out.append("")
    cross = ", ".join(
        f"{m}: {'never' if n is None else f'{n // 1024}k'}" for m, n in result["crossover_vs_cudnn"].items()
    )
    out.append(f"Faster than cuDNN SDPA from (and at every longer length): {cross}.\n")
    out.append("| K(Q, K̃), N × 64 | Triton ms | Triton Gop/s | cdist ms | cdist Gop/s | max abs diff |")
    out.append("|---|---|---|---|---|---|")
    for k in result["kernel"]:
        triton = f"{k['triton_ms']} | {k['triton_gops']:,.0f}"
        cdist = f"{k['cdist_ms']} | {k['cdist_gops']:,.0f}"
        out.append(f"| {k['tokens'] // 1024}k | {triton} | {cdist} | {k['max_abs_diff']:.1e} |")
    out.append("")
    out.append(
        "| ViT training (dim 192, depth 6, 3 heads) | tokens | batch | softmax img/s | Laplacian img/s |"
    )
    out.append("|---|---|---|---|---|")
    vit = {(v["image"], v["attention"]): v for v in result["vit"] if "images_per_s" in v}
    for image in sorted({v["image"] for v in result["vit"]}):
        s, lp = vit.get((image, "softmax")), vit.get((image, "laplacian"))
        if s and lp:
            out.append(f"| {image}² / patch {s['patch']} | {s['tokens']} | {s['batch']} | "
                       f"{s['images_per_s']:,.0f} | {lp['images_per_s']:,.0f} |")  # fmt: skip
    return "\n".join(out)


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    print(tables(json.loads(path.read_text())))
