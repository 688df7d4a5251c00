"""DASH: deterministic attention backward with critical-path-aware tile schedules ("DASH:
Deterministic Attention Scheduling for High-throughput Reproducible LLM Training", arXiv
2601.21824, ICLR 2026).

Public API:
- `attention(q, k, v, causal, schedule, deterministic)`: drop-in for SDPA with a Triton forward
  and a backward whose dQ reduction is summed in a fixed order (bitwise repeatable);
- `tile_plan(schedule, n_q, n_kv, causal=...)`: a schedule's visit order and accumulation turns;
- `simulate(plan, heads, n_sm, c, r)` / `compare_schedules(...)`: the DAG model's makespan;
- `reference_attention`, `KernelConfig`, and `SYSTEM` for `iclr26 run dash`.
"""

from dataclasses import replace as _replace

from iclr26.catalog import implemented_system
from iclr26.dash.flash_attention import DQ_MODES, KernelConfig, attention, reference_attention
from iclr26.dash.schedules import SCHEDULES, TilePlan, tile_plan
from iclr26.dash.simulator import SimResult, compare_schedules, simulate
from iclr26.dash.system import DashConfig, run

__all__ = [
    "DQ_MODES",
    "SCHEDULES",
    "DashConfig",
    "KernelConfig",
    "SimResult",
    "TilePlan",
    "attention",
    "compare_schedules",
    "reference_attention",
    "simulate",
    "tile_plan",
]

_BENCH = DashConfig(train_steps=20)
PRESETS = {
    "smoke": _replace(
        _BENCH,
        sim_seq_lens=(1024, 2048),
        sim_r=(0.25,),
        check_len=20,
        check_heads=1,
        train_steps=2,
        train_len=16,
    ),
    "demo": _BENCH,  # the bench run already takes well under the demo's 2 minutes
    "bench": _BENCH,  # the README figures
    # The paper's setting on one GPU: bf16, head_dim 128, sequence 1k-16k at 16k tokens.
    "paper": _replace(
        _BENCH,
        device="cuda",
        dtype="bfloat16",
        check_len=1000,
        check_batch=2,
        check_heads=4,
        check_head_dim=128,
        check_repeats=3,
        train_steps=50,
        train_len=1024,
        train_dim=256,
        bench_seq_lens=(1024, 2048, 4096, 8192, 16384),
    ),
}
SYSTEM = implemented_system("dash", presets=PRESETS, run=run)
