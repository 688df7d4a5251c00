"""DASH on the GPU: correctness, bitwise repeatability and TFLOP/s of every schedule, our atomic
variant, the spin-free deterministic variants (two-pass dQ, per-KV-block partials; issue 31) and
PyTorch SDPA (flash, efficient, cuDNN), for the README tables.

    python benchmarks/dash/device_h200.py --out DIR --quick    # ~2 min on one H200 (est.)
    python benchmarks/dash/device_h200.py --out DIR            # ~3.5 min on one H200 (est.)
    DASH_BENCH_DRY=1 python benchmarks/dash/device_h200.py --out /tmp/dash_dry   # CPU plumbing

Phases, each in its own subprocess with a time limit (a hung spin-wait costs that phase only),
all appending JSON lines to DIR/results.jsonl (`--phases` picks some, `--skip` drops some):
  warm     compile every kernel variant in parallel processes (Triton's disk cache)
  check    bf16/fp16 errors against fp32 math, ordered == deferred bitwise, 3-run repeatability,
           a persistent grid of 3 programs (several waves per head)
  sweep    backward tile configs at 16k causal, per head_dim; the best atomic config is used below
  table    seq 1k..16k at 16k tokens (batch = 16k/seq, heads = 2048/head_dim), causal and full:
           forward and backward TFLOP/s (backward FLOPs = 2.5 × forward, forward = 4·B·H·L²·d,
           half for causal), a 2-run bitwise check of each backward, and for each deterministic
           variant `ratio_to_atomic_<variant>`: its backward TFLOP/s over our atomic backward's at
           the same shape in the same run
  sdpa_det PyTorch's backends under torch.use_deterministic_algorithms(True), 3 runs, bitwise
`--quick` runs warm, check and table only, without the lazy-release variant (measured before: never
faster) and at the tiles the earlier sweeps chose, (64, 128, 8 warps, 2 stages). The script exits
1 when a phase failed or timed out (the other phases still run).
`benchmarks/dash/report.py` turns the JSON lines into the README tables and plots.
"""

# ruff: noqa: B023  (every closure below is called within the loop iteration that defines it)
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

# DASH_BENCH_DRY=1: a tiny CPU run under TRITON_INTERPRET=1 that exercises every code path here.
DRY = os.environ.get("DASH_BENCH_DRY") == "1"
if DRY:  # Triton reads it when first imported; the phases' subprocesses inherit it
    os.environ.setdefault("TRITON_INTERPRET", "1")
DEVICE = "cpu" if DRY else "cuda"
SEQS = (32, 64) if DRY else (1024, 2048, 4096, 8192, 16384)
TOKENS = 64 if DRY else 16384
HDIMS = (16, 32) if DRY else (64, 128)
CHECK_LEN = 40 if DRY else 1000
SCHEDULES = ("ascending", "descending", "shift")
SPIN_FREE = ("two_pass", "partials")  # deterministic dQ without a cross-program wait (issue 31)
MODES = ("ordered", "ordered_lazy", "deferred", "atomic", *SPIN_FREE)
SWEEP = (
    ((16, 16, 4, 1), (16, 32, 4, 1))
    if DRY
    else ((64, 128, 8, 2), (32, 128, 4, 2), (64, 64, 4, 2), (32, 64, 4, 3), (128, 64, 8, 2))
)


def _emit(out: Path, **rec) -> None:
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def _setup():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    import torch

    A = importlib.import_module("iclr26.dash.flash_attention")
    return torch, A


def _shape(seq: int, hdim: int) -> tuple[int, int, int, int]:
    return TOKENS // seq, (32 if DRY else 2048) // hdim, seq, hdim


def _timed(fn) -> float:
    """Median milliseconds of `fn` (Triton's do_bench on the GPU, a plain timer in a dry run)."""
    if DRY:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    from triton.testing import do_bench

    return do_bench(fn, warmup=5, rep=40, return_mode="median")


def _flops(b, h, seq, d, causal) -> float:
    f = 4.0 * b * h * seq * seq * d
    return f / 2 if causal else f


def _cfg(A, bwd: tuple[int, int, int, int], programs=None, prefetch=None):
    bm, bn, w, st = bwd
    if DRY:
        return A.KernelConfig(16, 16, bm, bn, 4, 1, w, st, programs, prefetch)
    return A.KernelConfig(128, 64, bm, bn, 8, 3, w, st, programs, prefetch)


def _make(torch, shape, dtype, seed=0):
    g = torch.Generator(device=DEVICE).manual_seed(seed)
    q, k, v = (torch.randn(shape, device=DEVICE, dtype=dtype, generator=g).requires_grad_() for _ in range(3))
    do = torch.randn(shape, device=DEVICE, dtype=dtype, generator=g)
    return q, k, v, do


def _grads(torch, o, q, k, v, do):
    return torch.autograd.grad(o, (q, k, v), do, retain_graph=True)


def _bits_equal(torch, a, b) -> bool:
    def bits(t):
        return t.detach().contiguous().view(torch.int16 if t.element_size() == 2 else torch.int32)

    return all(torch.equal(bits(x), bits(y)) for x, y in zip(a, b, strict=True))


def _warm_one(job) -> str:
    """Compile one variant by running it once (in a fresh process)."""
    torch, A = _setup()
    hdim, causal, dtype_name, schedule, mode, bwd, seq, prefetch = job
    dtype = getattr(torch, dtype_name)
    q, k, v, do = _make(torch, _shape(seq, hdim), dtype)
    o = A.attention(q, k, v, causal, schedule=schedule, deterministic=mode != "atomic", dq_mode=mode,
                    config=_cfg(A, bwd, prefetch=prefetch))  # fmt: skip
    _grads(torch, o, q, k, v, do)
    if not DRY:
        torch.cuda.synchronize()
    return f"{job}"


def _modes(quick: bool) -> tuple[str, ...]:
    """The dQ modes a run checks and compiles (`--quick`: without the lazy-release variant)."""
    return tuple(m for m in MODES if not (quick and m == "ordered_lazy"))


def phase_warm(out: Path, quick: bool) -> None:
    # One job per compiled variant: (head_dim, mask, dtype, dQ mode, phases, tile config); only
    # causal shift has two phases, so "ascending" stands for every one-phase schedule.
    dtypes = ("float32",) if DRY else ("bfloat16", "float16")
    jobs = []
    for hdim in HDIMS:
        for causal in (False, True):
            schedules = ("ascending", "shift") if causal else ("ascending",)
            for mode in _modes(quick):
                for schedule in schedules:
                    if DRY and mode.startswith("ordered") and schedule == "shift":
                        continue  # would deadlock in the interpreter
                    for dt in dtypes:
                        jobs.append((hdim, causal, dt, schedule, mode, SWEEP[0], SEQS[0], None))
            if quick:  # no sweep: only the default tiles are used
                continue
            for bwd in SWEEP[1:]:
                for mode, sch in (("atomic", "ascending"), ("ordered", "shift"), ("ordered", "ascending")):
                    if not (DRY and mode == "ordered") and (causal or sch == "ascending"):
                        jobs.append((hdim, causal, dtypes[0], sch, mode, bwd, SEQS[-1], None))
            for mode, sch in (("atomic", "ascending"), ("ordered", "shift")):  # prefetch off, for the sweep
                if not (DRY and mode == "ordered"):
                    for prefetch in (True, False):
                        jobs.append((hdim, causal, dtypes[0], sch, mode, SWEEP[0], SEQS[-1], prefetch))
    t0 = time.time()
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=2 if DRY else 14, mp_context=mp.get_context("spawn")) as ex:
        results = list(ex.map(_warm_one, jobs))
    _emit(out, phase="warm", jobs=len(results), seconds=round(time.time() - t0, 1))


def phase_check(out: Path, quick: bool) -> None:
    torch, A = _setup()
    import torch.nn.functional as F

    for dtype in (torch.float32,) if DRY else (torch.bfloat16, torch.float16):
        for hdim in HDIMS:
            for causal in (False, True):
                shape = (1, 2, CHECK_LEN, hdim) if DRY else (2, 4, CHECK_LEN, hdim)  # tails in every tile
                q, k, v, do = _make(torch, shape, dtype, seed=1)
                qf, kf, vf = (x.detach().float().requires_grad_() for x in (q, k, v))
                of = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal)
                ref = (of, *_grads(torch, of, qf, kf, vf, do.float()))
                for schedule in SCHEDULES:
                    for programs in (None, 3):  # 3: a head's 8 KV blocks run in 3 waves
                        cfg = _cfg(A, SWEEP[0], programs)
                        res = {}
                        modes = _modes(quick)
                        if DRY and (schedule == "shift" or programs == 3):  # a spin would deadlock
                            modes = tuple(m for m in modes if not m.startswith("ordered"))
                        for mode in modes:
                            runs = []
                            for _ in range(1 if mode == "deferred" else 2 if DRY else 3):
                                det = mode != "atomic"
                                o = A.attention(q, k, v, causal, schedule=schedule, deterministic=det,
                                                dq_mode=mode, config=cfg)  # fmt: skip
                                runs.append((o, *_grads(torch, o, q, k, v, do)))
                            err = [
                                float((x.float() - y).abs().max()) for x, y in zip(runs[0], ref, strict=True)
                            ]
                            rep = all(_bits_equal(torch, runs[0], r) for r in runs[1:])
                            res[mode] = (runs[0], err, rep)
                        _emit(
                            out, phase="check", dtype=str(dtype), hdim=hdim, causal=causal, schedule=schedule,
                            programs=programs,
                            max_err={m: r[1] for m, r in res.items()},
                            repeatable={m: r[2] for m, r in res.items() if m != "deferred"},
                            ordered_equals_deferred=_bits_equal(torch, res["ordered"][0], res["deferred"][0])
                            if "ordered" in res
                            else None,
                            lazy_equals_ordered=_bits_equal(torch, res["ordered"][0], res["ordered_lazy"][0])
                            if "ordered" in res and "ordered_lazy" in res
                            else None,
                            partials_equals_two_pass=_bits_equal(torch, res["partials"][0],
                                                                 res["two_pass"][0]),
                        )  # fmt: skip


def _bench_bwd(torch, fn_o, q, k, v, do, reps=2):
    o = fn_o()
    ms = _timed(lambda: _grads(torch, o, q, k, v, do))
    first = _grads(torch, o, q, k, v, do)
    rep = all(_bits_equal(torch, first, _grads(torch, o, q, k, v, do)) for _ in range(reps - 1))
    return ms, rep


def _bench_ours(torch, A, q, k, v, do, causal, schedule, mode, cfg):
    """(ms, repeatable) of our backward with one schedule, dQ mode and tile config."""

    def forward():
        det = mode != "atomic"
        return A.attention(q, k, v, causal, schedule=schedule, deterministic=det, dq_mode=mode, config=cfg)

    return _bench_bwd(torch, forward, q, k, v, do)


def phase_sweep(out: Path) -> None:
    torch, A = _setup()
    for hdim in HDIMS:
        for causal in (True, False):
            b, h, seq, d = _shape(SEQS[-1], hdim)
            q, k, v, do = _make(torch, (b, h, seq, d), torch.float32 if DRY else torch.bfloat16)
            fl = 2.5 * _flops(b, h, seq, d, causal)
            cases = [(bwd, None) for bwd in SWEEP] + [(SWEEP[0], True), (SWEEP[0], False)]
            for bwd, prefetch in cases:
                pairs = [("atomic", "ascending"), ("deferred" if DRY else "ordered", "shift")]
                if bwd == SWEEP[0] and prefetch is None and not DRY:
                    pairs.append(("ordered_lazy", "shift"))
                for mode, sch in pairs:
                    cfg = _cfg(A, bwd, prefetch=prefetch)
                    try:
                        ms, rep = _bench_ours(torch, A, q, k, v, do, causal, sch, mode, cfg)
                        _emit(out, phase="sweep", hdim=hdim, causal=causal, bwd=bwd, mode=mode, schedule=sch,
                              prefetch=prefetch, ms=ms, tflops=fl / ms / 1e9, repeatable=rep)  # fmt: skip
                    except Exception as e:  # out of resources for this tile config
                        _emit(
                            out,
                            phase="sweep",
                            hdim=hdim,
                            causal=causal,
                            bwd=bwd,
                            mode=mode,
                            error=repr(e)[:300],
                        )


def _best_configs(out: Path, mode: str) -> dict:
    """Per head_dim, the tile config with the best 16k causal backward for `mode` (prefetch auto)."""
    best: dict[int, tuple] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        wanted = r.get("phase") == "sweep" and r.get("mode") == mode and r.get("causal") and "tflops" in r
        if (
            wanted
            and r.get("prefetch") is None
            and (r["hdim"] not in best or r["tflops"] > best[r["hdim"]][1])
        ):
            best[r["hdim"]] = (tuple(r["bwd"]), r["tflops"])
    return {h: v[0] for h, v in best.items()}


def _lazy_ok(out: Path) -> bool:
    """Whether the lazy-release variant passed the check phase (else the table leaves it out)."""
    if DRY:
        return False
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    checks = [r for r in rows if r.get("phase") == "check"]
    meta = [r for r in rows if r.get("phase") == "meta" and r.get("ran", [])[:2] == ["--phase", "check"]]
    return (
        bool(checks)
        and all(m["rc"] == 0 for m in meta)
        and all(
            r["repeatable"].get("ordered_lazy") and max(r["max_err"]["ordered_lazy"]) < 0.05 for r in checks
        )
    )


def phase_table(out: Path, hdim: int, causal: bool, quick: bool) -> None:
    torch, A = _setup()
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    det_mode = "deferred" if DRY else "ordered"
    bwd = _best_configs(out, "atomic").get(hdim, SWEEP[0])
    bwd_det = _best_configs(out, det_mode).get(hdim, SWEEP[0])
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION}  # fmt: skip
    for seq in SEQS:
        b, h, _, d = _shape(seq, hdim)
        q, k, v, do = _make(torch, (b, h, seq, d), torch.float32 if DRY else torch.bfloat16)
        fl = _flops(b, h, seq, d, causal)
        row = {"phase": "table", "hdim": hdim, "causal": causal, "seq": seq, "batch": b, "heads": h,
               "bwd_cfg": bwd, "bwd_cfg_det": bwd_det}  # fmt: skip
        cfg = _cfg(A, bwd)
        cfg_det = _cfg(A, bwd_det)
        fwd_ms = _timed(lambda c=cfg: A.attention_forward(q, k, v, causal, d**-0.5, c))
        row["fwd_ours"] = fl / fwd_ms / 1e9
        variants = [(f"ours_{s}", s, det_mode, cfg_det) for s in SCHEDULES]
        if not quick and _lazy_ok(out):
            variants += [(f"ours_{s}_lazy", s, "ordered_lazy", cfg_det) for s in SCHEDULES]
        # The spin-free variants run the dK/dV pass on the atomic's tiles; their dQ sum has no
        # order across programs left for a schedule to set, so ascending stands for all three.
        variants += [(f"ours_{m}", "ascending", m, cfg) for m in SPIN_FREE]
        variants += [("ours_atomic", "ascending", "atomic", cfg)]
        if bwd_det != bwd:
            variants += [("ours_atomic_detcfg", "ascending", "atomic", cfg_det)]
        for name, sch, mode, c_ in variants:
            try:
                ms, rep = _bench_ours(torch, A, q, k, v, do, causal, sch, mode, c_)
                row[f"bwd_{name}"], row[f"rep_{name}"] = 2.5 * fl / ms / 1e9, rep
            except Exception as e:
                row[f"err_{name}"] = repr(e)[:300]
        atomic = row.get("bwd_ours_atomic")
        for name, *_ in variants:  # each deterministic variant's throughput over our atomic one's
            if atomic and f"bwd_{name}" in row and not name.startswith("ours_atomic"):
                row[f"ratio_to_atomic_{name}"] = row[f"bwd_{name}"] / atomic
        for name, be in backends.items():
            try:
                with sdpa_kernel([be]):

                    def sdpa():
                        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                    fms = _timed(sdpa)
                    ms, rep = _bench_bwd(torch, sdpa, q, k, v, do)
                row[f"fwd_{name}"] = fl / fms / 1e9
                row[f"bwd_{name}"], row[f"rep_{name}"] = 2.5 * fl / ms / 1e9, rep
            except Exception as e:
                row[f"err_{name}"] = repr(e)[:300]
        _emit(out, **row)


def phase_sdpa_det(out: Path) -> None:
    torch, _ = _setup()
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.use_deterministic_algorithms(True, warn_only=True)
    for causal in (True, False):
        q, k, v, do = _make(torch, _shape(SEQS[-1], HDIMS[-1]), torch.float32 if DRY else torch.bfloat16)
        for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                         ("cudnn", SDPBackend.CUDNN_ATTENTION)):  # fmt: skip
            try:
                with sdpa_kernel([be]):
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                runs = [_grads(torch, o, q, k, v, do) for _ in range(3)]
                _emit(out, phase="sdpa_det", causal=causal, backend=name,
                      repeatable=all(_bits_equal(torch, runs[0], r) for r in runs[1:]))  # fmt: skip
            except Exception as e:
                _emit(out, phase="sdpa_det", causal=causal, backend=name, error=repr(e)[:300])


PHASES = ("warm", "check", "sweep", "table", "sdpa_det")


def _run_phase(out: Path, args: list[str], limit: float) -> int | str:
    """Run one phase in a subprocess; its exit status, or "timeout"."""
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, __file__, "--out", str(out), *args], timeout=limit)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    _emit(out, phase="meta", ran=args, rc=rc, seconds=round(time.time() - t0, 1))
    return rc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--phase", default=None, help="internal: run this one phase in this process")
    ap.add_argument("--hdim", type=int, default=128)
    ap.add_argument("--causal", type=int, default=1)
    ap.add_argument("--skip", default="", help="comma-separated phases to skip")
    ap.add_argument("--phases", default=None, help=f"comma-separated phases to run, of {','.join(PHASES)}")
    ap.add_argument("--quick", action="store_true", help="warm, check, table only; no lazy-release variant")
    a = ap.parse_args()
    wanted = set(a.phases.split(",")) if a.phases else {"warm", "check", "table"} if a.quick else set(PHASES)
    unknown = (wanted | set(filter(None, a.skip.split(",")))) - set(PHASES)
    if unknown:
        ap.error(f"unknown phase(s) {sorted(unknown)}; phases are {', '.join(PHASES)}")
    wanted -= set(a.skip.split(","))
    a.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TRITON_PRINT_AUTOTUNING", "0")
    if a.phase == "warm":
        return phase_warm(a.out, a.quick)
    if a.phase == "check":
        return phase_check(a.out, a.quick)
    if a.phase == "sweep":
        return phase_sweep(a.out)
    if a.phase == "table":
        return phase_table(a.out, a.hdim, bool(a.causal), a.quick)
    if a.phase == "sdpa_det":
        return phase_sdpa_det(a.out)
    import torch
    import triton

    gpu, sms = (
        ("cpu (dry run)", 0)
        if DRY
        else (torch.cuda.get_device_name(0), torch.cuda.get_device_properties(0).multi_processor_count)
    )
    _emit(a.out, phase="env", gpu=gpu, sms=sms, torch=torch.__version__,
          triton=triton.__version__, date=time.strftime("%Y-%m-%d %H:%M:%S %Z"))  # fmt: skip
    plan = [("warm", [], 120), ("check", [], 60), ("sweep", [], 60)]
    plan += [("table", ["--hdim", str(h), "--causal", str(c)], 50) for h in HDIMS[::-1] for c in (1, 0)]
    plan += [("sdpa_det", [], 25)]
    failed = []
    for name, extra, limit in plan:
        if name in wanted:
            args = ["--phase", name, *extra, *(["--quick"] if a.quick else [])]
            if _run_phase(a.out, args, limit * (4 if DRY else 1)) != 0:  # the interpreter is slow
                failed.append(" ".join(args))
    if failed:
        sys.exit(f"phases that failed or timed out: {failed}")


if __name__ == "__main__":
    main()
