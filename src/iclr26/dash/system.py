"""The `dash` system: the Triton kernels' correctness and bitwise repeatability per schedule, a
determinism check of a small training run, then the study (`core.study`) over shapes: every
schedule's backward and the atomic floor, as the DAG model predicts it or (on a GPU) timed next to
PyTorch SDPA, DASH's schedules judged against FA3's order with the one claim rule."""

from __future__ import annotations

import dataclasses
import functools
import heapq
import math
from collections.abc import Sequence
from typing import Any

import torch

from iclr26.catalog import implemented_system
from iclr26.core import Report, RunContext, Table, set_seed
from iclr26.core.claim import Claim
from iclr26.core.config import with_changes
from iclr26.core.device import DeviceUnavailable
from iclr26.core.ledger import CellRecord
from iclr26.core.records import pyplot, save_figure
from iclr26.core.study import Arm, Study, StudyResult, Unit, run_study
from iclr26.core.system import preset_table
from iclr26.dash.config import DTYPES, DashConfig
from iclr26.dash.flash_attention import attention, interpreting, reference_attention
from iclr26.dash.schedules import SCHEDULES, tile_plan
from iclr26.dash.simulator import simulate

_DTYPES = {name: getattr(torch, name) for name in DTYPES}


SIM_COLUMNS = ["mask", "r/c", "seq", "heads", "ascending", "descending ×", "shift ×", "work bound"]


def _sim_shape(cfg: DashConfig, unit: Unit) -> tuple[bool, float, int, int, int, int]:
    """(causal, r, seq, heads, Q tiles, KV blocks) of a DAG-model unit."""
    causal, r, seq = unit.params["causal"], unit.params["r"], unit.params["seq"]
    heads = (cfg.sim.tokens // seq) * (2048 // cfg.sim.head_dim)
    return causal, r, seq, heads, math.ceil(seq / cfg.sim.block_m), math.ceil(seq / cfg.sim.block_n)


def atomic_makespan(steps: Sequence[int], heads: int, n_sm: int, c: float, r: float) -> float:
    """The DAG model of the atomic (non-deterministic) backward: no reduction waits for another
    item's, so each item takes its isolated time steps·(c + r); items (`steps` per slot, every head
    alike) are dispatched in index order, each to the SM that frees first, as `simulator.simulate`."""
    free = [0.0] * n_sm
    for _ in range(heads):
        for n in steps:
            heapq.heappush(free, heapq.heappop(free) + n * (c + r))
    return max(free)


def _simulate_cell(cfg: DashConfig, arm: Arm, unit: Unit) -> dict[str, Any]:
    """The DAG model's predicted backward makespan (units of c) of one schedule on one shape; the
    atomic floor's is the same grid as FA3's ascending order with no reduction ever waiting."""
    causal, r, _, heads, n_q, n_kv = _sim_shape(cfg, unit)
    bm, bn, sms = cfg.sim.block_m, cfg.sim.block_n, cfg.sim.sms
    schedule = "ascending" if arm.name == "atomic" else arm.name
    plan = tile_plan(schedule, n_q, n_kv, causal=causal, block_m=bm, block_n=bn, wave_size=sms)
    if arm.name == "atomic":
        return {"makespan": atomic_makespan(plan.phase_len.sum(axis=1).tolist(), heads, sms, 1.0, r)}
    res = simulate(plan, heads, sms, 1.0, r)
    return {"makespan": res.makespan, "work_bound": res.lower_bound}


def _sim_table(cfg: DashConfig, result: StudyResult) -> tuple[Table, dict]:
    """Predicted backward makespans (units of c) of every schedule, both masks, from the cells."""
    rows, pred = [], {}
    for unit in result.study.units:
        causal, r, seq, heads, _, _ = _sim_shape(cfg, unit)
        cell = {s: result.cells[(s, unit.key)].metrics for s in SCHEDULES}
        for s in SCHEDULES:
            pred[(causal, r, seq, s)] = cell[s]["makespan"]
        base = cell["ascending"]["makespan"]
        rows.append(
            ["causal" if causal else "full", r, seq, heads, base]
            + [base / cell[s]["makespan"] for s in ("descending", "shift")]
            + [cell["shift"]["work_bound"]]
        )
    table = Table(
        f"DAG model: backward makespan (units of one tile's compute c) and predicted speedup over FA3's "
        f"ascending order; {cfg.sim.sms} SMs, tiles {cfg.sim.block_m}×{cfg.sim.block_n}, "
        f"{cfg.sim.tokens} tokens, head_dim {cfg.sim.head_dim}",
        SIM_COLUMNS,
        rows,
        caption="r/c: cost of one dQ reduction relative to one tile's compute. "
        "× = ascending makespan / schedule's.",
    )
    return table, pred


def _grads(fn, q, k, v, do):
    out = fn(q, k, v)
    return (out, *torch.autograd.grad(out, (q, k, v), do))


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view({2: torch.int16, 4: torch.int32}[t.element_size()])


def _same_bits(a, b) -> bool:
    return all(torch.equal(_bits(x), _bits(y)) for x, y in zip(a, b, strict=True))


def _check_kernels(cfg: DashConfig, ctx: RunContext) -> Table:
    """Max error against fp32 PyTorch and bitwise repeatability, every schedule × mask × dQ mode."""
    dev, dtype = torch.device(cfg.device), _DTYPES[cfg.dtype]
    g = torch.Generator().manual_seed(cfg.seed)
    shape = (cfg.check.batch, cfg.check.heads, cfg.check.len, cfg.check.head_dim)
    q, k, v, do = (torch.randn(shape, generator=g).to(dev, dtype) for _ in range(4))
    q, k, v = (x.requires_grad_() for x in (q, k, v))
    rows = []
    cases = [(c, s, m) for c in (True, False) for s in SCHEDULES for m in ("deterministic", "atomic")]
    with ctx.progress("kernel checks (cases)", total=len(cases)) as advance:
        for causal, schedule, mode in cases:
            qf, kf, vf = (x.detach().float().requires_grad_() for x in (q, k, v))
            ref = _grads(lambda a, b, c, cz=causal: reference_attention(a, b, c, cz), qf, kf, vf, do.float())
            det = mode == "deterministic"

            def ours(a, b, c, cz=causal, s=schedule, d=det):
                return attention(a, b, c, cz, schedule=s, deterministic=d)

            runs = [_grads(ours, q, k, v, do) for _ in range(cfg.check.repeats)]
            err = [
                float((x.detach().float() - y.detach()).abs().max())
                for x, y in zip(runs[0], ref, strict=True)
            ]
            same = all(_same_bits(runs[0], r) for r in runs[1:])
            rows.append(["causal" if causal else "full", schedule, mode, *err, same])
            advance()
    return Table(
        f"Triton kernels vs fp32 PyTorch on {cfg.device} ({cfg.dtype}, shape {shape}"
        + (", TRITON_INTERPRET=1)" if interpreting() else ")"),
        [
            "mask",
            "schedule",
            "dQ reduction",
            "|O err|",
            "|dQ err|",
            "|dK err|",
            "|dV err|",
            "bitwise repeatable",
        ],
        rows,
        caption=f"{cfg.check.repeats} runs each. On CPU the interpreter runs one program at a time, so "
        "atomics land in a fixed order there too; only the GPU shows them differ "
        "(benchmarks/dash/device_h200.py).",
    )


def _train_twice(cfg: DashConfig, ctx: RunContext) -> tuple[Table, bool]:
    """Train a one-layer causal attention model twice from the same seed: are the weights bitwise equal?"""
    dev = torch.device(cfg.device)

    def train() -> tuple[torch.Tensor, list[float]]:
        set_seed(cfg.seed)
        d = cfg.train.dim
        proj = torch.nn.Linear(d, 3 * d).to(dev)
        out = torch.nn.Linear(d, d).to(dev)
        opt = torch.optim.SGD([*proj.parameters(), *out.parameters()], lr=0.1)
        g = torch.Generator().manual_seed(cfg.seed + 1)
        x = torch.randn(4, cfg.train.len, d, generator=g).to(dev)
        y = torch.roll(x, 1, dims=1)  # task: copy the previous token
        losses = []
        for _ in range(cfg.train.steps):
            qkv = proj(x).view(4, cfg.train.len, 3, 2, d // 2).permute(2, 0, 3, 1, 4)
            h = attention(qkv[0], qkv[1], qkv[2], causal=True, schedule="shift")
            loss = (out(h.transpose(1, 2).reshape(4, cfg.train.len, d)) - y).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        return torch.cat([p.detach().flatten() for p in (*proj.parameters(), *out.parameters())]), losses

    with ctx.progress("training twice (runs)", total=2) as advance:
        w1, l1 = train()
        advance()
        w2, l2 = train()
        advance()
    same = torch.equal(_bits(w1), _bits(w2))
    table = Table(
        f"{cfg.train.steps} SGD steps of a causal attention layer (shift schedule, deterministic), run twice",
        ["run", "first loss", "last loss", "weights bitwise equal to run 1"],
        [["1", l1[0], l1[-1], True], ["2", l2[0], l2[-1], same]],
    )
    return table, same


def _backward_flops(cfg: DashConfig, causal: bool, seq: int) -> tuple[int, int, float]:
    """(batch, heads, backward FLOPs) of a GPU shape: 16k tokens, heads = 2048 / head_dim."""
    d = cfg.gpu.head_dim
    b, h = max(1, 16384 // seq), 2048 // d
    return b, h, 2.5 * 4 * b * h * seq * seq * d / (2 if causal else 1)


def _gpu_cell(cfg: DashConfig, arm: Arm, unit: Unit, reps: int = 10) -> dict[str, Any]:
    """Backward time (ms, mean of `reps` after one warm-up) and TFLOP/s of one variant on one shape:
    a schedule's deterministic kernel, our atomic variant, or PyTorch SDPA's default backend."""
    import torch.nn.functional as F

    causal, seq, d = unit.params["causal"], unit.params["seq"], cfg.gpu.head_dim
    b, h, flops = _backward_flops(cfg, causal, seq)
    g = torch.Generator(device="cuda").manual_seed(cfg.seed)
    q, k, v, do = (
        torch.randn(b, h, seq, d, device="cuda", dtype=_DTYPES[cfg.dtype], generator=g) for _ in range(4)
    )
    q, k, v = (x.requires_grad_() for x in (q, k, v))
    if arm.name == "sdpa":
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    elif arm.name == "atomic":
        o = attention(q, k, v, causal, schedule="ascending", deterministic=False)
    else:
        o = attention(q, k, v, causal, schedule=arm.name, deterministic=True)

    def fn():
        return torch.autograd.grad(o, (q, k, v), do, retain_graph=True)

    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / reps
    return {"ms": ms, "tflops": flops / ms / 1e9}


def _bench_table(cfg: DashConfig, result: StudyResult) -> Table:
    """Backward TFLOP/s per schedule, our atomic variant and SDPA, from the cells (GPU only)."""
    rows = []
    for unit in result.study.units:
        row = ["causal" if unit.params["causal"] else "full", unit.params["seq"]]
        row += [result.cells[(a, unit.key)].metrics["tflops"] for a in (*SCHEDULES, "atomic", "sdpa")]
        rows.append(row)
    cols = ["mask", "seq", *[f"{s} (det.)" for s in SCHEDULES], "ours atomic", "SDPA default"]
    return Table(f"Backward TFLOP/s, head_dim {cfg.gpu.head_dim}, {cfg.dtype}, 16k tokens", cols, rows)


def _figure(pred: dict, cfg: DashConfig, ctx: RunContext) -> str:
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    r = cfg.sim.r[0]
    for ax, causal in zip(axes, (True, False), strict=True):
        for s in SCHEDULES:
            ys = [pred[(causal, r, L, "ascending")] / pred[(causal, r, L, s)] for L in cfg.sim.seq_lens]
            ax.plot(cfg.sim.seq_lens, ys, marker="o", label=s)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length")
        ax.set_title(f"{'causal' if causal else 'full'} mask, r/c = {r}")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("predicted speedup over ascending")
    axes[0].legend()
    fig.suptitle("DAG model of the deterministic backward (DASH §3)")
    return save_figure(fig, ctx.out_dir, "dag_model_speedup")


ARMS = (
    Arm("shift", "method"),
    Arm("descending", "method"),
    Arm("ascending", "baseline"),
    Arm("atomic", "floor", floor="atomic backward"),
)
"""DASH's two schedules, FA3's deterministic order (the named baseline) and the floor: the same
kernel with fp32 atomic dQ adds, not deterministic, what determinism is paid against. On the GPU
PyTorch SDPA's default (non-deterministic) backward is a second floor."""


def measured_on_gpu(cfg: DashConfig) -> bool:
    """Whether the study times kernels on the GPU (else it compares the DAG model's predictions)."""
    return cfg.device == "cuda" and bool(cfg.gpu.seq_lens)


def _measure(cfg: DashConfig, arm: Arm, unit: Unit, ctx: RunContext) -> dict[str, Any]:
    return _gpu_cell(cfg, arm, unit) if measured_on_gpu(cfg) else _simulate_cell(cfg, arm, unit)


def study(cfg: DashConfig, checks: Sequence[Table] = ()) -> Study:
    """dash as a study: units = shapes; arms = shift and descending (DASH's schedules, the methods),
    ascending (FA3's deterministic order, the named baseline) and the atomic backward (the floor).
    On the GPU (`gpu.seq_lens`, device=cuda) a cell is the measured backward time of (mask, seq) and
    SDPA is a second floor; elsewhere it is the DAG model's predicted makespan of (mask, r/c, seq).
    Lower is better; the claims: each DASH schedule against ascending, paired over shapes. The atomic
    floor is not the claims' floor: every deterministic schedule sits above it (slower), which the
    rule would read as "at the floor" on every shape. `checks` are the kernel and training tables,
    shown first."""
    if measured_on_gpu(cfg):
        arms = [*ARMS, Arm("sdpa", "floor", floor="SDPA, non-deterministic")]
        units = [Unit(f"{'causal' if c else 'full'}/L{s}", cfg.seed, {"causal": c, "seq": s})
                 for c in (True, False) for s in cfg.gpu.seq_lens]  # fmt: skip
        metric, label = "ms", "backward time (ms), measured"
    else:
        arms = list(ARMS)
        units = [Unit(f"{'causal' if c else 'full'}/r{r:g}/L{s}", cfg.seed, {"causal": c, "r": r, "seq": s})
                 for c in (True, False) for r in cfg.sim.r for s in cfg.sim.seq_lens]  # fmt: skip
        metric, label = "makespan", "predicted backward makespan (units of c, DAG model)"
    claims = [
        Claim(metric, m, ("ascending",), higher_is_better=False, label=label) for m in ("shift", "descending")
    ]
    return Study("dash", arms, units, functools.partial(_measure, cfg), claims=claims, metrics=[metric],
                 config=cfg, seed=cfg.seed, views=functools.partial(_views, cfg, list(checks)))  # fmt: skip


def run(cfg: DashConfig, ctx: RunContext) -> Report:
    """Check the kernels and train twice, then the study: every schedule and the atomic floor on
    each shape, predicted by the DAG model (CPU) or timed (GPU)."""
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise DeviceUnavailable("device=cuda but no GPU is visible; use --set device=cpu")
    if cfg.device == "cpu" and not interpreting():
        raise DeviceUnavailable(
            "device=cpu runs the Triton kernels in Triton's interpreter: set TRITON_INTERPRET=1 before "
            "Python starts, or use --set device=cuda on a GPU"
        )
    checks = [_check_kernels(cfg, ctx), _train_twice(cfg, ctx)[0]]
    return run_study(study(cfg, checks), ctx).report


def _views(cfg: DashConfig, checks: list[Table], result: StudyResult, ctx: RunContext) -> Report:
    """The DAG-model table and figure (computed here on the GPU, where the cells are timings), the
    kernel and training checks, and on the GPU the TFLOP/s table."""
    if measured_on_gpu(cfg):
        sim = study(dataclasses.replace(cfg, device="cpu", dtype="float16"))
        cells = {(a.name, u.key): _simulate_cell(cfg, a, u) for a in sim.arms for u in sim.units}
        sim_result = StudyResult(sim, {k: CellRecord(*k, v) for k, v in cells.items()}, [], [])
        sim_table, pred = _sim_table(cfg, sim_result)
        tables = [sim_table, *checks, _bench_table(cfg, result)]
    else:
        sim_table, pred = _sim_table(cfg, result)
        tables = [sim_table, *checks]
    return Report(tables=tables, figures=[_figure(pred, cfg, ctx)])


# The four presets as changes to `bench` (the README figures' config).
PRESETS = preset_table(
    bench=with_changes(DashConfig(), {"train.steps": 20}),
    smoke={
        "sim.seq_lens": (1024, 2048),
        "sim.r": (0.25,),
        "check.len": 20,
        "check.heads": 1,
        "train.steps": 2,
        "train.len": 16,
    },
    demo={},  # the bench run already takes well under the demo's 2 minutes
    # The paper's setting on one GPU: bf16, head_dim 128, sequence 1k-16k at 16k tokens.
    paper={
        "device": "cuda",
        "dtype": "bfloat16",
        "check.len": 1000,
        "check.batch": 2,
        "check.heads": 4,
        "check.head_dim": 128,
        "check.repeats": 3,
        "train.steps": 50,
        "train.len": 1024,
        "train.dim": 256,
        "gpu.seq_lens": (1024, 2048, 4096, 8192, 16384),
    },
)
SYSTEM = implemented_system("dash", presets=PRESETS, run=run)
