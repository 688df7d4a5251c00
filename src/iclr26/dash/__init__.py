"""DASH: deterministic attention backward with critical-path-aware tile schedules ("DASH:
Deterministic Attention Scheduling for High-throughput Reproducible LLM Training", arXiv
2601.21824, ICLR 2026).

Public API:
- `attention(q, k, v, causal, schedule, deterministic)`: drop-in for SDPA with a Triton forward
  and a backward whose dQ reduction is summed in a fixed order (bitwise repeatable);
- `tile_plan(schedule, n_q, n_kv, causal=...)`: a schedule's visit order and accumulation turns;
- `simulate(plan, heads, n_sm, c, r)` / `compare_schedules(...)`: the DAG model's makespan;
- `reference_attention`, `KernelConfig`, `DQMode` / `DQ_MODES` (the dQ reductions), `DashConfig`
  (and its parts), and `SYSTEM` / `PRESETS` for `iclr26 run dash` (loaded from `system.py` on
  first use).
"""

from iclr26.core.system import system_attributes
from iclr26.dash.config import (
    DashConfig,
    KernelCheckConfig,
    SimulatorConfig,
    ThroughputConfig,
    TrainCheckConfig,
)
from iclr26.dash.flash_attention import KernelConfig, attention, reference_attention
from iclr26.dash.modes import DQ_MODES, DQMode
from iclr26.dash.schedules import SCHEDULES, TilePlan, tile_plan
from iclr26.dash.simulator import SimResult, compare_schedules, simulate

__all__ = [
    "DQ_MODES",
    "SCHEDULES",
    "DQMode",
    "DashConfig",
    "KernelCheckConfig",
    "KernelConfig",
    "SimResult",
    "SimulatorConfig",
    "ThroughputConfig",
    "TilePlan",
    "TrainCheckConfig",
    "attention",
    "compare_schedules",
    "reference_attention",
    "simulate",
    "tile_plan",
]

__getattr__ = system_attributes(__name__)
