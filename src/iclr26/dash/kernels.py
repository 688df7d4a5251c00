"""Triton kernels: a FlashAttention-2-style forward that saves the log-sum-exp, and a backward that
computes dK, dV per KV block and accumulates dQ in one of three ways.

Backward, per work item (one KV block j of one head, or a pair of blocks for causal shift):
for each Q tile i the plan lists (DASH §3),
    Sᵀ = K Qᵢᵀ,  Pᵀ = exp(Sᵀ·scale − LSEᵢ),  dV += Pᵀ dOᵢ,  dPᵀ = V dOᵢᵀ,
    dSᵀ = Pᵀ ∘ (dPᵀ − Δᵢ),  dK += dSᵀ Qᵢ,  dQᵢ ⊕= dS K            (FlashAttention-2, Alg. 2)
with Δᵢ = rowsum(dOᵢ ∘ Oᵢ). The ⊕ is the reduction the paper schedules:

- ``DQ_ORDERED`` (deterministic): spin on the Q tile's turn counter until it equals this step's
  turn, read-add-write the fp32 accumulator, then release the next turn. Every dQ tile is
  summed in the plan's fixed order whatever the timing: bitwise repeatable.
- ``DQ_ORDERED_LAZY`` (deterministic): the same turns, but each turn is released one step late,
  after the next tile's matmuls, so the release fence finds the store already done instead of
  waiting for it; the next KV block waits for that release. Same adds, same order, same bits.
- ``DQ_ATOMIC`` (non-deterministic): fp32 atomic adds, the order is whatever the hardware does.
- ``DQ_DEFERRED`` (deterministic, no cross-program waits): each contribution is written to its own
  (tile, turn) slot and `reduce_partials` sums the slots in turn order afterwards. The same order
  as ``DQ_ORDERED``, and under ``TRITON_INTERPRET=1`` the same bits (tested); it is how the turn
  order is tested there, since the interpreter's one-program-at-a-time execution deadlocks any wait
  on a later program (DESIGN.md). On the H200 the bits differ from ``DQ_ORDERED`` (both fixed and
  repeatable), we think because the compiler folds ``acc + dS·K`` into the MMA accumulator.

The backward is persistent: a fixed number of programs (at most one per SM, all resident) walk
the work items in order, so a wave of a head's items runs together (see `schedules.py`).
"""

from __future__ import annotations

import triton
import triton.language as tl

DQ_ORDERED = 0
DQ_ATOMIC = 1
DQ_DEFERRED = 2
DQ_ORDERED_LAZY = 3
LOG2E = 1.4426950408889634


@triton.jit(do_not_specialize=["n_heads", "len_q", "len_k"])
def attention_fwd_kernel(
    Q, K, V, O, LSE,
    stride_qb, stride_qh, stride_qm,
    stride_kb, stride_kh, stride_kn,
    stride_vb, stride_vh, stride_vn,
    stride_ob, stride_oh, stride_om,
    n_heads, len_q, len_k, qk_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    IEEE: tl.constexpr,
):  # fmt: skip
    """One program per (Q tile, batch·head): online softmax over the KV blocks (FA-2, Alg. 1)."""
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)  # 64-bit offsets: tensors may exceed 2^31 elements
    b = bh // n_heads
    h = bh % n_heads
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(
        Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :],
        mask=offs_m[:, None] < len_q,
        other=0.0,
    )
    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    hi = len_k
    if CAUSAL:
        hi = tl.minimum((pid_m + 1) * BLOCK_M, len_k)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(
            k_base + cols[:, None] * stride_kn + offs_d[None, :], mask=cols[:, None] < len_k, other=0.0
        )
        v = tl.load(
            v_base + cols[:, None] * stride_vn + offs_d[None, :], mask=cols[:, None] < len_k, other=0.0
        )
        if IEEE:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = s * qk_scale  # log2 domain: scale · log2(e)
        keep = cols[None, :] < len_k
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        if IEEE:
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(
        O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :],
        acc.to(O.dtype.element_ty),
        mask=offs_m[:, None] < len_q,
    )
    tl.store(LSE + bh * len_q + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < len_q)  # log2-sum-exp2


@triton.jit
def _load_q_tile(Q, DO, LSE, DELTA, b, h, bh, i, stride_qb, stride_qh, stride_qm, len_q, offs_m0, offs_d,
                 BLOCK_M: tl.constexpr):  # fmt: skip
    """Qᵢ, dOᵢ, LSEᵢ, Δᵢ of Q tile i (rows past len_q read as zeros)."""
    rows = i * BLOCK_M + offs_m0
    row_ok = rows < len_q
    base = b * stride_qb + h * stride_qh + rows[:, None] * stride_qm + offs_d[None, :]
    q = tl.load(Q + base, mask=row_ok[:, None], other=0.0)
    do = tl.load(DO + base, mask=row_ok[:, None], other=0.0)
    lse = tl.load(LSE + bh * len_q + rows, mask=row_ok, other=0.0)
    delta = tl.load(DELTA + bh * len_q + rows, mask=row_ok, other=0.0)
    return q, do, lse, delta


@triton.jit(
    do_not_specialize=[
        "n_heads",
        "len_q",
        "len_k",
        "n_q_tiles",
        "n_slots",
        "slots_padded",
        "n_items",
        "max_steps",
        "max_turns",
    ]
)
def attention_bwd_kernel(
    Q, K, V, DO, LSE, DELTA, DQ_ACC, DQ_PARTIAL, DK, DV, LOCKS,
    PLAN_KV, PLAN_LEN, PLAN_Q, PLAN_TURN,
    stride_qb, stride_qh, stride_qm,
    stride_kb, stride_kh, stride_kn,
    stride_vb, stride_vh, stride_vn,
    stride_db, stride_dh, stride_dm,
    n_heads, len_q, len_k, n_q_tiles, n_slots, slots_padded, n_items, max_steps, max_turns,
    qk_scale, sm_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    N_PHASES: tl.constexpr,
    DQ_MODE: tl.constexpr,
    IEEE: tl.constexpr,
    PREFETCH: tl.constexpr,
):  # fmt: skip
    """Persistent backward: program p takes work items p, p+G, ...; see the module docstring."""
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    offs_m0 = tl.arange(0, BLOCK_M)
    offs_n0 = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    for item in range(pid, n_items, n_programs):
        bh = (item // slots_padded).to(tl.int64)  # 64-bit offsets: tensors may exceed 2^31 elements
        slot = item % slots_padded
        b = bh // n_heads
        h = bh % n_heads
        if slot < n_slots:
            step0 = 0
            for phase in tl.static_range(N_PHASES):
                j = tl.load(PLAN_KV + slot * N_PHASES + phase)
                n_steps = tl.load(PLAN_LEN + slot * N_PHASES + phase)
                if j >= 0:
                    cols = j * BLOCK_N + offs_n0
                    kv_mask = cols[:, None] < len_k
                    k = tl.load(
                        K + b * stride_kb + h * stride_kh + cols[:, None] * stride_kn + offs_d[None, :],
                        mask=kv_mask,
                        other=0.0,
                    )
                    v = tl.load(
                        V + b * stride_vb + h * stride_vh + cols[:, None] * stride_vn + offs_d[None, :],
                        mask=kv_mask,
                        other=0.0,
                    )
                    dk = tl.zeros((BLOCK_N, HEAD_DIM), tl.float32)
                    dv = tl.zeros((BLOCK_N, HEAD_DIM), tl.float32)
                    pending = LOCKS + bh * n_q_tiles  # DQ_ORDERED_LAZY: counter still to release
                    has_pending = 0
                    i_next = tl.load(PLAN_Q + slot * max_steps + step0)
                    q_n, do_n, lse_n, delta_n = _load_q_tile(
                        Q, DO, LSE, DELTA, b, h, bh, i_next, stride_qb, stride_qh, stride_qm, len_q, offs_m0,
                        offs_d, BLOCK_M,
                    )  # fmt: skip
                    for step in range(step0, step0 + n_steps):
                        i = tl.load(PLAN_Q + slot * max_steps + step)
                        rows = i * BLOCK_M + offs_m0
                        row_ok = rows < len_q
                        if PREFETCH:  # this step's tiles were loaded last step; load the next step's now
                            q, do, lse, delta = q_n, do_n, lse_n, delta_n
                            nxt = tl.minimum(step + 1, step0 + n_steps - 1)
                            i_next = tl.load(PLAN_Q + slot * max_steps + nxt)
                            q_n, do_n, lse_n, delta_n = _load_q_tile(
                                Q, DO, LSE, DELTA, b, h, bh, i_next, stride_qb, stride_qh, stride_qm, len_q,
                                offs_m0, offs_d, BLOCK_M,
                            )  # fmt: skip
                        else:
                            q, do, lse, delta = _load_q_tile(
                                Q, DO, LSE, DELTA, b, h, bh, i, stride_qb, stride_qh, stride_qm, len_q,
                                offs_m0, offs_d, BLOCK_M,
                            )  # fmt: skip
                        dq_ptrs = (
                            DQ_ACC + (bh * n_q_tiles * BLOCK_M + rows[:, None]) * HEAD_DIM + offs_d[None, :]
                        )
                        if DQ_MODE == 0:
                            # Look at the turn counter before the matmuls: when our turn has already
                            # come (the stall-free case shift scheduling aims at), the accumulator's
                            # load overlaps the compute instead of following it.
                            turn = tl.load(PLAN_TURN + slot * max_steps + step)
                            lock = LOCKS + bh * n_q_tiles + i
                            seen = tl.atomic_add(lock, 0, sem="acquire")
                            ready = row_ok[:, None] & ((offs_d[None, :] * 0 + seen) == turn)
                            acc = tl.load(dq_ptrs, mask=ready, other=0.0, volatile=True)
                        if IEEE:
                            s_t = tl.dot(k, tl.trans(q), input_precision="ieee")
                        else:
                            s_t = tl.dot(k, tl.trans(q))
                        p_t = tl.math.exp2(s_t * qk_scale - lse[None, :])  # Pᵀ
                        keep = (cols[:, None] < len_k) & row_ok[None, :]
                        if CAUSAL:
                            keep = keep & (rows[None, :] >= cols[:, None])
                        p_t = tl.where(keep, p_t, 0.0)
                        if IEEE:
                            dv += tl.dot(p_t.to(do.dtype), do, input_precision="ieee")
                            dp_t = tl.dot(v, tl.trans(do), input_precision="ieee")
                        else:
                            dv += tl.dot(p_t.to(do.dtype), do)
                            dp_t = tl.dot(v, tl.trans(do))
                        ds_t = (p_t * (dp_t - delta[None, :])).to(q.dtype)  # dSᵀ
                        if IEEE:
                            dk += tl.dot(ds_t, q, input_precision="ieee")
                            dq = tl.dot(tl.trans(ds_t), k, input_precision="ieee")
                        else:
                            dk += tl.dot(ds_t, q)
                            dq = tl.dot(tl.trans(ds_t), k)
                        if DQ_MODE == 3:
                            # Release the previous step's turn only now: its store has long reached
                            # L2, so the release fence no longer waits on it. Then take this turn.
                            if has_pending == 1:
                                tl.debug_barrier()
                                tl.atomic_add(pending, 1, sem="release")
                            turn = tl.load(PLAN_TURN + slot * max_steps + step)
                            lock = LOCKS + bh * n_q_tiles + i
                            seen = tl.atomic_add(lock, 0, sem="acquire")
                            while seen != turn:
                                seen = tl.atomic_add(lock, 0, sem="acquire")
                            acc = tl.load(dq_ptrs, mask=row_ok[:, None], other=0.0, volatile=True)
                            tl.store(dq_ptrs, acc + dq, mask=row_ok[:, None])
                            pending = lock
                            has_pending = 1
                        elif DQ_MODE == 0:
                            if seen != turn:  # not yet: spin until the previous turn is released
                                while seen != turn:
                                    seen = tl.atomic_add(lock, 0, sem="acquire")
                                acc = tl.load(dq_ptrs, mask=row_ok[:, None], other=0.0, volatile=True)
                            tl.store(dq_ptrs, acc + dq, mask=row_ok[:, None])
                            tl.debug_barrier()
                            tl.atomic_add(lock, 1, sem="release")
                        elif DQ_MODE == 1:
                            tl.atomic_add(dq_ptrs, dq, mask=row_ok[:, None], sem="relaxed")
                        else:
                            turn = tl.load(PLAN_TURN + slot * max_steps + step)
                            part = (
                                DQ_PARTIAL
                                + ((bh * n_q_tiles + i) * max_turns + turn) * BLOCK_M * HEAD_DIM
                                + offs_m0[:, None] * HEAD_DIM
                                + offs_d[None, :]
                            )
                            tl.store(part, dq)
                    if DQ_MODE == 3:
                        if has_pending == 1:
                            tl.debug_barrier()
                            tl.atomic_add(pending, 1, sem="release")
                    base = b * stride_db + h * stride_dh + cols[:, None] * stride_dm + offs_d[None, :]
                    tl.store(DK + base, (dk * sm_scale).to(DK.dtype.element_ty), mask=kv_mask)
                    tl.store(DV + base, dv.to(DV.dtype.element_ty), mask=kv_mask)
                step0 += n_steps
