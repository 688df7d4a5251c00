"""The DAG simulator against the paper's analytic claims, an explicit longest-path reference and
the deadlock checks (DASH §3–§4)."""

from __future__ import annotations

import heapq
import itertools

import numpy as np
import pytest

from iclr26.dash.schedules import SCHEDULES, TilePlan, first_q_tile, tile_plan
from iclr26.dash.simulator import check_turns, compare_schedules, simulate, with_turns


def _makespans(res):
    return {k: v.makespan for k, v in res.items()}


# -- full mask: shift is optimal, ascending = descending pays the reduction chain once ----------------


@pytest.mark.parametrize(
    ("n", "n_q", "heads", "c", "r"),
    [
        (4, 4, 1, 1.0, 0.5),
        (8, 12, 1, 1.0, 0.25),
        (5, 7, 1, 2.0, 3.0),
        (6, 6, 3, 1.0, 1.0),
        (8, 9, 2, 1.0, 0.5),
    ],
)
def test_full_mask_shift_meets_the_lower_bound_and_ascending_pays_the_chain(n, n_q, heads, c, r):
    res = compare_schedules(n_q, n, False, heads, n, c, r)
    t = _makespans(res)
    # Shift (§4.2): at every step the n KV blocks reduce into n distinct Q tiles in arrival order.
    assert t["shift"] == pytest.approx(heads * n_q * (c + r))
    assert t["shift"] == pytest.approx(res["shift"].lower_bound)
    assert res["shift"].wait == pytest.approx(0.0)
    # Ascending: KV block j reaches Q tile 0 behind j reductions, so the pipeline fills in (n−1)·r.
    assert t["ascending"] == pytest.approx(heads * n_q * (c + r) + (n - 1) * r)
    assert t["ascending"] > t["shift"]
    assert t["descending"] == t["ascending"]  # the same recursion with Q tiles relabelled i -> M−1−i


def test_full_mask_without_reduction_cost_has_no_stall():
    t = _makespans(compare_schedules(6, 6, False, 2, 6, 1.0, 0.0))
    assert t == {"ascending": 12.0, "descending": 12.0, "shift": 12.0}


# -- causal mask: the closed forms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "heads", "c", "r"),
    [
        (4, 2, 1.0, 0.5),
        (8, 4, 1.0, 0.25),
        (8, 6, 2.0, 1.0),
        (16, 2, 1.0, 1.0),
        (16, 4, 1.0, 0.5),
        (132, 2, 1.0, 0.5),
    ],
)
def test_causal_closed_forms(n, heads, c, r):
    res = compare_schedules(n, n, True, heads, n, c, r)
    t = _makespans(res)
    # FA3's ascending order: KV block j starts at Q tile j behind blocks 0..j−1 -> T = m·n(c+r) + (n−1)r.
    assert t["ascending"] == pytest.approx(heads * n * (c + r) + (n - 1) * r)
    # DASH §4.1: T_reversed ≈ m·(n+1)(c+r)/2 + (n−1)·r, exact here (even m, c ≥ r).
    assert t["descending"] == pytest.approx(heads * (n + 1) * (c + r) / 2 + (n - 1) * r)
    # Shift (§4.2): the work bound total/n_sm = m·(n+1)(c+r)/2.
    assert t["shift"] == pytest.approx(heads * (n + 1) * (c + r) / 2)
    assert t["shift"] == pytest.approx(res["shift"].lower_bound)
    assert t["shift"] < t["descending"] < t["ascending"]


@pytest.mark.parametrize(
    ("n_q", "n_kv", "heads", "c", "r", "bm", "bn"),
    [
        (8, 8, 3, 1.0, 0.25, 64, 64),  # odd number of heads
        (8, 8, 4, 1.0, 3.0, 64, 64),  # reduction dearer than compute
        (16, 8, 2, 1.0, 0.5, 64, 128),  # block_n = 2·block_m
        (24, 12, 5, 1.0, 0.5, 64, 128),
    ],
)
def test_causal_descending_beats_ascending_outside_the_formula(n_q, n_kv, heads, c, r, bm, bn):
    res = compare_schedules(n_q, n_kv, True, heads, n_kv, c, r, bm, bn)
    for v in res.values():
        assert v.makespan >= v.lower_bound - 1e-9
    assert res["descending"].makespan < res["ascending"].makespan
    assert res["descending"].wait < res["ascending"].wait


def test_causal_shift_with_wide_kv_blocks_meets_the_work_bound():
    res = compare_schedules(16, 8, True, 4, 8, 1.0, 0.5, block_m=64, block_n=128)
    assert res["shift"].makespan == pytest.approx(res["shift"].lower_bound)


def test_overlap_shift_meets_its_bound():
    # With reductions on their own unit an item alone takes M·max(c, r) + min(c, r).
    res = compare_schedules(16, 8, False, 4, 8, 1.0, 0.5, overlap=True)
    assert res["shift"].makespan == pytest.approx(4 * (16 * 1.0 + 0.5))
    assert res["ascending"].makespan > res["shift"].makespan
    serial = compare_schedules(16, 8, False, 4, 8, 1.0, 0.5)
    for name in SCHEDULES:
        assert res[name].makespan < serial[name].makespan


# -- accounting --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dispatch", ["greedy", "round_robin"])
def test_accounting_is_consistent(dispatch):
    for v in compare_schedules(12, 6, True, 3, 4, 1.0, 0.5, dispatch=dispatch).values():
        assert v.stall == pytest.approx(v.n_sm * v.makespan - v.total_work)
        assert v.sm_busy.sum() == pytest.approx(v.total_work)
        assert v.sm_idle == pytest.approx(v.makespan - v.sm_busy)
        assert 0.0 <= v.wait <= v.stall + 1e-9
        assert v.utilization == pytest.approx(v.total_work / (v.n_sm * v.makespan))
        assert v.makespan >= max(v.lower_bound, v.sm_work_bound) - 1e-9
        assert v.item_finish.max() == v.makespan
    rr = compare_schedules(8, 8, False, 3, 4, 1.0, 0.5, dispatch="round_robin")["ascending"]
    assert list(rr.item_sm) == [i % 4 for i in range(24)]


def test_switch_cost_is_charged_once_per_second_phase():
    plan = tile_plan("shift", 8, 8, causal=True)
    base = simulate(plan, 2, 4, 1.0, 0.5)
    more = simulate(plan, 2, 4, 1.0, 0.5, switch_cost=0.75)
    two_phase = int((plan.phase_len[:, 1:] > 0).any(axis=1).sum()) if plan.n_phases > 1 else 0
    assert more.total_work == pytest.approx(base.total_work + 2 * two_phase * 0.75)


# -- plans: turns, deadlock freedom, cycles ----------------------------------------------------------


GRID = [
    # (n_q, n_kv, causal, block_m, block_n)
    (6, 6, False, 64, 64),
    (9, 5, False, 64, 64),
    (7, 7, True, 64, 64),
    (10, 10, True, 64, 64),
    (12, 6, True, 64, 128),
    (13, 6, True, 64, 128),
    (14, 7, True, 64, 128),
]


@pytest.mark.parametrize(("n_q", "n_kv", "causal", "bm", "bn"), GRID)
def test_every_plan_has_permutation_turns_and_runs_without_deadlock(n_q, n_kv, causal, bm, bn):
    expected = {
        i: sum(first_q_tile(j, bm, bn) <= i for j in range(n_kv)) if causal else n_kv for i in range(n_q)
    }
    for name in SCHEDULES:
        n_slots = tile_plan(name, n_q, n_kv, causal=causal, block_m=bm, block_n=bn).n_slots
        for wave in sorted({1, 2, 3, max(1, n_slots - 1), n_slots}):
            plan = tile_plan(name, n_q, n_kv, causal=causal, block_m=bm, block_n=bn, wave_size=wave)
            assert check_turns(plan) == expected
            sms = (plan.wave_size, plan.wave_size + 1, 2 * plan.n_slots)  # 2·n_slots: every item resident
            for n_sm, dispatch in itertools.product(sms, ("greedy", "round_robin")):
                res = simulate(plan, 2, n_sm, 1.0, 0.5, dispatch=dispatch)
                assert res.makespan >= res.lower_bound - 1e-9


def _two_item_cycle() -> TilePlan:
    # Slot 0 visits Q tiles (0, 1), slot 1 visits (1, 0); each goes first at the tile it visits
    # second, so each first reduction waits for the other's second: a cycle.
    kv = np.array([[0], [1]], np.int32)
    return TilePlan(
        "ascending", False, 2, 2, 64, 64, 2, kv,
        phase_len=np.array([[2], [2]], np.int32),
        q=np.array([[0, 1], [1, 0]], np.int32),
        turn=np.array([[1, 0], [1, 0]], np.int32),
    )  # fmt: skip


def test_cyclic_plan_is_rejected_with_the_cycle_named():
    with pytest.raises(ValueError, match=r"cycle in the reduction order: item 0 .* waits at Q tile 0"):
        simulate(_two_item_cycle(), 1, 2, 1.0, 0.5)
    with pytest.raises(ValueError, match="cycle"):
        simulate(_two_item_cycle(), 1, 2, 1.0, 0.5, dispatch="round_robin")


def test_wave_larger_than_the_sms_is_a_deadlock():
    plan = tile_plan("shift", 8, 8, causal=False, wave_size=8)
    with pytest.raises(ValueError, match="waits for an item never dispatched"):
        simulate(plan, 1, 4, 1.0, 0.5)


def test_check_turns_rejects_a_repeated_turn():
    plan = tile_plan("ascending", 3, 3, causal=False)
    turn = plan.turn.copy()
    turn[1, 2] = 0
    with pytest.raises(ValueError, match="Q tile 2: turns must be a permutation"):
        check_turns(with_turns(plan, turn))
    with pytest.raises(ValueError, match="turn must have shape"):
        with_turns(plan, turn[:, :2])


def test_bad_arguments_name_the_field():
    plan = tile_plan("ascending", 3, 3, causal=False)
    with pytest.raises(ValueError, match="dispatch must be one of"):
        simulate(plan, 1, 2, 1.0, 0.5, dispatch="lpt")
    with pytest.raises(ValueError, match="costs must be >= 0"):
        simulate(plan, 1, 2, 1.0, -0.5)
    with pytest.raises(ValueError, match="n_sm must be >= 1"):
        simulate(plan, 1, 0, 1.0, 0.5)


# -- the simulation is the longest path of the explicit DAG ------------------------------------------


def _longest_path(plan: TilePlan, res, heads: int, c: float, r: float, overlap: bool, greedy: bool):
    """Start times of every node by Kahn's algorithm on the explicit DAG plus the SM and dispatch edges."""
    n_slots = plan.n_slots
    cost: dict[tuple, float] = {}
    preds: dict[tuple, list[tuple]] = {}
    chains: dict[tuple[int, int], dict[int, tuple]] = {}  # (head, Q tile) -> turn -> R node
    prev_on_sm: dict[int, int] = {}
    for item in range(heads * n_slots):
        h, s = divmod(item, n_slots)
        steps = plan.steps(s)
        # S(item): the item's dispatch, after the previous item on its SM (and, greedy, item − 1's).
        cost[("S", item)] = 0.0
        preds[("S", item)] = [("S", item - 1)] if greedy and item > 0 else []
        sm = int(res.item_sm[item])
        if sm in prev_on_sm:
            last = prev_on_sm[sm]
            preds[("S", item)].append(("R", last, len(plan.steps(last % n_slots)) - 1))
        prev_on_sm[sm] = item
        for t, (_, i, k) in enumerate(steps):
            cost[("C", item, t)], cost[("R", item, t)] = c, r
            if overlap:
                pc = [("S", item)] if t == 0 else [("C", item, t - 1)]
                pc += [("R", item, t - 2)] if t >= 2 else []
                pr = [("C", item, t)] + ([("R", item, t - 1)] if t >= 1 else [])
            else:
                pc = [("S", item)] if t == 0 else [("R", item, t - 1)]
                pr = [("C", item, t)]
            preds[("C", item, t)], preds[("R", item, t)] = pc, pr
            chains.setdefault((h, i), {})[k] = ("R", item, t)
    for chain in chains.values():
        for k in range(1, len(chain)):
            preds[chain[k]].append(chain[k - 1])
    succ: dict[tuple, list[tuple]] = {v: [] for v in preds}
    indeg = {v: len(p) for v, p in preds.items()}
    for v, p in preds.items():
        for u in p:
            succ[u].append(v)
    start: dict[tuple, float] = {}
    ready = [v for v, d in indeg.items() if d == 0]
    while ready:
        v = ready.pop()
        start[v] = max((start[u] + cost[u] for u in preds[v]), default=0.0)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    assert len(start) == len(preds), "the reference found a cycle"
    return start


@pytest.mark.parametrize("name", SCHEDULES)
@pytest.mark.parametrize(
    ("causal", "overlap", "dispatch"),
    [(True, False, "greedy"), (False, False, "greedy"), (True, True, "greedy"), (True, False, "round_robin")],
)
def test_simulation_equals_the_longest_path_of_the_dag(name, causal, overlap, dispatch):
    heads, n_sm, c, r = 3, 4, 1.0, 0.75
    plan = tile_plan(name, 10, 5, causal=causal, block_m=64, block_n=128 if causal else 64, wave_size=4)
    res = simulate(plan, heads, n_sm, c, r, overlap, dispatch=dispatch, trace=True)
    start = _longest_path(plan, res, heads, c, r, overlap, dispatch == "greedy")
    for item in range(heads * plan.n_slots):
        for t in range(len(plan.steps(item % plan.n_slots))):
            assert res.c_start[item, t] == pytest.approx(start[("C", item, t)])
            assert res.r_start[item, t] == pytest.approx(start[("R", item, t)])
    ends = [start[k] + r for k in start if k[0] == "R"]
    assert res.makespan == pytest.approx(max(ends))


def test_greedy_dispatch_is_list_scheduling_in_item_order():
    res = compare_schedules(12, 6, True, 5, 4, 1.0, 0.5)["descending"]
    free = [(0.0, sm) for sm in range(4)]
    for item in range(len(res.item_start)):
        t0, sm = heapq.heappop(free)
        assert (res.item_start[item], res.item_sm[item]) == (t0, sm)
        heapq.heappush(free, (res.item_finish[item], sm))
