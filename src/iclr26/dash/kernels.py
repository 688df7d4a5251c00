"""Triton kernels: a FlashAttention-2-style forward that saves the log-sum-exp, and a backward that
computes dK, dV per KV block and accumulates dQ in one of six ways.

Backward, per work item (one KV block j of one head, or a pair of blocks for causal shift):
for each Q tile i the plan lists (DASH §3),
    Sᵀ = K Qᵢᵀ,  Pᵀ = exp(Sᵀ·scale − LSEᵢ),  dV += Pᵀ dOᵢ,  dPᵀ = V dOᵢᵀ,
    dSᵀ = Pᵀ ∘ (dPᵀ − Δᵢ),  dK += dSᵀ Qᵢ,  dQᵢ ⊕= dS K            (FlashAttention-2, Alg. 2)
with Δᵢ = rowsum(dOᵢ ∘ Oᵢ). The ⊕ is the reduction the paper schedules (`modes.DQMode`, the one
source of the mode numbers; `DQ_MODE` is compared against the constants below):

- ``DQ_ORDERED`` (deterministic): spin on the Q tile's turn counter until it equals this step's
  turn, read-add-write the fp32 accumulator, then release the next turn. Every dQ tile is
  summed in the plan's fixed order whatever the timing: bitwise repeatable.
- ``DQ_ORDERED_LAZY`` (deterministic): the same turns, but each turn is released one step late,
  after the next tile's matmuls, so the release fence finds the store already done instead of
  waiting for it; the next KV block waits for that release. Same adds, same order, same bits.
- ``DQ_ATOMIC`` (non-deterministic): fp32 atomic adds, the order is whatever the hardware does.
- ``DQ_TWO_PASS`` (deterministic, no cross-program reduction at all): this kernel leaves dQ alone
  (its dS·K product is dead code the compiler drops) and `attention_bwd_dq_kernel` computes it in a
  second pass, one program per Q tile walking the KV blocks in order: dQᵢ = Σⱼ dSᵢⱼ Kⱼ with Pᵢⱼ and
  dSᵢⱼ recomputed (the split of Triton's fused-attention tutorial backward). It costs the recomputed
  QKᵀ and dO·Vᵀ products (about 2 of the backward's 5 matmuls again) and needs no spin.
- ``DQ_PARTIALS`` (deterministic, no spin, no recomputation): each KV block j writes its
  contribution dSᵢⱼ Kⱼ to its own slice of an fp32 workspace [n_kv_blocks, B·H, L, d], and
  `attention_bwd_dq_reduce_kernel`, one program per Q tile, sums the slices in ascending j:
  dQᵢ = ((dQᵢ₀ + dQᵢ₁) + dQᵢ₂) + ... The order is fixed by j alone, so every schedule gives the
  same dQ bits. It costs n_kv_blocks × dQ's size in memory, written once and read once (at 16k
  tokens, head_dim 128, 128-row KV blocks: 16 GiB).
- ``DQ_DEFERRED`` (deterministic, no cross-program waits): each contribution is written to its own
  (tile, turn) slot and `reduce_partials` sums the slots in turn order afterwards. The same order
  as ``DQ_ORDERED``, and under the interpreter the same bits (tested); it is how the turn order
  is tested there, since the interpreter's one-program-at-a-time execution deadlocks any wait on a
  later program (README, "Two more dQ modes"). On the H200 the bits differ from ``DQ_ORDERED``
  (both fixed and repeatable), we think because the compiler folds ``acc + dS·K`` into the MMA
  accumulator.

The backward is persistent: a fixed number of programs (at most one per SM, all resident) walk
the work items in order, so a wave of a head's items runs together (see `schedules.py`).

Every `tl.dot` takes its input precision from the `PRECISION` constexpr (``"ieee"`` for fp32
inputs, Triton's default ``"tf32"`` otherwise, where it changes nothing for fp16/bf16 operands).

On CPU tensors the kernels run in Triton's interpreter, which `TRITON_INTERPRET=1` switches on
when Triton is first imported: the entry point sets it (the tests' conftest, the CLI,
`benchmarks/smoke_results.py`), never this package.
"""

from __future__ import annotations

import triton
import triton.language as tl

from iclr26.dash.modes import DQMode

LOG2E = 1.4426950408889634
DQ_ORDERED = tl.constexpr(int(DQMode.ORDERED))
DQ_ATOMIC = tl.constexpr(int(DQMode.ATOMIC))
DQ_DEFERRED = tl.constexpr(int(DQMode.DEFERRED))
DQ_ORDERED_LAZY = tl.constexpr(int(DQMode.ORDERED_LAZY))
DQ_TWO_PASS = tl.constexpr(int(DQMode.TWO_PASS))
DQ_PARTIALS = tl.constexpr(int(DQMode.PARTIALS))


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
    PRECISION: tl.constexpr,
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
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION)
        s = s * qk_scale  # log2 domain: scale · log2(e)
        keep = cols[None, :] < len_k
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(
        O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :],
        acc.to(O.dtype.element_ty),
        mask=offs_m[:, None] < len_q,
    )
    tl.store(LSE + bh * len_q + offs_m, m_i + tl.math.log2(l_i), mask=offs_m < len_q)  # log2-sum-exp2


# -- backward: one KV block's pieces ------------------------------------------------------------


@triton.jit
def _load_kv_block(K, V, b, h, j, stride_kb, stride_kh, stride_kn, stride_vb, stride_vh, stride_vn, len_k,
                   offs_n0, offs_d, BLOCK_N: tl.constexpr):  # fmt: skip
    """Key positions, their mask, Kⱼ and Vⱼ of KV block j (rows past len_k read as zeros)."""
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
    return cols, kv_mask, k, v


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


@triton.jit
def _recompute_p_t(k, q, lse, rows, cols, row_ok, len_k, qk_scale, CAUSAL: tl.constexpr,
                   PRECISION: tl.constexpr):  # fmt: skip
    """Pᵀ = exp2(K Qᵢᵀ · scale·log2 e − LSEᵢ) from the forward's statistics, zero where masked."""
    s_t = tl.dot(k, tl.trans(q), input_precision=PRECISION)  # Sᵀ
    p_t = tl.math.exp2(s_t * qk_scale - lse[None, :])  # Pᵀ
    keep = (cols[:, None] < len_k) & row_ok[None, :]
    if CAUSAL:
        keep = keep & (rows[None, :] >= cols[:, None])
    return tl.where(keep, p_t, 0.0)


@triton.jit
def _tile_grads(p_t, q, k, v, do, delta, dk, dv, PRECISION: tl.constexpr):
    """dV += Pᵀ dOᵢ, dSᵀ = Pᵀ ∘ (V dOᵢᵀ − Δᵢ), dK += dSᵀ Qᵢ (FA-2, Alg. 2); also Q tile i's dQ
    contribution dS K, still unscaled."""
    dv += tl.dot(p_t.to(do.dtype), do, input_precision=PRECISION)
    dp_t = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # dPᵀ
    ds_t = (p_t * (dp_t - delta[None, :])).to(q.dtype)  # dSᵀ
    dk += tl.dot(ds_t, q, input_precision=PRECISION)
    dq = tl.dot(tl.trans(ds_t), k, input_precision=PRECISION)
    return dk, dv, dq


@triton.jit
def _store_dk_dv(DK, DV, dk, dv, b, h, cols, kv_mask, stride_db, stride_dh, stride_dm, offs_d, sm_scale):
    """Write KV block j's dK (scaled) and dV in the inputs' dtype."""
    base = b * stride_db + h * stride_dh + cols[:, None] * stride_dm + offs_d[None, :]
    tl.store(DK + base, (dk * sm_scale).to(DK.dtype.element_ty), mask=kv_mask)
    tl.store(DV + base, dv.to(DV.dtype.element_ty), mask=kv_mask)


@triton.jit
def _dq_tile_offsets(bh, n_q_tiles, rows, offs_d, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """Element offsets of Q tile rows `rows` of head `bh` in the (B·H, L_pad, d) fp32 dQ accumulator."""
    return (bh * n_q_tiles * BLOCK_M + rows[:, None]) * HEAD_DIM + offs_d[None, :]


@triton.jit
def _kv_blocks_reaching(i, len_k, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """How many KV blocks (from j = 0) reach Q tile i: all of them, or under a causal mask those
    before the tile's last row."""
    n_kv = tl.cdiv(len_k, BLOCK_N)
    if CAUSAL:
        n_kv = tl.minimum(n_kv, tl.cdiv((i + 1) * BLOCK_M, BLOCK_N))
    return n_kv


# -- backward: the dQ reductions ----------------------------------------------------------------


@triton.jit
def _wait_turn(lock, seen, turn):
    """Spin on a Q tile's turn counter `lock`, last read as `seen`, until it reads `turn`."""
    while seen != turn:
        seen = tl.atomic_add(lock, 0, sem="acquire")


@triton.jit
def _ordered_peek(lock, dq_ptrs, turn, row_ok, offs_d):
    """DQ_ORDERED, before the matmuls: read the turn counter; when our turn has already come (the
    stall-free case shift scheduling aims at), load the accumulator now, so that the load overlaps
    the compute instead of following it (else the masked load reads zeros, redone after the wait)."""
    seen = tl.atomic_add(lock, 0, sem="acquire")
    ready = row_ok[:, None] & ((offs_d[None, :] * 0 + seen) == turn)
    acc = tl.load(dq_ptrs, mask=ready, other=0.0, volatile=True)
    return seen, acc


@triton.jit
def _ordered_add(lock, dq_ptrs, dq, acc, seen, turn, row_ok):
    """DQ_ORDERED, after the matmuls: wait for the turn if it had not come, add, release the next."""
    if seen != turn:  # not yet: spin until the previous turn is released
        _wait_turn(lock, seen, turn)
        acc = tl.load(dq_ptrs, mask=row_ok[:, None], other=0.0, volatile=True)
    tl.store(dq_ptrs, acc + dq, mask=row_ok[:, None])
    tl.debug_barrier()
    tl.atomic_add(lock, 1, sem="release")


@triton.jit
def _lazy_add(lock, dq_ptrs, dq, turn, row_ok):
    """DQ_ORDERED_LAZY: wait for this step's turn and add; the caller releases it one step later."""
    _wait_turn(lock, tl.atomic_add(lock, 0, sem="acquire"), turn)
    acc = tl.load(dq_ptrs, mask=row_ok[:, None], other=0.0, volatile=True)
    tl.store(dq_ptrs, acc + dq, mask=row_ok[:, None])


@triton.jit
def _lazy_release(pending, has_pending):
    """DQ_ORDERED_LAZY: release the turn still held on counter `pending`, if any."""
    if has_pending == 1:
        tl.debug_barrier()
        tl.atomic_add(pending, 1, sem="release")


@triton.jit
def _deferred_store(DQ_PARTIAL, dq, bh, n_q_tiles, i, turn, max_turns, offs_m0, offs_d,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):  # fmt: skip
    """DQ_DEFERRED: write the contribution to its own (Q tile, turn) slot (`reduce_partials` sums them)."""
    part = (
        DQ_PARTIAL
        + ((bh * n_q_tiles + i) * max_turns + turn) * BLOCK_M * HEAD_DIM
        + offs_m0[:, None] * HEAD_DIM
        + offs_d[None, :]
    )
    tl.store(part, dq)


@triton.jit
def _partials_store(DQ_PARTIAL, dq, j, bh, n_bh, n_q_tiles, rows, offs_d, HEAD_DIM: tl.constexpr,
                    BLOCK_M: tl.constexpr):  # fmt: skip
    """DQ_PARTIALS: write KV block j's contribution to Q tile i (`rows`) into its own slice
    [j, bh, rows] of the [n_kv_blocks, B·H, L_pad, d] workspace (`attention_bwd_dq_reduce_kernel`
    sums the slices). The whole tile is stored: padded rows hold zeros (P is masked there)."""
    row0 = (j.to(tl.int64) * n_bh + bh) * n_q_tiles * BLOCK_M  # 64-bit: the workspace may exceed 2^31
    tl.store(DQ_PARTIAL + (row0 + rows[:, None]) * HEAD_DIM + offs_d[None, :], dq)


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
    PRECISION: tl.constexpr,
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
                    cols, kv_mask, k, v = _load_kv_block(
                        K, V, b, h, j, stride_kb, stride_kh, stride_kn, stride_vb, stride_vh, stride_vn,
                        len_k, offs_n0, offs_d, BLOCK_N,
                    )  # fmt: skip
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
                        dq_ptrs = DQ_ACC + _dq_tile_offsets(bh, n_q_tiles, rows, offs_d, BLOCK_M, HEAD_DIM)
                        if DQ_MODE == DQ_ORDERED:
                            turn = tl.load(PLAN_TURN + slot * max_steps + step)
                            lock = LOCKS + bh * n_q_tiles + i
                            seen, acc = _ordered_peek(lock, dq_ptrs, turn, row_ok, offs_d)
                        p_t = _recompute_p_t(
                            k, q, lse, rows, cols, row_ok, len_k, qk_scale, CAUSAL, PRECISION
                        )  # fmt: skip
                        dk, dv, dq = _tile_grads(p_t, q, k, v, do, delta, dk, dv, PRECISION)
                        if DQ_MODE == DQ_ORDERED_LAZY:
                            # Release the previous step's turn only now: its store has long reached
                            # L2, so the release fence no longer waits on it. Then take this turn.
                            _lazy_release(pending, has_pending)
                            turn = tl.load(PLAN_TURN + slot * max_steps + step)
                            lock = LOCKS + bh * n_q_tiles + i
                            _lazy_add(lock, dq_ptrs, dq, turn, row_ok)
                            pending = lock
                            has_pending = 1
                        elif DQ_MODE == DQ_ORDERED:
                            _ordered_add(lock, dq_ptrs, dq, acc, seen, turn, row_ok)
                        elif DQ_MODE == DQ_ATOMIC:
                            tl.atomic_add(dq_ptrs, dq, mask=row_ok[:, None], sem="relaxed")
                        elif DQ_MODE == DQ_PARTIALS:
                            _partials_store(
                                DQ_PARTIAL, dq, j, bh, n_items // slots_padded, n_q_tiles, rows, offs_d,
                                HEAD_DIM, BLOCK_M,
                            )  # fmt: skip
                        elif DQ_MODE == DQ_DEFERRED:
                            turn = tl.load(PLAN_TURN + slot * max_steps + step)
                            _deferred_store(
                                DQ_PARTIAL, dq, bh, n_q_tiles, i, turn, max_turns, offs_m0, offs_d, BLOCK_M,
                                HEAD_DIM,
                            )  # fmt: skip
                    if DQ_MODE == DQ_ORDERED_LAZY:
                        _lazy_release(pending, has_pending)
                    _store_dk_dv(DK, DV, dk, dv, b, h, cols, kv_mask, stride_db, stride_dh, stride_dm, offs_d,
                                 sm_scale)  # fmt: skip
                step0 += n_steps


# -- backward, two-pass dQ: the second pass ------------------------------------------------------


@triton.jit
def attention_bwd_dq_kernel(
    Q, K, V, DO, LSE, DELTA, DQ_ACC,
    stride_qb, stride_qh, stride_qm,
    stride_kb, stride_kh, stride_kn,
    stride_vb, stride_vh, stride_vn,
    n_heads, len_q, len_k, n_q_tiles, qk_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):  # fmt: skip
    """dQᵢ = Σⱼ (Pᵢⱼ ∘ (dOᵢ Vⱼᵀ − Δᵢ)) Kⱼ over KV blocks j in ascending order, for Q tile i =
    program_id(0) of head program_id(1) (FA-2, Alg. 2, with the KV loop inside); unscaled fp32 into
    DQ_ACC, as the other modes leave it. The tiles are the first pass's, transposed the same way, so
    each term is the same product the atomic mode adds."""
    i = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    b = bh // n_heads
    h = bh % n_heads
    offs_m0 = tl.arange(0, BLOCK_M)
    offs_n0 = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q, do, lse, delta = _load_q_tile(
        Q, DO, LSE, DELTA, b, h, bh, i, stride_qb, stride_qh, stride_qm, len_q, offs_m0, offs_d, BLOCK_M
    )  # fmt: skip
    rows = i * BLOCK_M + offs_m0
    row_ok = rows < len_q
    dq = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    for j in range(0, _kv_blocks_reaching(i, len_k, CAUSAL, BLOCK_M, BLOCK_N)):  # later blocks: masked
        cols, _, k, v = _load_kv_block(
            K, V, b, h, j, stride_kb, stride_kh, stride_kn, stride_vb, stride_vh, stride_vn, len_k, offs_n0,
            offs_d, BLOCK_N,
        )  # fmt: skip
        p_t = _recompute_p_t(k, q, lse, rows, cols, row_ok, len_k, qk_scale, CAUSAL, PRECISION)
        dp_t = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # dPᵀ
        ds_t = (p_t * (dp_t - delta[None, :])).to(q.dtype)  # dSᵀ
        dq += tl.dot(tl.trans(ds_t), k, input_precision=PRECISION)
    tl.store(
        DQ_ACC + _dq_tile_offsets(bh, n_q_tiles, rows, offs_d, BLOCK_M, HEAD_DIM), dq, mask=row_ok[:, None]
    )


# -- backward, per-KV-block dQ partials: the fixed-order sum --------------------------------------


@triton.jit(do_not_specialize=["len_q", "len_k", "n_q_tiles", "n_bh"])
def attention_bwd_dq_reduce_kernel(
    DQ_PARTIAL, DQ_ACC,
    len_q, len_k, n_q_tiles, n_bh,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):  # fmt: skip
    """dQᵢ = ((dQᵢ₀ + dQᵢ₁) + dQᵢ₂) + ... over the KV blocks j that reach Q tile i = program_id(0)
    of head program_id(1), read from the [n_kv_blocks, B·H, L_pad, d] workspace that the DQ_PARTIALS
    pass filled; unscaled fp32 into DQ_ACC, as the other modes leave it. Under a causal mask only the
    blocks j < ⌈(i+1)·BLOCK_M / BLOCK_N⌉ were written (the plans' `first_q_tile`), and only those are
    read, so the workspace needs no zeroing."""
    i = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    rows = i * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    tile = _dq_tile_offsets(bh, n_q_tiles, rows, offs_d, BLOCK_M, HEAD_DIM)
    slab = n_bh.to(tl.int64) * n_q_tiles * BLOCK_M * HEAD_DIM  # elements of one KV block's slice
    n_kv = _kv_blocks_reaching(i, len_k, CAUSAL, BLOCK_M, BLOCK_N)  # later blocks never reached it
    ptrs = DQ_PARTIAL + tile
    dq = tl.load(ptrs)  # j = 0 reaches every Q tile
    for _ in range(1, n_kv):  # j = 1, 2, ...: ascending, the fixed order
        ptrs += slab
        dq += tl.load(ptrs)
    tl.store(DQ_ACC + tile, dq, mask=rows[:, None] < len_q)
