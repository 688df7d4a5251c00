"""The DAG model of the deterministic attention backward (DASH §3) and a simulator of it.

README section
--------------
**The model.** One *work item* is one KV block of one head (a pair of blocks for causal shift): it
runs on one SM and walks over Q tiles. Each step t is two tasks on that SM: a compute task C (cost
``c``: recompute S and P, dV, dP, dS, dK and the dQ contribution) and a reduction task R (cost
``r``: add the dQ contribution into the Q tile's fp32 accumulator in global memory). Deterministic
mode fixes the order of the reductions into each Q tile (the *turns* of `schedules.TilePlan`), so
the DAG has three kinds of edges (DASH §3):

- C(t) → R(t) of the same item (a contribution is added after it is computed);
- R(t−1) → C(t) of the same item (the SM does compute, then reduction, serially);
- R(same head, same Q tile, turn k−1) → R(turn k) (the serialised reduction chain of a Q tile).

Work items are numbered head-major (ℓ = head·n_slots + slot) and dispatched like the GPU's block
scheduler dispatches a grid: in index order, each to the SM that frees first (greedy list
scheduling; ``dispatch="round_robin"`` instead pins item ℓ to SM ℓ mod n_sm). An item holds its SM
from its start until its last reduction ends, waiting included. The makespan is the longest path
of this DAG once the SM edges (previous item on the same SM → first task of the next) are added;
`simulate` computes it event by event, item chain by item chain, and raises ``ValueError`` when the
order contains a cycle (on the GPU: spin-waits that never end).

**Assumptions.** Every tile costs the same (no cheaper masked diagonal tiles, no phase-switch cost
unless ``switch_cost`` is set); no memory contention; an SM runs one item at a time; the GPU's
dispatcher is in-order and greedy. ``overlap=True`` relaxes the serial SM: the reduction runs on
its own unit (FA3's dQ-writer warp) and C(t) waits only for C(t−1) and R(t−2) (one dQ tile in
flight), while R(t) still waits for R(t−1).

**The paper's formulas** (n SMs, m heads, per-step costs c and r; causal mask with square tiles and
as many KV blocks and Q tiles as SMs): descending Q-tile iteration gives T_desc ≈ m·(n+1)(c+r)/2 +
(n−1)·r (DASH §4.1; we read it in themoonlight.io's review of arXiv 2601.21824 — the paper's own
text was not reachable from here); shift scheduling is optimal within the DAG model for full and
causal masks (DASH abstract and §4.2; the fork's ``ShiftScheduler``/``ShiftDependency``). Our model
gives, under the same assumptions and exactly: FA3's ascending order T_asc = m·n(c+r) + (n−1)·r for
the causal mask (every KV block j waits for blocks 0..j−1 at its first Q tile, so the short items
hold their SMs as long as the long ones) and T_asc = T_desc = m·M(c+r) + (n−1)·r for the full mask
with M ≥ n Q tiles (our derivation, not a formula read in the paper); T_desc equals the paper's
formula exactly when m is even and c ≥ r (otherwise it is an approximation: odd m leaves half a
head's work on half the SMs, r > c lets the reduction chains dominate, and one head alone takes
n(c+r), its longest item); shift meets
the work bound: M(c+r) per head for the full mask, m·(n+1)(c+r)/2 for the causal mask with n and m
even (two heads of n/2 paired items per round of n SMs).

**What the tests confirm** (``tests/dash/test_simulator.py``): every equality of the paragraph
above on grids of (n, M, m, c, r), shift = the lower bound and ascending strictly above it whenever
r > 0; descending < ascending for causal masks also outside the formula's assumptions (odd heads,
r > c, block_n = 2·block_m); every schedule's turns a permutation per Q tile, with the expected
number of contributors, and deadlock-free on a grid of sizes (waves smaller than the slots,
block_n = 2·block_m); a cyclic plan and a wave larger than the SMs rejected, naming the cycle or
the waiting chain; the simulated node times equal an independent longest-path computation on the
explicit DAG, and the dispatch equals greedy list scheduling in item order.

**Where the model differs from the fork.** The fork counts waves over the whole grid (item index
// 132), so a head can straddle two waves with parts of different sizes; here every head has the
same `TilePlan` with waves of ``wave_size`` slots. With 128 KV blocks on 132 SMs, shift therefore
leaves 4 SMs idle per round in our model (utilization ≤ 128/132).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

import numpy as np

from iclr26.core.validation import check_in
from iclr26.dash.schedules import SCHEDULES, TilePlan, tile_plan

DISPATCH = ("greedy", "round_robin")


@dataclass(frozen=True, eq=False)
class SimResult:
    """Times of one simulated backward pass: makespan, bounds, stalls and the per-SM / per-item record.

    ``total_work`` sums every item's *isolated* duration (serial: Σ(c+r) over its steps); ``stall``
    is all SM time before the makespan not spent on that work (n_sm·makespan − total_work: pipeline
    bubbles plus the idle tail); ``wait`` is the part of it spent holding an item while waiting for
    another item's reduction (the bubbles alone). ``lower_bound`` = max(total_work/n_sm, longest
    item) holds for any dispatch; ``sm_busy``/``sm_idle`` are per SM (busy = work of its items).
    ``c_start``/``r_start`` (items × steps, NaN past the end) are filled when ``trace=True``.
    """

    schedule: str
    causal: bool
    heads: int
    n_sm: int
    c: float
    r: float
    overlap: bool
    dispatch: str
    makespan: float
    lower_bound: float
    total_work: float
    stall: float
    wait: float
    utilization: float
    sm_busy: np.ndarray
    sm_idle: np.ndarray
    item_sm: np.ndarray
    item_start: np.ndarray
    item_finish: np.ndarray
    c_start: np.ndarray | None = None
    r_start: np.ndarray | None = None

    @property
    def sm_work_bound(self) -> float:
        """Largest total work on one SM under the dispatch that happened (a bound for that assignment)."""
        return float(self.sm_busy.max())

    def summary(self) -> dict[str, float | str | bool | int]:
        """The scalar fields, for a results table."""
        keys = ("schedule", "causal", "heads", "n_sm", "c", "r", "overlap", "dispatch", "makespan")
        row = {k: getattr(self, k) for k in keys}
        row.update(
            lower_bound=self.lower_bound,
            total_work=self.total_work,
            stall=self.stall,
            wait=self.wait,
            utilization=self.utilization,
        )
        return row


def check_turns(plan: TilePlan) -> dict[int, int]:
    """Number of contributors per Q tile; raise ValueError unless each tile's turns are exactly 0..k−1."""
    seen: dict[int, list[int]] = {}
    for s in range(plan.n_slots):
        for _, i, t in plan.steps(s):
            if i < 0 or i >= plan.n_q:
                raise ValueError(f"slot {s} visits Q tile {i}, outside 0..{plan.n_q - 1}")
            seen.setdefault(i, []).append(t)
    for i, turns in seen.items():
        if sorted(turns) != list(range(len(turns))):
            raise ValueError(
                f"Q tile {i}: turns must be a permutation of 0..{len(turns) - 1}, got {sorted(turns)}"
            )
    return {i: len(t) for i, t in sorted(seen.items())}


def _isolated_duration(costs: list[float], r: float, overlap: bool) -> float:
    """Duration of one item's chain with no reduction ever waiting for another item."""
    if not overlap:
        return float(sum(costs) + r * len(costs))
    c_end = r_end = r_prev = 0.0
    for cost in costs:  # C(t) after C(t−1) and R(t−2); R(t) after C(t) and R(t−1)
        c_end = max(c_end, r_prev) + cost
        r_prev, r_end = r_end, max(c_end, r_end) + r
    return r_end


def simulate(
    plan: TilePlan,
    heads: int,
    n_sm: int,
    c: float,
    r: float,
    overlap: bool = False,
    *,
    dispatch: str = "greedy",
    switch_cost: float = 0.0,
    trace: bool = False,
) -> SimResult:
    """Simulate `heads` heads of `plan` on `n_sm` SMs, each step costing `c` (compute) then `r` (reduce)."""
    if heads < 1 or n_sm < 1:
        raise ValueError(f"heads and n_sm must be >= 1, got heads={heads}, n_sm={n_sm}")
    if min(c, r, switch_cost) < 0:
        raise ValueError(f"costs must be >= 0, got c={c}, r={r}, switch_cost={switch_cost}")
    check_in("dispatch", dispatch, DISPATCH)
    counts = check_turns(plan)
    k_max = max(counts.values())
    n_slots, n_items = plan.n_slots, heads * plan.n_slots
    head_stride = plan.n_q * k_max

    # Per slot (identical for every head): key q·k_max + turn of each step's reduction, the key of
    # its turn predecessor (−1 for turn 0), and each step's compute cost.
    keys: list[list[int]] = []
    preds: list[list[int]] = []
    costs: list[list[float]] = []
    owner: dict[int, tuple[int, int]] = {}  # key -> (slot, step), for naming a deadlock
    for s in range(n_slots):
        ks, ps, cs, t = [], [], [], 0
        for p in range(plan.n_phases):
            for u in range(int(plan.phase_len[s, p])):
                i, k = int(plan.q[s, t]), int(plan.turn[s, t])
                ks.append(i * k_max + k)
                ps.append(i * k_max + k - 1 if k > 0 else -1)
                cs.append(c + (switch_cost if (p > 0 and u == 0) else 0.0))
                owner[i * k_max + k] = (s, t)
                t += 1
        keys.append(ks)
        preds.append(ps)
        costs.append(cs)
    work = [_isolated_duration(cs, r, overlap) for cs in costs]

    done = [-1.0] * (heads * head_stride)  # end time of each reduction, −1 until simulated
    waiter = [-1] * (heads * head_stride)  # the item blocked on this reduction (its turn successor)
    pos = [0] * n_items  # next step whose reduction is pending
    c_end_pending = [-1.0] * n_items  # end of C(pos) when already simulated
    c_last = [0.0] * n_items
    r_last = [0.0] * n_items
    r_last2 = [0.0] * n_items
    start = [-1.0] * n_items
    finish = [-1.0] * n_items
    item_sm = [-1] * n_items
    blocked_on = [-1] * n_items
    if trace:
        steps = plan.max_steps
        c_start = np.full((n_items, steps), np.nan)
        r_start = np.full((n_items, steps), np.nan)
    free: list[tuple[float, int]] = [(0.0, sm) for sm in range(n_sm)]
    worklist: list[int] = []

    def run() -> None:
        """Advance every runnable item as far as its reduction predecessors allow."""
        while worklist:
            item = worklist.pop()
            h, s = divmod(item, n_slots)
            base = h * head_stride
            ks, ps, cs = keys[s], preds[s], costs[s]
            t, ce = pos[item], c_end_pending[item]
            cl, rl, rl2 = c_last[item], r_last[item], r_last2[item]
            n = len(ks)
            while t < n:
                if ce < 0.0:  # C(t): after R(t−1) on a serial SM (DASH §3); overlap: C(t−1), R(t−2)
                    cst = (cl if cl > rl2 else rl2) if overlap else rl
                    ce = cst + cs[t]
                    if trace:
                        c_start[item, t] = cst
                # R(t): after C(t) and the previous turn of the same (head, Q tile) (DASH §3's
                # serialised dQ accumulation; the fork's semaphore wait_eq on the turn)
                p = ps[t]
                rst = ce
                if p >= 0:
                    pt = done[base + p]
                    if pt < 0.0:  # turn predecessor not reduced yet: park on it
                        waiter[base + p] = item
                        blocked_on[item] = base + p
                        break
                    if pt > rst:
                        rst = pt
                if overlap and rl > rst:
                    rst = rl
                key = base + ks[t]
                done[key] = re = rst + r
                if trace:
                    r_start[item, t] = rst
                w = waiter[key]
                if w >= 0:
                    waiter[key] = -1
                    blocked_on[w] = -1
                    worklist.append(w)
                rl2, rl, cl, ce = rl, re, ce, -1.0
                t += 1
            pos[item], c_end_pending[item] = t, ce
            c_last[item], r_last[item], r_last2[item] = cl, rl, rl2
            if t == n:
                finish[item] = rl
                if dispatch == "greedy":
                    heapq.heappush(free, (rl, item_sm[item]))
                elif item + n_sm < n_items:
                    launch(item + n_sm, rl, item_sm[item])

    def launch(item: int, t0: float, sm: int) -> None:
        start[item], item_sm[item] = t0, sm
        c_last[item] = r_last[item] = r_last2[item] = t0
        worklist.append(item)

    if dispatch == "greedy":
        last = 0.0
        for item in range(n_items):
            run()
            if not free:  # every SM holds an item that waits: start the chain at the first of them
                held = next(i for i in range(item) if finish[i] < 0.0)
                raise ValueError(
                    _deadlock_message(held, blocked_on, start, owner, n_slots, head_stride, plan)
                )
            t0, sm = heapq.heappop(free)
            last = max(last, t0)  # in-order dispatch: never before the previous item started
            launch(item, last, sm)
    else:
        for item in range(min(n_sm, n_items)):
            launch(item, 0.0, item)
    run()
    stuck = [i for i in range(n_items) if finish[i] < 0.0 and start[i] >= 0.0]
    if stuck:
        raise ValueError(_deadlock_message(stuck[0], blocked_on, start, owner, n_slots, head_stride, plan))

    item_sm_a = np.asarray(item_sm)
    start_a, finish_a = np.asarray(start), np.asarray(finish)
    work_a = np.asarray(work * heads)
    makespan = float(finish_a.max())
    total = float(work_a.sum())
    busy = np.bincount(item_sm_a, weights=work_a, minlength=n_sm)
    return SimResult(
        schedule=plan.schedule,
        causal=plan.causal,
        heads=heads,
        n_sm=n_sm,
        c=float(c),
        r=float(r),
        overlap=overlap,
        dispatch=dispatch,
        makespan=makespan,
        lower_bound=max(total / n_sm, float(work_a.max())),
        total_work=total,
        stall=n_sm * makespan - total,
        wait=float((finish_a - start_a - work_a).sum()),
        utilization=total / (n_sm * makespan) if makespan > 0 else 1.0,
        sm_busy=busy,
        sm_idle=makespan - busy,
        item_sm=item_sm_a,
        item_start=start_a,
        item_finish=finish_a,
        c_start=c_start if trace else None,
        r_start=r_start if trace else None,
    )


def _deadlock_message(
    item: int,
    blocked_on: list[int],
    start: list[float],
    owner: dict[int, tuple[int, int]],
    n_slots: int,
    head_stride: int,
    plan: TilePlan,
) -> str:
    """Follow the wait-for chain from `item` and describe the cycle (or the starved SMs) it reaches."""

    def name(it: int) -> str:
        h, s = divmod(it, n_slots)
        return f"item {it} (head {h}, slot {s}, KV {[int(j) for j in plan.kv[s] if j >= 0]})"

    chain: list[str] = []
    seen: dict[int, int] = {}
    it = item
    while start[it] >= 0.0 and blocked_on[it] >= 0 and it not in seen:
        seen[it] = len(chain)
        h, rest = divmod(blocked_on[it], head_stride)
        s, t = owner[rest]
        chain.append(f"{name(it)} waits at Q tile {int(plan.q[s, t])} for turn {int(plan.turn[s, t])}, from")
        it = h * n_slots + s
    if start[it] < 0.0:  # the chain ends at an item that never got an SM
        return (
            "deadlock: every SM holds an item that waits for an item never dispatched: "
            + " ".join([*chain, name(it)])
            + "; a wave larger than the SMs cannot be resident at once"
        )
    cycle = chain[seen[it] :] if it in seen else chain
    return "deadlock: cycle in the reduction order: " + " ".join([*cycle, name(it)])


def compare_schedules(
    n_q: int,
    n_kv: int,
    causal: bool,
    heads: int,
    n_sm: int,
    c: float,
    r: float,
    block_m: int = 64,
    block_n: int = 64,
    *,
    overlap: bool = False,
    dispatch: str = "greedy",
) -> dict[str, SimResult]:
    """Simulate every schedule of `schedules.SCHEDULES` on the same problem; waves of min(slots, n_sm)."""
    # A wave is at most n_sm items of a head: the first n_sm items of the grid are resident together
    # (the fork's kernels assume 132 resident programs); `tile_plan` clips it to the head's slots.
    out = {}
    for name in SCHEDULES:
        plan = tile_plan(name, n_q, n_kv, causal=causal, block_m=block_m, block_n=block_n, wave_size=n_sm)
        out[name] = simulate(plan, heads, n_sm, c, r, overlap, dispatch=dispatch)
    return out


def with_turns(plan: TilePlan, turn: np.ndarray) -> TilePlan:
    """The same visit order with another accumulation order (for experiments and tests)."""
    turn = np.asarray(turn, dtype=np.int32)
    if turn.shape != plan.turn.shape:
        raise ValueError(f"turn must have shape {plan.turn.shape}, got {turn.shape}")
    return replace(plan, turn=turn)
