"""The `dash` system: the DAG model's predicted backward time per schedule, the Triton kernels'
correctness and bitwise repeatability per schedule, a determinism check of a small training run,
and (on a GPU) backward TFLOP/s per schedule next to the atomic variant and PyTorch SDPA."""

from __future__ import annotations

import math

import torch

from iclr26.catalog import implemented_system
from iclr26.core import ClaimCheck, Report, RunContext, Table, set_seed
from iclr26.core.config import with_changes
from iclr26.core.device import DeviceUnavailable
from iclr26.core.records import pyplot, save_figure
from iclr26.core.system import preset_table
from iclr26.dash.config import DTYPES, DashConfig
from iclr26.dash.flash_attention import attention, interpreting, reference_attention
from iclr26.dash.schedules import SCHEDULES
from iclr26.dash.simulator import compare_schedules

_DTYPES = {name: getattr(torch, name) for name in DTYPES}


def _simulate(cfg: DashConfig, ctx: RunContext) -> tuple[Table, dict]:
    """Predicted backward makespans (units of c) of every schedule, both masks."""
    rows, pred = [], {}
    cases = [(c, r, s) for c in (True, False) for r in cfg.sim.r for s in cfg.sim.seq_lens]
    with ctx.progress("DAG model (cases)", total=len(cases)) as advance:
        for causal, r, seq in cases:
            heads = (cfg.sim.tokens // seq) * (2048 // cfg.sim.head_dim)
            n_q, n_kv = math.ceil(seq / cfg.sim.block_m), math.ceil(seq / cfg.sim.block_n)
            bm, bn = cfg.sim.block_m, cfg.sim.block_n
            res = compare_schedules(n_q, n_kv, causal, heads, cfg.sim.sms, 1.0, r, block_m=bm, block_n=bn)
            base = res["ascending"].makespan
            for s in SCHEDULES:
                pred[(causal, r, seq, s)] = res[s].makespan
            rows.append(
                ["causal" if causal else "full", r, seq, heads, base]
                + [base / res[s].makespan for s in ("descending", "shift")]
                + [res["shift"].lower_bound]
            )
            advance()
    table = Table(
        f"DAG model: backward makespan (units of one tile's compute c) and predicted speedup over FA3's "
        f"ascending order; {cfg.sim.sms} SMs, tiles {cfg.sim.block_m}×{cfg.sim.block_n}, "
        f"{cfg.sim.tokens} tokens, head_dim {cfg.sim.head_dim}",
        ["mask", "r/c", "seq", "heads", "ascending", "descending ×", "shift ×", "work bound"],
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


def _bench(cfg: DashConfig, ctx: RunContext) -> tuple[Table | None, dict]:
    """Backward TFLOP/s per schedule, our atomic variant and SDPA (GPU only)."""
    if cfg.device != "cuda" or not cfg.gpu.seq_lens:
        return None, {}
    import torch.nn.functional as F

    def timed(fn, reps: int = 10) -> float:
        fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / reps

    rows, measured = [], {}
    d = cfg.gpu.head_dim
    variants = [(s, "det") for s in SCHEDULES] + [("ascending", "atomic"), ("sdpa", "sdpa")]
    with ctx.progress("GPU backward (cases)", total=2 * len(cfg.gpu.seq_lens)) as advance:
        for causal in (True, False):
            for seq in cfg.gpu.seq_lens:
                b, h = max(1, 16384 // seq), 2048 // d
                g = torch.Generator(device="cuda").manual_seed(cfg.seed)
                q, k, v, do = (
                    torch.randn(b, h, seq, d, device="cuda", dtype=_DTYPES[cfg.dtype], generator=g)
                    for _ in range(4)
                )
                q, k, v = (x.requires_grad_() for x in (q, k, v))
                flops = 2.5 * 4 * b * h * seq * seq * d / (2 if causal else 1)
                row = ["causal" if causal else "full", seq]
                for s, kind in variants:
                    if kind == "sdpa":
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    else:
                        o = attention(q, k, v, causal, schedule=s, deterministic=kind == "det")
                    ms = timed(lambda o=o, x=(q, k, v), g=do: torch.autograd.grad(o, x, g, retain_graph=True))
                    measured[(causal, seq, s, kind)] = flops / ms / 1e9
                    row.append(flops / ms / 1e9)
                rows.append(row)
                advance()
    cols = ["mask", "seq", *[f"{s} (det.)" for s in SCHEDULES], "ours atomic", "SDPA default"]
    return Table(f"Backward TFLOP/s, head_dim {d}, {cfg.dtype}, 16k tokens", cols, rows), measured


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


def run(cfg: DashConfig, ctx: RunContext) -> Report:
    """Simulate, check the kernels, train twice, and (GPU) time the backward."""
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise DeviceUnavailable("device=cuda but no GPU is visible; use --set device=cpu")
    if cfg.device == "cpu" and not interpreting():
        raise DeviceUnavailable(
            "device=cpu runs the Triton kernels in Triton's interpreter: set TRITON_INTERPRET=1 before "
            "Python starts, or use --set device=cuda on a GPU"
        )
    sim_table, pred = _simulate(cfg, ctx)
    check_table = _check_kernels(cfg, ctx)
    train_table, _ = _train_twice(cfg, ctx)
    bench_table, measured = _bench(cfg, ctx)
    tables = [sim_table, check_table, train_table] + ([bench_table] if bench_table else [])
    seq, r = max(cfg.sim.seq_lens), cfg.sim.r[0]
    if measured:  # the paper's claim on hardware: a DASH schedule's deterministic backward vs FA3's order
        L = max(cfg.gpu.seq_lens)
        best = max(("descending", "shift"), key=lambda s: measured[(True, L, s, "det")])
        claim = ClaimCheck(
            f"causal backward TFLOP/s at seq {L}",
            best,
            measured[(True, L, best, "det")],
            "ascending (FA3 order)",
            measured[(True, L, "ascending", "det")],
        )
    else:  # on CPU: the DAG model's prediction
        best = min(("descending", "shift"), key=lambda s: pred[(True, r, seq, s)])
        claim = ClaimCheck(
            f"predicted causal backward makespan at seq {seq}, r/c={r} (DAG model)",
            best,
            pred[(True, r, seq, best)],
            "ascending (FA3 order)",
            pred[(True, r, seq, "ascending")],
            higher_is_better=False,
        )
    return Report(tables=tables, figures=[_figure(pred, cfg, ctx)], claim_check=claim)


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
