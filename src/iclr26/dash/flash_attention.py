"""`attention(q, k, v, causal=..., schedule=...)`: a drop-in for `F.scaled_dot_product_attention`
whose backward is deterministic (bitwise repeatable) under any of DASH's schedules.

Shapes follow SDPA: (batch, heads, length, head_dim). On CUDA the Triton kernels run natively;
CPU tensors run in Triton's interpreter, where the ordered spin-wait is replaced by the equivalent
deferred reduction whenever the wait would need a later program. The interpreter is switched on by
``TRITON_INTERPRET=1`` before Triton is first imported, so the entry point sets it (the tests'
conftest, the CLI, `benchmarks/smoke_results.py`); this module only reads it (`interpreting`).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch
from torch.autograd.function import once_differentiable

from iclr26.core.config import ConfigError
from iclr26.core.device import DeviceUnavailable
from iclr26.core.validation import check_in, check_int
from iclr26.dash.modes import DQ_MODES, HEAD_DIMS, DQMode, interpreting
from iclr26.dash.schedules import SCHEDULES, TilePlan, tile_plan

_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@dataclass(frozen=True)
class KernelConfig:
    """Tile sizes and launch settings of the two kernels."""

    fwd_block_m: int = 128
    """Q tile of the forward (rows per program)"""
    fwd_block_n: int = 64
    """KV block of the forward's inner loop"""
    bwd_block_m: int = 64
    """Q tile of the backward (the dQ reduction unit)"""
    bwd_block_n: int = 128
    """KV block of the backward (one work item)"""
    fwd_warps: int = 8
    """warps per forward program"""
    fwd_stages: int = 3
    """software-pipelining stages of the forward"""
    bwd_warps: int = 8
    """warps per backward program"""
    bwd_stages: int = 2
    """software-pipelining stages of the backward"""
    programs: int | None = None
    """persistent backward programs; None: one per SM for shift, else one per work item"""
    prefetch: bool | None = None
    """backward loads the next Q tile's Q, dO, LSE, Δ while computing this one; None: on for
    head_dim <= 64 only (at 128 the extra registers cost more than the hidden latency, H200 sweep)"""

    def __post_init__(self) -> None:
        for name in ("fwd_block_m", "fwd_block_n", "bwd_block_m", "bwd_block_n"):
            size = check_int(f"KernelConfig.{name}", getattr(self, name), 16)
            if size & (size - 1):
                raise ConfigError(f"KernelConfig.{name} must be a power of two >= 16 (tl.dot), got {size}")
        for name in ("fwd_warps", "fwd_stages", "bwd_warps", "bwd_stages"):
            check_int(f"KernelConfig.{name}", getattr(self, name), 1)
        check_int("KernelConfig.programs", self.programs, 1, optional=True)


CPU_CONFIG = KernelConfig(16, 16, 16, 16, 4, 1, 4, 1)


def _kernels():
    """The Triton kernels module, imported on first use so that the rest of the package (plans, the
    DAG model, the system's config) loads without the `kernels` extra."""
    from iclr26.dash import kernels

    return kernels


def _dot_precision(dtype: torch.dtype) -> str:
    """The kernels' `tl.dot` input precision: IEEE fp32 for fp32 inputs; else Triton's default
    ``tf32``, which only concerns fp32 operands and so leaves fp16/bf16 dots as they are."""
    return "ieee" if dtype == torch.float32 else "tf32"


def reference_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False, sm_scale: float | None = None
) -> torch.Tensor:
    """Plain PyTorch softmax(QKᵀ·scale)V in fp32, the oracle of the tests."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else sm_scale
    s = torch.einsum("bhmd,bhnd->bhmn", q.float(), k.float()) * scale
    if causal:
        lq, lk = q.shape[-2], k.shape[-2]
        s = s.masked_fill(torch.ones(lq, lk, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.einsum("bhmn,bhnd->bhmd", s.softmax(-1), v.float()).to(q.dtype)


def _check_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, schedule: str) -> None:
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(
            f"q, k, v must be (batch, heads, length, head_dim); got {q.shape}, {k.shape}, {v.shape}"
        )
    if k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"shapes disagree: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    if min(q.shape[0], q.shape[1], q.shape[2], k.shape[2]) < 1:
        raise ValueError(f"batch, heads and lengths must be >= 1, got q {tuple(q.shape)}, k {tuple(k.shape)}")
    if q.shape[0] * q.shape[1] > 65535:
        raise ValueError(
            f"batch × heads must be <= 65535 (the forward grid's second axis), got {q.shape[0] * q.shape[1]}"
        )
    check_in("head_dim", q.shape[-1], HEAD_DIMS)
    if not (q.dtype == k.dtype == v.dtype) or q.dtype not in _DTYPES:
        raise ValueError(f"q, k, v must share one dtype of {_DTYPES}; got {q.dtype}, {k.dtype}, {v.dtype}")
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal attention needs len_q == len_k, got {q.shape[-2]} and {k.shape[-2]}")
    check_in("schedule", schedule, SCHEDULES)
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v must be on one device; got {q.device}, {k.device}, {v.device}")
    if q.device.type == "cpu" and not interpreting():
        raise DeviceUnavailable(
            "iclr26.dash.attention runs Triton kernels: pass CUDA tensors, or set TRITON_INTERPRET=1 "
            "before Python starts to run them slowly on CPU in Triton's interpreter"
        )
    if q.device.type == "cpu" and q.dtype == torch.bfloat16:
        raise ValueError("bf16 is not supported by the Triton CPU interpreter; use fp16 or fp32 on CPU")


def _config_for(q: torch.Tensor, config: KernelConfig | None) -> KernelConfig:
    if config is not None:
        return config
    return CPU_CONFIG if q.device.type == "cpu" else KernelConfig()


def _n_programs(q: torch.Tensor, cfg: KernelConfig, schedule: str) -> int:
    """Persistent programs of the backward. Shift waits on later KV blocks, so its waves must be
    resident at once: one program per SM (an SM limit under MPS that the device does not report
    would break this). The baselines only wait on lower-numbered programs (ascending turns), which
    the GPU dispatches first in practice (CUDA does not promise it; FA3's deterministic backward
    relies on the same), so they get one program per work item and the hardware's dispatch."""
    sms = (
        torch.cuda.get_device_properties(q.device).multi_processor_count if q.device.type == "cuda" else None
    )
    if cfg.programs is not None:
        if sms is not None and schedule == "shift" and cfg.programs > sms:
            raise ValueError(
                f"KernelConfig.programs={cfg.programs} exceeds the {sms} SMs: shift waits on programs of "
                "its own wave, which must all be resident at once"
            )
        return cfg.programs
    if sms is not None and schedule == "shift":
        return sms
    return 1 << 30  # one program per work item


@dataclass(frozen=True)
class Launch:
    """A plan laid out for a persistent grid: slots padded so that waves align with heads."""

    plan: TilePlan
    slots_padded: int
    programs: int
    key: tuple  # the `launch_plan` arguments that made it (the device tables' cache key)


@lru_cache(maxsize=64)
def launch_plan(
    schedule: str,
    causal: bool,
    n_q: int,
    n_kv: int,
    block_m: int,
    block_n: int,
    heads: int,
    max_programs: int,
) -> Launch:
    """Wave size and grid for `heads` heads on `max_programs` resident programs."""
    n_slots = (n_kv + 1) // 2 if (schedule == "shift" and causal) else n_kv
    if n_slots <= max_programs:  # whole heads per wave
        wave = n_slots
        programs = min(max_programs // n_slots, heads) * n_slots
        padded = n_slots
    else:  # a head spans k waves of equal size
        k = math.ceil(n_slots / max_programs)
        wave = math.ceil(n_slots / k)
        programs = wave
        padded = k * wave
    plan = tile_plan(schedule, n_q, n_kv, causal=causal, block_m=block_m, block_n=block_n, wave_size=wave)
    key = (schedule, causal, n_q, n_kv, block_m, block_n, heads, max_programs)
    return Launch(plan, padded, programs, key)


_DEVICE_TABLES: dict[tuple, tuple[torch.Tensor, ...]] = {}


def _tables(launch: Launch, device: torch.device) -> tuple[torch.Tensor, ...]:
    """The plan's int32 tables on `device`, cached by the plan's arguments (never by object id)."""
    key = (launch.key, str(device))
    if key not in _DEVICE_TABLES:
        if len(_DEVICE_TABLES) >= 256:
            _DEVICE_TABLES.clear()
        p = launch.plan
        _DEVICE_TABLES[key] = tuple(
            torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in (p.kv, p.phase_len, p.q, p.turn)
        )
    return _DEVICE_TABLES[key]


def attention_forward(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, sm_scale: float, cfg: KernelConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """Output O and the log2-sum-exp2 of each row (the backward's softmax statistics)."""
    k_ = _kernels()
    LOG2E, attention_fwd_kernel = k_.LOG2E, k_.attention_fwd_kernel

    b, h, lq, d = q.shape
    lk = k.shape[2]
    o = torch.empty_like(q)
    lse = torch.empty((b * h, lq), device=q.device, dtype=torch.float32)
    grid = (math.ceil(lq / cfg.fwd_block_m), b * h)
    with _on_device(q):
        attention_fwd_kernel[grid](
            q, k, v, o, lse,
            q.stride(0), q.stride(1), q.stride(2),
            k.stride(0), k.stride(1), k.stride(2),
            v.stride(0), v.stride(1), v.stride(2),
            o.stride(0), o.stride(1), o.stride(2),
            h, lq, lk, sm_scale * LOG2E,
            HEAD_DIM=d, CAUSAL=causal, BLOCK_M=cfg.fwd_block_m, BLOCK_N=cfg.fwd_block_n,
            PRECISION=_dot_precision(q.dtype),
            num_warps=cfg.fwd_warps, num_stages=cfg.fwd_stages,
        )  # fmt: skip
    return o, lse


def _on_device(t: torch.Tensor):
    """Launch Triton kernels on `t`'s GPU (not whichever is current)."""
    return torch.cuda.device(t.device) if t.device.type == "cuda" else contextlib.nullcontext()


def reduce_partials(partial: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """Sum the deferred dQ slots of each tile in turn order: ((p₀ + p₁) + p₂) + ...

    `partial` is (BH, M, T, BM, D) fp32, `counts` the number of valid turns of each Q tile (M,).
    """
    acc = partial[:, :, 0].clone()
    for t in range(1, partial.shape[2]):
        valid = (counts > t).view(1, -1, 1, 1)
        acc = torch.where(valid, acc + partial[:, :, t], acc)
    return acc


def sum_kv_partials(
    partial: torch.Tensor,
    dq_acc: torch.Tensor,
    len_q: int,
    len_k: int,
    causal: bool,
    block_m: int,
    block_n: int,
) -> torch.Tensor:
    """Sum the ``partials`` workspace over KV blocks in ascending order into `dq_acc`: dQᵢ =
    ((dQᵢ₀ + dQᵢ₁) + dQᵢ₂) + ..., reading only the blocks that reach Q tile i.

    `partial` is (N_kv, BH, L_pad, D) fp32 (L_pad = Q tiles × `block_m`), `dq_acc` (BH, L_pad, D)
    fp32; rows from `len_q` on are left as they were.
    """
    bh, lq_pad, d = dq_acc.shape
    with _on_device(partial):
        _kernels().attention_bwd_dq_reduce_kernel[(lq_pad // block_m, bh)](
            partial, dq_acc, len_q, len_k, lq_pad // block_m, bh,
            HEAD_DIM=d, CAUSAL=causal, BLOCK_M=block_m, BLOCK_N=block_n,
            num_warps=4,  # a streaming sum: no matmul to feed
        )  # fmt: skip
    return dq_acc


def attention_backward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    o: torch.Tensor,
    lse: torch.Tensor,
    do: torch.Tensor,
    causal: bool,
    sm_scale: float,
    schedule: str,
    dq_mode: str,
    cfg: KernelConfig,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dQ, dK, dV with the given schedule and dQ reduction."""
    k_ = _kernels()
    LOG2E, attention_bwd_kernel = k_.LOG2E, k_.attention_bwd_kernel

    check_in("dq_mode", dq_mode, DQ_MODES)
    b, h, lq, d = q.shape
    lk = k.shape[2]
    bm, bn = cfg.bwd_block_m, cfg.bwd_block_n
    n_q, n_kv = math.ceil(lq / bm), math.ceil(lk / bn)
    launch = launch_plan(schedule, causal, n_q, n_kv, bm, bn, b * h, _n_programs(q, cfg, schedule))
    plan = launch.plan
    if dq_mode.startswith("ordered") and interpreting() and not _sequential_safe(launch, b * h):
        raise _deadlock_error(dq_mode, schedule)
    plan_kv, plan_len, plan_q, plan_turn = _tables(launch, q.device)
    delta = (o.float() * do.float()).sum(-1).reshape(b * h, lq)  # Δ = rowsum(dO ∘ O)
    lq_pad = n_q * bm
    dq_acc = torch.zeros((b * h, lq_pad, d), device=q.device, dtype=torch.float32)
    locks = torch.zeros((b * h, n_q), device=q.device, dtype=torch.int32)
    max_turns = int(plan.turn.max()) + 1
    if dq_mode == "deferred":
        numel = b * h * n_q * max_turns * bm * d
        if numel >= 2**31:
            raise ValueError(
                f"dq_mode='deferred' keeps every dQ contribution ({numel * 4 / 2**30:.1f} GiB here); it is a "
                "test mode: use 'ordered', which sums in the same order, at this size"
            )
        partial = torch.zeros((b * h, n_q, max_turns, bm, d), device=q.device, dtype=torch.float32)
    elif dq_mode == "partials":  # one fp32 dQ slice per KV block; each slice read was written first
        partial = torch.empty((n_kv, b * h, lq_pad, d), device=q.device, dtype=torch.float32)
    else:
        partial = dq_acc  # unused
    dk = torch.empty_like(k)
    dv = torch.empty_like(v)
    n_items = b * h * launch.slots_padded
    prefetch = cfg.prefetch if cfg.prefetch is not None else d <= 64
    with _on_device(q):
        attention_bwd_kernel[(min(launch.programs, n_items),)](
            q, k, v, do, lse, delta, dq_acc, partial, dk, dv, locks,
            plan_kv, plan_len, plan_q, plan_turn,
            q.stride(0), q.stride(1), q.stride(2),
            k.stride(0), k.stride(1), k.stride(2),
            v.stride(0), v.stride(1), v.stride(2),
            dk.stride(0), dk.stride(1), dk.stride(2),
            h, lq, lk, n_q, plan.n_slots, launch.slots_padded, n_items, plan.max_steps, max_turns,
            sm_scale * LOG2E, sm_scale,
            HEAD_DIM=d, CAUSAL=causal, BLOCK_M=bm, BLOCK_N=bn, N_PHASES=plan.n_phases,
            DQ_MODE=int(DQMode.from_label(dq_mode)), PRECISION=_dot_precision(q.dtype), PREFETCH=prefetch,
            num_warps=cfg.bwd_warps, num_stages=cfg.bwd_stages,
        )  # fmt: skip
    if dq_mode == "two_pass":  # the second pass: dQ per Q tile, the KV loop inside
        with _on_device(q):
            k_.attention_bwd_dq_kernel[(n_q, b * h)](
                q, k, v, do, lse, delta, dq_acc,
                q.stride(0), q.stride(1), q.stride(2),
                k.stride(0), k.stride(1), k.stride(2),
                v.stride(0), v.stride(1), v.stride(2),
                h, lq, lk, n_q, sm_scale * LOG2E,
                HEAD_DIM=d, CAUSAL=causal, BLOCK_M=bm, BLOCK_N=bn, PRECISION=_dot_precision(q.dtype),
                num_warps=cfg.bwd_warps, num_stages=cfg.bwd_stages,
            )  # fmt: skip
    if dq_mode == "partials":
        sum_kv_partials(partial, dq_acc, lq, lk, causal, bm, bn)
    if dq_mode == "deferred":
        counts = torch.from_numpy(_turn_counts(plan)).to(q.device)
        dq_acc = reduce_partials(partial, counts).reshape(b * h, lq_pad, d)
    dq = (dq_acc[:, :lq] * sm_scale).to(q.dtype).reshape(b, h, lq, d)
    return dq, dk, dv


def _turn_counts(plan: TilePlan) -> np.ndarray:
    counts = np.zeros(plan.n_q, np.int64)
    valid = plan.q >= 0
    np.add.at(counts, plan.q[valid], 1)
    return counts


def _deadlock_error(dq_mode: str, schedule: str) -> RuntimeError:
    return RuntimeError(
        f"dq_mode={dq_mode!r} with schedule {schedule!r} would deadlock in the Triton interpreter "
        "(it runs one program at a time); use dq_mode='deferred', which sums in the same order"
    )


def _interpreter_can_spin(
    q: torch.Tensor, k: torch.Tensor, causal: bool, schedule: str, cfg: KernelConfig
) -> bool:
    """False only in the interpreter, when this shape's turns do not follow program order."""
    if not interpreting():
        return True
    heads = q.shape[0] * q.shape[1]
    launch = launch_plan(schedule, causal, *_tiles(q, k, cfg), heads, _n_programs(q, cfg, schedule))
    return _sequential_safe(launch, heads)


def _sequential_safe(launch: Launch, heads: int) -> bool:
    """Whether running programs one by one in index order satisfies every turn (interpreter)."""
    if launch.programs < heads * launch.slots_padded:
        return False
    done: dict[int, int] = {}
    for s in range(launch.plan.n_slots):
        for _, i, t in launch.plan.steps(s):
            if done.get(i, 0) != t:
                return False
            done[i] = t + 1
    return True


class DashAttentionFunction(torch.autograd.Function):
    """Autograd wrapper: Triton forward, scheduled deterministic (or atomic) backward."""

    @staticmethod
    def forward(ctx, q, k, v, causal, sm_scale, schedule, dq_mode, cfg):  # type: ignore[override]
        o, lse = attention_forward(q, k, v, causal, sm_scale, cfg)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.args = (causal, sm_scale, schedule, dq_mode, cfg)
        return o

    @staticmethod
    @once_differentiable
    def backward(ctx, do):  # type: ignore[override]
        q, k, v, o, lse = ctx.saved_tensors
        causal, sm_scale, schedule, dq_mode, cfg = ctx.args
        dq, dk, dv = attention_backward(
            q, k, v, o, lse, do.contiguous(), causal, sm_scale, schedule, dq_mode, cfg
        )
        return dq, dk, dv, None, None, None, None, None


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    sm_scale: float | None = None,
    schedule: str = "shift",
    deterministic: bool = True,
    dq_mode: str | None = None,
    config: KernelConfig | None = None,
) -> torch.Tensor:
    """softmax(QKᵀ·scale)V with DASH's scheduled backward; `deterministic` makes grads bitwise repeatable.

    `dq_mode` overrides the reduction: ``ordered`` (deterministic=True on GPU), ``atomic``
    (deterministic=False), ``deferred`` (deterministic, the interpreter's stand-in for ordered),
    ``ordered_lazy``, ``two_pass`` (deterministic: dQ in a second kernel, no cross-program sum) or
    ``partials`` (deterministic: each KV block's dQ in its own fp32 slice, summed in KV order by a
    second kernel; n_kv_blocks × dQ's size of workspace). `schedule` sets the dK/dV pass's visit
    order in every mode; only the spin-ordered modes (and ``deferred``) sum dQ in its turn order.
    """
    _check_inputs(q, k, v, causal, schedule)
    if dq_mode is not None:
        check_in("dq_mode", dq_mode, DQ_MODES)
    cfg = _config_for(q, config)
    if dq_mode is None:
        dq_mode = "ordered" if deterministic else "atomic"
        if dq_mode == "ordered" and not _interpreter_can_spin(q, k, causal, schedule, cfg):
            dq_mode = "deferred"
    elif dq_mode.startswith("ordered") and not _interpreter_can_spin(q, k, causal, schedule, cfg):
        raise _deadlock_error(dq_mode, schedule)
    if deterministic and dq_mode == "atomic":
        raise ValueError("deterministic=True cannot use dq_mode='atomic' (fp32 atomics sum in timing order)")
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else float(sm_scale)
    return DashAttentionFunction.apply(
        q.contiguous(), k.contiguous(), v.contiguous(), causal, scale, schedule, dq_mode, cfg
    )


def _tiles(q: torch.Tensor, k: torch.Tensor, cfg: KernelConfig) -> tuple[int, int, int, int]:
    return (
        math.ceil(q.shape[2] / cfg.bwd_block_m),
        math.ceil(k.shape[2] / cfg.bwd_block_n),
        cfg.bwd_block_m,
        cfg.bwd_block_n,
    )
