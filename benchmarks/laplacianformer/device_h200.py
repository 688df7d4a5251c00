"""GPU benchmark (one prepared script for the lent H200), for the README's GPU figures:

1. the sweep: forward+backward time and peak memory of one attention layer against sequence length
   (1k-128k tokens, bf16, B=1, 8 heads, d=64): LaplacianAttention (Triton kernel), SDPA's cuDNN,
   flash and efficient backends, plain elu+1 linear attention, Nyströmformer and SOFT; and the
   crossover against cuDNN named;
2. ViT training throughput (images/s), softmax against Laplacian attention, at 224² and 448²;
3. the Triton Laplacian kernel's throughput next to the `torch.cdist` path, with their difference.

    PYTHONPATH=src python benchmarks/laplacianformer/device_h200.py --out $OUT      # ~4 min on an H200
    PYTHONPATH=src python benchmarks/laplacianformer/device_h200.py --check --out /tmp/lf   # CPU plumbing

Writes OUT/laplacianformer_h200.json and OUT/{time,memory}_vs_length.png. A method that errors
(out of memory) or passes `--slow-ms` at some length is not run at longer lengths; the sweep stops
adding lengths after `--budget-s`. Peak memory is taken over the timed calls only (the warm-up call
also allocates one-off workspaces: cuBLAS, Triton compilation). `--check` runs the Triton kernel in
its interpreter (TRITON_INTERPRET=1) for the kernel comparison; the `sdpa math` backend stands in
for cuDNN there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance
from iclr26.laplacianformer.attention import nystrom_laplacian_attention
from iclr26.laplacianformer.baselines import iterative_pinv, landmark_pool
from iclr26.laplacianformer.laplace_kernel import laplace_kernel, laplace_kernel_cdist
from iclr26.laplacianformer.newton_schulz import newton_schulz_inverse
from iclr26.laplacianformer.vit import VisionTransformer

Fn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def plain_linear(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Unfused elu+1 linear attention (the SYSTEMS.md reference point)."""
    qf, kf = F.elu(q) + 1, F.elu(k) + 1
    kv = kf.transpose(-1, -2) @ v
    return (qf @ kv) / (qf @ kf.sum(-2, keepdim=True).transpose(-1, -2))


def nystromformer(landmarks: int) -> Fn:
    """Nyströmformer's attention core (baselines.NystromAttention without projections and conv)."""

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q = q * q.shape[-1] ** -0.5
        q_l, k_l = landmark_pool(q, landmarks), landmark_pool(k, landmarks)
        f = torch.softmax(q @ k_l.transpose(-1, -2), dim=-1)
        a = torch.softmax((q_l @ k_l.transpose(-1, -2)).float(), dim=-1)
        b = torch.softmax(q_l @ k.transpose(-1, -2), dim=-1)
        return f @ (iterative_pinv(a).to(q.dtype) @ (b @ v))

    return fn


def soft(landmarks: int) -> Fn:
    """SOFT's attention core (baselines.GaussianSoftAttention: keys tied to queries)."""

    def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.exp(-torch.cdist(a, b).pow(2) / (2 * math.sqrt(a.shape[-1])))

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q_l = landmark_pool(q, landmarks)
        a_inv = newton_schulz_inverse(kernel(q_l, q_l).float(), 20, tol=None).to(q.dtype)
        return kernel(q, q_l) @ (a_inv @ (kernel(q_l, q) @ v))

    return fn


def sdpa(backend: str) -> Fn:
    from torch.nn.attention import SDPBackend, sdpa_kernel

    chosen = {
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "math": SDPBackend.MATH,
    }[backend]

    def fn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        with sdpa_kernel(chosen):
            return F.scaled_dot_product_attention(q, k, v)

    return fn


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_fwd_bwd(fn: Fn, q, k, v, repeats: int, device: torch.device) -> tuple[float, float]:
    """Median ms and peak MiB (above the inputs) of fn(q, k, v) forward + backward."""
    times, peak = [], 0.0
    for rep in range(repeats + 1):  # the first call warms up (compilation, autotuning)
        qi, ki, vi = (t.detach().requires_grad_() for t in (q, k, v))
        sync(device)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        t0 = time.perf_counter()
        out = fn(qi, ki, vi)
        out.backward(torch.ones_like(out))
        sync(device)
        if rep:  # the warm-up call is neither timed nor counted in the peak
            times.append(1e3 * (time.perf_counter() - t0))
            if device.type == "cuda":
                peak = max(peak, (torch.cuda.max_memory_allocated() - base) / 2**20)
        del out, qi, ki, vi
    return sorted(times)[len(times) // 2], peak


def sweep(args: argparse.Namespace, device: torch.device, dtype: torch.dtype) -> list[dict]:
    """Time and memory of every method against length."""
    lengths = (128, 256) if args.check else tuple(1024 * 2**i for i in range(8))  # 1k ... 128k
    heads, d, m = (2, 16, 16) if args.check else (8, 64, 64)
    methods: dict[str, Fn] = {
        "laplacian (ours, triton)": lambda q, k, v: nystrom_laplacian_attention(q, k, v, m, 4.0),
        "linear elu+1 (unfused)": plain_linear,
        "nystromformer": nystromformer(m),
        "soft": soft(m),
    }
    # in --check, cuDNN fails on the CPU: that exercises the error-and-drop path
    for backend in ("math", "cudnn") if args.check else ("cudnn", "flash", "efficient"):
        methods[f"sdpa {backend}"] = sdpa(backend)
    dropped: dict[str, str] = {}
    rows, start = [], time.perf_counter()
    for n in lengths:
        g = torch.Generator(device="cpu").manual_seed(n)
        q, k, v = ((0.3 * torch.randn(1, heads, n, d, generator=g)).to(device, dtype) for _ in range(3))
        for name, fn in methods.items():
            if name in dropped:
                continue
            try:
                ms, peak = time_fwd_bwd(fn, q, k, v, args.repeats, device)
                rows.append({"method": name, "tokens": n, "ms": round(ms, 4), "peak_mib": round(peak, 1)})
                if ms > args.slow_ms:
                    dropped[name] = f"{ms:.0f} ms at {n} tokens (over --slow-ms)"
            except Exception as e:  # out of memory, or a backend that refuses the shape
                rows.append({"method": name, "tokens": n, "error": f"{type(e).__name__}: {e}"[:160]})
                dropped[name] = f"{type(e).__name__} at {n} tokens"
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            print(rows[-1], flush=True)
        del q, k, v
        if time.perf_counter() - start > args.budget_s:
            print(f"stopping after {n} tokens: the {args.budget_s:.0f} s budget is spent", flush=True)
            break
    for name, why in dropped.items():
        rows.append({"method": name, "dropped": why})
    return rows


def crossover(rows: list[dict], method: str, reference: str) -> int | None:
    """The smallest length from which `method` is faster than `reference` at every measured length."""
    ms = lambda name: {r["tokens"]: r["ms"] for r in rows if r.get("method") == name and "ms" in r}  # noqa: E731
    a, b = ms(method), ms(reference)
    common = sorted(set(a) & set(b))
    for i, n in enumerate(common):
        if all(a[t] < b[t] for t in common[i:]):
            return n
    return None


def kernel_throughput(args: argparse.Namespace, device: torch.device, dtype: torch.dtype) -> list[dict]:
    """K(Q, K̃) = exp(-‖q-k‖₁/λ), N × m: the Triton kernel against the cdist path.

    Inputs have standard deviation 0.5/√d, so that ‖q − k‖₁/λ is near 1 at λ = 4 and K is near
    0.3 rather than e⁻¹⁸ (standard normal inputs): the difference then says something.
    """
    out = []
    heads, d, m = (2, 16, 16) if args.check else (8, 64, 64)
    iters = 2 if args.check else 20  # the interpreter is slow
    std = 0.5 / math.sqrt(d)  # E‖q − k‖₁ = d · std · 2/√π ≈ 0.56 √d: 1.1 λ at d = 64
    for n in (256,) if args.check else (4096, 16384, 65536):
        g = torch.Generator(device="cpu").manual_seed(n)
        q = (std * torch.randn(1, heads, n, d, generator=g)).to(device, dtype)
        kl = (std * torch.randn(1, heads, m, d, generator=g)).to(device, dtype)
        row: dict = {"tokens": n, "landmarks": m, "head_dim": d, "heads": heads, "input_std": round(std, 4)}
        q32, kl32 = q.float(), kl.float()
        results = {}
        for name, fn in (
            (
                "triton",
                lambda q=q, kl=kl: laplace_kernel(q, kl, 4.0, use_triton=True),  # interpreted on CPU
            ),
            # cdist has no bf16 CUDA kernel: it runs in fp32, the Triton kernel in the sweep's dtype
            ("cdist", lambda q=q32, kl=kl32: laplace_kernel_cdist(q, kl, 4.0)),
        ):
            for _ in range(3):
                results[name] = fn()
            sync(device)
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            sync(device)
            sec = (time.perf_counter() - t0) / iters
            row[f"{name}_ms"] = round(1e3 * sec, 4)
            row[f"{name}_gops"] = round(
                (3 * d + 1) * heads * n * m / sec / 1e9, 1
            )  # sub, abs, add per (i,j,c); exp
        diff = (results["triton"].float() - results["cdist"].float()).abs().max()
        row["max_abs_diff"] = float(diff)
        row["max_k"] = float(results["cdist"].abs().max())  # the Triton output is in `dtype`: bf16 on the GPU
        row["max_rel_diff"] = float(diff / results["cdist"].abs().max().clamp_min(1e-30))
        out.append(row)
        print(row, flush=True)
    return out


def vit_throughput(args: argparse.Namespace, device: torch.device) -> list[dict]:
    """Training images/s of a small ViT, softmax vs Laplacian attention (bf16 autocast on the GPU)."""
    settings = [(32, 8, 4)] if args.check else [(224, 16, 128), (448, 8, 32)]  # (image, patch, batch)
    out = []
    for size, patch, batch in settings:
        for attention in ("softmax", "laplacian"):
            torch.manual_seed(0)
            dim, depth, heads = (32, 1, 2) if args.check else (192, 6, 3)
            model = VisionTransformer(size, patch, 3, 100, dim=dim, depth=depth, heads=heads,
                                      attention=attention, landmarks=16).to(device)  # fmt: skip
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
            x = torch.randn(batch, 3, size, size, device=device)
            y = torch.randint(0, 100, (batch,), device=device)
            steps = 2 if args.check else 20

            def step(model=model, opt=opt, x=x, y=y) -> None:
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                    loss = F.cross_entropy(model(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()

            try:
                for _ in range(3):
                    step()
                sync(device)
                t0 = time.perf_counter()
                for _ in range(steps):
                    step()
                sync(device)
                ips = batch * steps / (time.perf_counter() - t0)
                row = {"image": size, "patch": patch, "tokens": (size // patch) ** 2, "batch": batch,
                       "dim": dim, "depth": depth, "heads": heads, "landmarks": 16,
                       "attention": attention, "images_per_s": round(ips, 1)}  # fmt: skip
            except Exception as e:
                row = {"image": size, "attention": attention, "error": f"{type(e).__name__}: {e}"[:160]}
            out.append(row)
            print(row, flush=True)
            del model, opt
    return out


def plots(rows: list[dict], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    for key, label, file in (("ms", "forward + backward (ms)", "time_vs_length.png"),
                             ("peak_mib", "peak memory (MiB)", "memory_vs_length.png")):  # fmt: skip
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        for method in dict.fromkeys(r["method"] for r in rows if key in r):
            pts = [(r["tokens"], r[key]) for r in rows if r.get("method") == method and r.get(key, 0) > 0]
            if not pts:  # e.g. peak memory on the CPU (not measured: 0)
                continue
            ax.plot(*zip(*pts, strict=True), marker="o", label=method)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length (tokens)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        if ax.get_lines():
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / file, dpi=120)
        plt.close(fig)
        names.append(file)
    return names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("laplacianformer_h200"), help="output folder")
    ap.add_argument("--check", action="store_true", help="tiny CPU run (fp32) through every code path")
    ap.add_argument("--budget-s", type=float, default=150.0, help="stop adding lengths after this")
    ap.add_argument("--slow-ms", type=float, default=1500.0, help="drop a method once a call is slower")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.check:
        args.repeats = 1
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton_laplace is first imported
    device = torch.device("cpu" if args.check else "cuda")
    dtype = torch.float32 if args.check else torch.bfloat16
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = sweep(args, device, dtype)
    reference = "sdpa math" if args.check else "sdpa cudnn"
    result = {
        **provenance(),
        "shape": {"batch": 1, "heads": 2 if args.check else 8, "head_dim": 16 if args.check else 64},
        "landmarks": 16 if args.check else 64,
        "dtype": str(dtype),
        "budget_s": args.budget_s,
        "slow_ms": args.slow_ms,
        "repeats": args.repeats,
        "sweep": rows,
        "crossover_reference": reference,  # cuDNN SDPA on the GPU; the math backend in --check
        "crossover_vs_cudnn": {
            m: crossover(rows, m, reference)
            for m in ("laplacian (ours, triton)", "linear elu+1 (unfused)", "nystromformer", "soft")
        },
    }
    print("crossover:", result["crossover_vs_cudnn"], flush=True)
    (args.out / "laplacianformer_h200.json").write_text(
        json.dumps(result, indent=1) + "\n"
    )  # kept if a later part fails
    result["kernel"] = kernel_throughput(args, device, dtype)
    result["vit"] = vit_throughput(args, device)
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    result["plots"] = plots(rows, args.out)
    (args.out / "laplacianformer_h200.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"saved {args.out / 'laplacianformer_h200.json'} in {result['wall_s']} s")


if __name__ == "__main__":
    main()
