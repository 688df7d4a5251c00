"""The README's H200 tables from the device script's JSON.

python benchmarks/laplacianformer/report_h200.py [benchmarks/laplacianformer/results/h200.json]

Reads files from before 2026-12-04's second revision of the script too (no `crossover_reference`,
no relative kernel difference, no model shape in the ViT rows).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DEFAULT = Path(__file__).parent / "results" / "h200.json"
REFERENCE_LABEL = {"sdpa cudnn": "cuDNN SDPA", "sdpa math": "SDPA's math backend (the --check stand-in)"}


def length(n: int) -> str:
    """1024 → "1k"; lengths that are not a multiple of 1024 as they are."""
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else str(n)


def sweep_tables(result: dict) -> list[str]:
    """Time and peak memory against length, one row per method, and the crossovers."""
    rows = [r for r in result["sweep"] if "ms" in r]
    methods = list(dict.fromkeys(r["method"] for r in result["sweep"] if "method" in r))
    lengths = sorted({r["tokens"] for r in result["sweep"] if "tokens" in r})
    cell = {(r["method"], r["tokens"]): r for r in result["sweep"] if "tokens" in r}
    out = []
    for key, title in (("ms", "forward + backward, ms"), ("peak_mib", "peak memory above the inputs, MiB")):
        out.append(f"{title}:\n")
        out.append("| method | " + " | ".join(length(n) for n in lengths) + " |")
        out.append("|---" * (len(lengths) + 1) + "|")
        for m in methods:
            vals = []
            for n in lengths:
                r = cell.get((m, n), {})
                vals.append("error" if "error" in r else "—" if key not in r else f"{r[key]:,.4g}")
            out.append(f"| {m} | " + " | ".join(vals) + " |")
        out.append("")
    if not rows:
        out.append("No method finished at any length.\n")
    dropped = [r for r in result["sweep"] if "dropped" in r]
    if dropped:
        out.append(
            "Not run at longer lengths: " + "; ".join(f"{r['method']} ({r['dropped']})" for r in dropped)
        )
        out.append("")
    reference = REFERENCE_LABEL.get(result.get("crossover_reference", "sdpa cudnn"), "the reference")
    cross = ", ".join(
        f"{m}: {'never' if n is None else length(n)}" for m, n in result["crossover_vs_cudnn"].items()
    )
    out.append(f"Faster than {reference} from (and at every longer length): {cross}.\n")
    return out


def kernel_table(result: dict) -> list[str]:
    """The Triton kernel against the cdist path."""
    kernel = result.get("kernel", [])
    if not kernel:
        return []
    m = kernel[0].get("landmarks", result.get("landmarks", 64))
    rel = "max_rel_diff" in kernel[0]
    out = [
        f"| K(Q, K̃), N × {m} | Triton ms | Triton Gop/s | cdist ms | cdist Gop/s | max abs diff |"
        + (" max K | rel. diff |" if rel else ""),
        "|---|---|---|---|---|---|" + ("---|---|" if rel else ""),
    ]
    for k in kernel:
        triton = f"{k['triton_ms']} | {k['triton_gops']:,.0f}"
        cdist = f"{k['cdist_ms']} | {k['cdist_gops']:,.0f}"
        tail = f" {k['max_k']:.3f} | {k['max_rel_diff']:.1e} |" if rel else ""
        out.append(f"| {length(k['tokens'])} | {triton} | {cdist} | {k['max_abs_diff']:.1e} |{tail}")
    out.append("")
    return out


def vit_table(result: dict) -> list[str]:
    """Training images/s, softmax against Laplacian attention."""
    done = [v for v in result.get("vit", []) if "images_per_s" in v]
    if not done:
        return []
    first = done[0]
    shape = f"dim {first.get('dim', 192)}, depth {first.get('depth', 6)}, {first.get('heads', 3)} heads"
    out = [
        f"| ViT training ({shape}) | tokens | batch | softmax img/s | Laplacian img/s | softmax/Laplacian |",
        "|---|---|---|---|---|---|",
    ]
    vit = {(v["image"], v["attention"]): v for v in done}
    for image in sorted({v["image"] for v in result["vit"]}):
        s, lp = vit.get((image, "softmax")), vit.get((image, "laplacian"))
        if s and lp:
            ratio = s["images_per_s"] / lp["images_per_s"]
            out.append(f"| {image}² / patch {s['patch']} | {s['tokens']} | {s['batch']} | "
                       f"{s['images_per_s']:,.0f} | {lp['images_per_s']:,.0f} | {ratio:.2f} |")  # fmt: skip
    failed = [v for v in result["vit"] if "error" in v]
    out += [f"\n{v['image']}², {v['attention']}: {v['error']}" for v in failed]
    return out


def tables(result: dict) -> str:
    """Markdown: time and memory against length, the crossovers, the kernel, the ViT throughput."""
    return "\n".join(sweep_tables(result) + kernel_table(result) + vit_table(result))


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    print(tables(json.loads(path.read_text())))
