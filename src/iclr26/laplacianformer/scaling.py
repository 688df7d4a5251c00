"""Time and memory of one attention layer (forward + backward) as the sequence grows.

Memory is measured as the bytes autograd saves for the backward (a `saved_tensors_hooks`
count: exact and repeatable on CPU) and, on CUDA, also as the peak allocated memory.
Timings alternate between attention types within each length so that a noisy machine affects
them alike; compare them as ratios.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from iclr26.core.validation import check_in, check_int
from iclr26.laplacianformer.vit import ATTENTION_KINDS, make_attention


@dataclass
class ScalingPoint:
    """One (attention type, sequence length) measurement."""

    kind: str
    tokens: int
    ms: float  # median forward+backward time
    saved_mib: float  # activations saved for backward
    peak_mib: float | None  # CUDA peak allocation (None on CPU)


def saved_bytes(fn: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, int]:
    """Run `fn` and count the bytes of every tensor autograd saves for the backward."""
    total = 0
    seen: set[int] = set()

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal total
        key = t.untyped_storage().data_ptr()
        if key not in seen:
            seen.add(key)
            total += t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, total


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_scaling(
    kinds: tuple[str, ...],
    lengths: tuple[int, ...],
    *,
    dim: int = 64,
    heads: int = 4,
    landmarks: int = 16,
    batch: int = 1,
    repeats: int = 3,
    device: torch.device | None = None,
    dtype: torch.dtype = torch.float32,
    on_point: Callable[[int], None] | None = None,
) -> list[ScalingPoint]:
    """Median fwd+bwd time and saved-activation memory for each kind at each length."""
    for kind in kinds:
        check_in("kinds", kind, ATTENTION_KINDS)
    for n in lengths:
        check_int("lengths", n, 1)
    check_int("batch", batch, 1)
    check_int("repeats", repeats, 1)
    device = device or torch.device("cpu")
    points = []
    for n in lengths:
        mods = {}
        for kind in kinds:
            torch.manual_seed(0)
            mods[kind] = make_attention(kind, dim, heads, landmarks).to(device, dtype)
        x = torch.randn(batch, n, dim, device=device, dtype=dtype)
        times: dict[str, list[float]] = {k: [] for k in kinds}
        mem: dict[str, tuple[int, float | None]] = {}
        for rep in range(repeats + 1):  # first round is a warm-up
            for kind in kinds:
                xi = x.detach().requires_grad_()
                if device.type == "cuda":
                    torch.cuda.reset_peak_memory_stats(device)
                    base = torch.cuda.memory_allocated(device)
                _sync(device)
                t0 = time.perf_counter()
                out, nbytes = saved_bytes(lambda m=mods[kind], xi=xi: m(xi))
                out.float().square().mean().backward()
                _sync(device)
                dt = time.perf_counter() - t0
                if rep > 0:
                    times[kind].append(dt)
                peak = None
                if device.type == "cuda":
                    peak = (torch.cuda.max_memory_allocated(device) - base) / 2**20
                mem[kind] = (nbytes, peak)
        for kind in kinds:
            ts = sorted(times[kind])
            points.append(ScalingPoint(kind, n, 1e3 * ts[len(ts) // 2], mem[kind][0] / 2**20, mem[kind][1]))
            if on_point:
                on_point(1)
    return points


def growth_exponent(points: list[ScalingPoint], kind: str, field: str = "saved_mib") -> float:
    """Slope of log(field) vs log(tokens) for `kind`: ≈1 linear, ≈2 quadratic."""
    pts = [(p.tokens, getattr(p, field)) for p in points if p.kind == kind]
    if len(pts) < 2:
        raise ValueError(f"need at least two lengths for {kind!r}")
    x = torch.log(torch.tensor([float(a) for a, _ in pts]))
    y = torch.log(torch.tensor([float(b) for _, b in pts]))
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc**2).sum())
