"""GPU benchmark (one prepared script for the lent H200): forward+backward time and peak memory
of one attention layer vs sequence length, LaplacianAttention (Triton kernel) vs SDPA backends
and a plain linear attention; and the Triton Laplacian-kernel throughput.

    PYTHONPATH=src python benchmarks/laplacianformer/device_h200.py --out $OUT/laplacianformer_h200.json
    python benchmarks/laplacianformer/device_h200.py --check      # tiny sizes on CPU (plumbing only)

Shapes follow SYSTEMS.md's measured anchors: B=1, 8 heads, head dim 64, bf16.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.laplacianformer.attention import nystrom_laplacian_attention
from iclr26.laplacianformer.laplace_kernel import laplace_kernel


def plain_linear(q, k, v):
    """Unfused elu+1 linear attention (the SYSTEMS.md reference point)."""
    qf, kf = F.elu(q) + 1, F.elu(k) + 1
    kv = kf.transpose(-1, -2) @ v
    return (qf @ kv) / (qf @ kf.sum(-2, keepdim=True).transpose(-1, -2))


def sdpa(backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    b = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "math": SDPBackend.MATH,
    }[backend]

    def fn(q, k, v):
        with sdpa_kernel(b):
            return F.scaled_dot_product_attention(q, k, v)

    return fn


def time_fwd_bwd(fn, q, k, v, repeats: int, device) -> tuple[float, float]:
    """Median ms and peak MiB of fn(q, k, v) forward + backward."""
    ts = []
    peak = 0.0
    for rep in range(repeats + 1):
        qi, ki, vi = (t.detach().requires_grad_() for t in (q, k, v))
        if device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        t0 = time.perf_counter()
        out = fn(qi, ki, vi)
        out.backward(torch.ones_like(out))
        if device.type == "cuda":
            torch.cuda.synchronize()
            peak = max(peak, (torch.cuda.max_memory_allocated() - base) / 2**20)
        if rep:
            ts.append(1e3 * (time.perf_counter() - t0))
    return sorted(ts)[len(ts) // 2], peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("laplacianformer_h200.json"))
    ap.add_argument("--check", action="store_true", help="tiny CPU run to test the plumbing")
    ap.add_argument("--budget-s", type=float, default=420.0, help="stop adding lengths after this")
    args = ap.parse_args()
    device = torch.device("cpu" if args.check else "cuda")
    dtype = torch.float32 if args.check else torch.bfloat16
    lengths = (256, 512) if args.check else (1024, 2048, 4096, 8192, 16384, 32768, 65536)
    heads, d, m, repeats = (2, 16, 16, 1) if args.check else (8, 64, 64, 5)
    methods = {
        "laplacian (ours, triton)": lambda q, k, v: nystrom_laplacian_attention(q, k, v, m, 4.0),
        "linear elu+1 (unfused)": plain_linear,
    }
    if not args.check:
        for be in ("cudnn", "flash", "efficient"):
            methods[f"sdpa {be}"] = sdpa(be)
    rows, start = [], time.perf_counter()
    for n in lengths:
        g = torch.Generator(device="cpu").manual_seed(n)
        q, k, v = ((0.3 * torch.randn(1, heads, n, d, generator=g)).to(device, dtype) for _ in range(3))
        flops = 4 * heads * n * n * d * 3.5  # SDPA fwd+bwd reference FLOPs (fwd 4BHN²d, bwd 2.5x)
        for name, fn in methods.items():
            try:
                ms, peak = time_fwd_bwd(fn, q, k, v, repeats, device)
                rows.append(
                    {
                        "method": name,
                        "tokens": n,
                        "ms": ms,
                        "peak_mib": peak,
                        "sdpa_equiv_tflops": flops / ms / 1e9,
                    }
                )
            except Exception as e:
                rows.append({"method": name, "tokens": n, "error": f"{type(e).__name__}: {e}"[:200]})
            print(rows[-1], flush=True)
        # kernel throughput: K(Q, K̃) forward, 3 ops per (i, j, c) term + exp per pair
        kl = k[..., :m, :]
        for _ in range(2):
            laplace_kernel(q, kl, 4.0)
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(10):
            laplace_kernel(q, kl, 4.0)
        if device.type == "cuda":
            torch.cuda.synchronize()
        sec = (time.perf_counter() - t0) / 10
        rows.append(
            {
                "method": "laplace_kernel fwd (N×m)",
                "tokens": n,
                "ms": 1e3 * sec,
                "gops": (3 * d + 1) * heads * n * m / sec / 1e9,
            }
        )
        print(rows[-1], flush=True)
        if time.perf_counter() - start > args.budget_s:
            print(f"stopping after {n} tokens: budget {args.budget_s} s reached")
            break
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                **provenance(),
                "heads": heads,
                "head_dim": d,
                "landmarks": m,
                "dtype": str(dtype),
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
