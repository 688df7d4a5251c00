"""The Triton forward/backward against plain PyTorch, every schedule × mask × dQ reduction, under
the interpreter on CPU (conftest sets TRITON_INTERPRET=1 when no GPU is present)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26.core.device import DeviceUnavailable
from iclr26.dash.flash_attention import (
    CPU_CONFIG,
    KernelConfig,
    _tables,
    attention,
    attention_backward,
    attention_forward,
    interpreting,
    launch_plan,
    reduce_partials,
    reference_attention,
    sum_kv_partials,
)
from iclr26.dash.modes import DQ_MODES, DQMode
from iclr26.dash.schedules import SCHEDULES

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _inputs(b=1, h=2, lq=40, lk=40, d=16, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(b, h, n, d, generator=g).to(DEVICE, dtype).requires_grad_() for n in (lq, lk, lk)]


def _grads(fn, q, k, v, seed=1):
    out = fn(q, k, v)
    g = torch.Generator().manual_seed(seed)
    do = torch.randn(out.shape, generator=g).to(out.device, out.dtype)
    return (out, *torch.autograd.grad(out, (q, k, v), do))


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(torch.int16 if t.element_size() == 2 else torch.int32)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("mode", ["ordered", "atomic", "deferred", "ordered_lazy", "two_pass", "partials"])
def test_matches_reference_fp32(causal, schedule, mode):
    q, k, v = _inputs()
    ref = _grads(lambda a, b, c: reference_attention(a, b, c, causal), q, k, v)
    if mode.startswith("ordered") and schedule == "shift" and interpreting():
        # shift's turns need a later program first: the interpreter refuses instead of hanging
        with pytest.raises(RuntimeError, match="deadlock"):
            _grads(lambda a, b, c: attention(a, b, c, causal, schedule=schedule, dq_mode=mode), q, k, v)
        return
    det = mode != "atomic"
    got = _grads(
        lambda a, b, c: attention(a, b, c, causal, schedule=schedule, deterministic=det, dq_mode=mode),
        q,
        k,
        v,
    )
    for name, x, y in zip(("o", "dq", "dk", "dv"), got, ref, strict=True):
        assert torch.allclose(x, y, atol=2e-5, rtol=1e-4), f"{name}: max err {(x - y).abs().max():.2e}"


@pytest.mark.parametrize("causal", [False, True])
def test_fp16_tails_and_batch(causal):
    """fp16, lengths not a multiple of any block, batch × heads, head_dim 32."""
    q, k, v = _inputs(b=2, h=3, lq=37, lk=37, d=32, dtype=torch.float16, seed=3)
    ref = _grads(lambda a, b, c: reference_attention(a, b, c, causal), q, k, v)
    for schedule in SCHEDULES:
        got = _grads(lambda a, b, c, s=schedule: attention(a, b, c, causal, schedule=s), q, k, v)
        for name, x, y in zip(("o", "dq", "dk", "dv"), got, ref, strict=True):
            err = (x.float() - y.float()).abs().max().item()
            assert err < 2e-2, f"{schedule} {name}: max err {err:.3e}"


def test_cross_attention_lengths_and_head_dim_64():
    """Full mask with len_q != len_k, head_dim 64."""
    q, k, v = _inputs(b=1, h=1, lq=24, lk=50, d=64, seed=5)
    ref = _grads(lambda a, b, c: reference_attention(a, b, c, False), q, k, v)
    got = _grads(lambda a, b, c: attention(a, b, c, False, schedule="shift"), q, k, v)
    for x, y in zip(got, ref, strict=True):
        assert torch.allclose(x, y, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
def test_rectangular_tiles_and_persistent_waves(causal):
    """block_n = 2·block_m, and fewer programs than work items (waves, padded slots)."""
    q, k, v = _inputs(b=1, h=3, lq=70, lk=70, d=16, seed=7)
    ref = _grads(lambda a, b, c: reference_attention(a, b, c, causal), q, k, v)
    configs = [
        KernelConfig(16, 16, 16, 32, 4, 1, 4, 1, programs=2, prefetch=not causal),
        KernelConfig(32, 16, 32, 16, 4, 1, 4, 1, programs=3, prefetch=causal),  # block_m > block_n
    ]
    for cfg in configs:
        for schedule in SCHEDULES:
            got = _grads(
                lambda a, b, c, s=schedule, f=cfg: attention(a, b, c, causal, schedule=s, config=f), q, k, v
            )
            for x, y in zip(got, ref, strict=True):
                assert torch.allclose(x, y, atol=2e-5, rtol=1e-4), (schedule, cfg)


@pytest.mark.skipif(not interpreting(), reason="on a GPU the compiler may fuse the add into the MMA (README)")
@pytest.mark.parametrize("schedule", ["ascending", "descending"])
@pytest.mark.parametrize("causal", [False, True])
def test_ordered_spin_equals_deferred_bitwise(schedule, causal):
    """Where the interpreter can run the spin-wait (turns in program order), the in-kernel ordered
    sum and the deferred fixed-order sum give the same bits: they are the same adds."""
    q, k, v = _inputs(b=1, h=2, lq=48, lk=48, d=16, dtype=torch.float16, seed=11)
    a = _grads(lambda x, y, z: attention(x, y, z, causal, schedule=schedule, dq_mode="ordered"), q, k, v)
    b = _grads(lambda x, y, z: attention(x, y, z, causal, schedule=schedule, dq_mode="deferred"), q, k, v)
    c = _grads(lambda x, y, z: attention(x, y, z, causal, schedule=schedule, dq_mode="ordered_lazy"), q, k, v)
    for x, y, z in zip(a, b, c, strict=True):
        assert torch.equal(_bits(x), _bits(y))
        assert torch.equal(_bits(x), _bits(z))


@pytest.mark.parametrize("causal", [False, True])
def test_deterministic_is_bitwise_repeatable(causal):
    q, k, v = _inputs(b=1, h=2, lq=45, lk=45, d=16, dtype=torch.float16, seed=13)
    for schedule in SCHEDULES:
        runs = [
            _grads(lambda a, b, c, s=schedule: attention(a, b, c, causal, schedule=s), q, k, v)
            for _ in range(2)
        ]
        for x, y in zip(*runs, strict=True):
            assert torch.equal(_bits(x), _bits(y)), schedule


@pytest.mark.parametrize("mode", ["two_pass", "partials"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    ("d", "lq", "lk"), [(16, 37, 37), (32, 45, 45), (64, 24, 50), (128, 33, 33), (256, 19, 19)]
)
def test_spin_free_dq_matches_float64_and_repeats_bitwise(mode, causal, d, lq, lk):
    """The spin-free deterministic dQ modes (issue 31: two-pass, per-KV-block partials) for every
    head dim, both masks and odd lengths: equal to the float64 reference within fp32 tolerance, and
    the same bits on a rerun. Partials run under shift, whose causal plan pairs two KV blocks per
    program (two phases), so the workspace slices come from both phases."""
    if causal and lq != lk:
        pytest.skip("causal needs square attention here")
    schedule = "shift" if mode == "partials" else "ascending"
    q, k, v = _inputs(b=1, h=2, lq=lq, lk=lk, d=d, seed=17 + d)
    ref = _grads(lambda a, b, c: reference_attention(a.double(), b.double(), c.double(), causal), q, k, v)
    runs = [
        _grads(lambda a, b, c: attention(a, b, c, causal, schedule=schedule, dq_mode=mode), q, k, v)
        for _ in range(2)
    ]
    for name, x, y in zip(("o", "dq", "dk", "dv"), runs[0], ref, strict=True):
        err = (x.double() - y).abs().max().item()
        assert err < 5e-5, f"{name}: max err {err:.2e}"
    for x, y in zip(*runs, strict=True):
        assert torch.equal(_bits(x), _bits(y))


@pytest.mark.skipif(not interpreting(), reason="on a GPU the compiler may fuse the add into the MMA (README)")
@pytest.mark.parametrize("causal", [False, True])
def test_partials_sum_in_kv_order_under_every_schedule(causal):
    """Partials sum dQ in ascending KV order whatever the schedule: the same dQ bits under all three,
    equal to the deferred sum under ascending (FA3's turn order) and to the two-pass sum."""
    q, k, v = _inputs(b=1, h=2, lq=45, lk=45, d=16, dtype=torch.float16, seed=23)
    dq = {
        s: _grads(lambda a, b, c, s=s: attention(a, b, c, causal, schedule=s, dq_mode="partials"), q, k, v)[1]
        for s in SCHEDULES
    }
    for mode in ("deferred", "two_pass"):
        dq[mode] = _grads(
            lambda a, b, c, m=mode: attention(a, b, c, causal, schedule="ascending", dq_mode=m), q, k, v
        )[1]
    for name, x in dq.items():
        assert torch.equal(_bits(x), _bits(dq["ascending"])), name


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_kv", "bm", "bn"), [(5, 5, 16, 16), (6, 3, 16, 32), (3, 6, 32, 16)])
def test_partials_reads_exactly_the_slices_each_plan_writes(causal, n_q, n_kv, bm, bn):
    """The partials workspace is not zeroed: the sum must read, for each Q tile, exactly the KV
    blocks that every schedule's plan sends there. Slices no plan writes hold NaN here; the sum of
    the written ones must come out finite and equal to the ascending-order sum, bitwise."""
    bh, d = 2, 16
    len_q = n_q * bm - 3  # tails in the last Q tile and KV block
    len_k = len_q if causal else n_kv * bn - 5
    assert -(-len_k // bn) == n_kv
    g = torch.Generator().manual_seed(29)
    values = torch.randn(n_kv, bh, n_q * bm, d, generator=g)
    for schedule in SCHEDULES:
        for programs in (1 << 30, 2):  # one program per work item; waves of 2 (padded slots)
            plan = launch_plan(schedule, causal, n_q, n_kv, bm, bn, bh, programs).plan
            partial = torch.full_like(values, float("nan"))
            for i, blocks in plan.contributors().items():
                for j in blocks:
                    partial[j, :, i * bm : (i + 1) * bm] = values[j, :, i * bm : (i + 1) * bm]
            dq = sum_kv_partials(partial, torch.zeros(bh, n_q * bm, d), len_q, len_k, causal, bm, bn)
            for i, blocks in plan.contributors().items():
                rows = slice(i * bm, min((i + 1) * bm, len_q))
                expect = values[0, :, rows].clone()
                for j in sorted(blocks)[1:]:
                    expect = expect + values[j, :, rows]
                assert sorted(blocks) == list(range(len(blocks))), (schedule, i, blocks)
                assert torch.equal(dq[:, rows], expect), (schedule, programs, i)
            assert not dq[:, len_q:].any(), "rows past len_q are left alone"


def test_deferred_sums_in_turn_order():
    """`reduce_partials` adds the slots of each tile in turn order, skipping unused turns."""
    g = torch.Generator().manual_seed(0)
    partial = torch.randn(2, 3, 4, 2, 2, generator=g) * torch.tensor([1e8, 1.0, -1e8, 1e-3]).view(
        1, 1, 4, 1, 1
    )
    counts = torch.tensor([4, 2, 1])
    out = reduce_partials(partial, counts)
    for i, n in enumerate(counts.tolist()):
        acc = partial[:, i, 0].clone()
        for t in range(1, n):
            acc = acc + partial[:, i, t]
        assert torch.equal(out[:, i], acc)


def test_schedule_changes_the_order_not_the_value():
    """Different schedules sum dQ in different fixed orders: equal within rounding, and each order
    is the one its plan states (checked through the deferred slots)."""
    q, k, v = _inputs(b=1, h=1, lq=64, lk=64, d=16, seed=17)
    outs = {
        s: _grads(lambda a, b, c, s=s: attention(a, b, c, False, schedule=s, dq_mode="deferred"), q, k, v)
        for s in SCHEDULES
    }
    for s in SCHEDULES:
        assert torch.allclose(outs[s][1], outs["ascending"][1], atol=1e-5)
    plan = launch_plan("shift", False, 4, 4, 16, 16, 1, 1 << 30).plan
    assert plan.contributors()[0] == [0, 3, 2, 1]  # Q tile 0: KV 0 at step 0, then 3, 2, 1


def test_forward_lse_is_log2_sum_exp2():
    q, k, v = _inputs(b=1, h=1, lq=20, lk=30, d=16, seed=19)
    _o, lse = attention_forward(q.detach(), k.detach(), v.detach(), False, 0.25, CPU_CONFIG)
    s = (q.detach() @ k.detach().transpose(-1, -2))[0, 0] * 0.25
    expect = torch.logsumexp(s, -1) / np.log(2.0)
    assert torch.allclose(lse[0], expect, atol=1e-5)


def test_backward_rejects_unknown_mode():
    q, k, v = _inputs(lq=16, lk=16)
    o, lse = attention_forward(q.detach(), k.detach(), v.detach(), False, 0.25, CPU_CONFIG)
    with pytest.raises(ValueError, match="dq_mode"):
        attention_backward(q, k, v, o, lse, torch.ones_like(o), False, 0.25, "shift", "fast", CPU_CONFIG)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"schedule": "zigzag"}, "schedule must be one of"),
        ({"deterministic": True, "dq_mode": "atomic"}, "deterministic=True cannot"),
        ({"dq_mode": "sloppy"}, "dq_mode must be one of"),
    ],
)
def test_bad_options(kwargs, match):
    q, k, v = _inputs(lq=16, lk=16)
    with pytest.raises(ValueError, match=match):
        attention(q, k, v, **kwargs)


def test_device_tables_follow_their_plan():
    """Tables are cached by the plan's arguments: many shapes never hand one plan's tables to another."""
    for n in range(1, 90):
        launch = launch_plan("shift", n % 2 == 0, n + 1, n + 1, 16, 16, 1, 8)
        kv, _, qt, turn = _tables(launch, torch.device("cpu"))
        assert np.array_equal(qt.numpy(), launch.plan.q) and np.array_equal(turn.numpy(), launch.plan.turn)
        assert np.array_equal(kv.numpy(), launch.plan.kv)


def test_bad_shapes_and_dtypes():
    q, k, v = _inputs(lq=16, lk=16)
    with pytest.raises(ValueError, match="lengths must be >= 1"):
        attention(q[:, :, :0], k, v)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="bf16 is not supported"):
            attention(q.bfloat16(), k.bfloat16(), v.bfloat16())
    with pytest.raises(ValueError, match="head_dim"):
        attention(q[..., :12], k[..., :12], v[..., :12])
    with pytest.raises(ValueError, match="len_q == len_k"):
        attention(q, k[:, :, :8], v[:, :, :8], causal=True)
    with pytest.raises(ValueError, match="one dtype"):
        attention(q, k.half(), v)
    with pytest.raises(ValueError, match="batch, heads, length, head_dim"):
        attention(q[0], k[0], v[0])


def test_drop_in_for_sdpa_in_a_model():
    """Swapping SDPA for ours in a tiny attention block leaves loss and gradients unchanged."""
    torch.manual_seed(0)
    proj = torch.nn.Linear(16, 3 * 16).to(DEVICE)
    x = torch.randn(2, 33, 16, device=DEVICE)

    def loss(attn):
        qkv = proj(x).view(2, 33, 3, 1, 16).permute(2, 0, 3, 1, 4)
        return attn(qkv[0], qkv[1], qkv[2]).square().mean()

    ref = loss(lambda a, b, c: torch.nn.functional.scaled_dot_product_attention(a, b, c, is_causal=True))
    (g_ref,) = torch.autograd.grad(ref, proj.weight)
    ours = loss(lambda a, b, c: attention(a, b, c, causal=True))
    (g,) = torch.autograd.grad(ours, proj.weight)
    assert torch.allclose(ours, ref, atol=1e-6)
    assert torch.allclose(g, g_ref, atol=1e-5)


def test_dq_modes_have_one_source():
    """The kernel's mode constants, the `dq_mode` names and `DQMode` are one table."""
    from iclr26.dash import kernels

    assert DQ_MODES == ("ordered", "atomic", "deferred", "ordered_lazy", "two_pass", "partials")
    for mode in DQMode:
        assert int(getattr(kernels, f"DQ_{mode.name}")) == mode.value
        assert DQMode.from_label(mode.label) is mode


def test_cpu_tensors_need_the_interpreter(monkeypatch):
    """The package never switches the interpreter on itself: without TRITON_INTERPRET=1, CPU
    tensors are refused with the fix, before any kernel runs."""
    q, k, v = (x.detach().cpu() for x in _inputs(lq=16, lk=16))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    with pytest.raises(DeviceUnavailable, match="set TRITON_INTERPRET=1"):
        attention(q, k, v)


def test_kernel_config_checks():
    with pytest.raises(ValueError, match=r"KernelConfig\.bwd_block_m must be a power of two"):
        KernelConfig(bwd_block_m=48)
    with pytest.raises(ValueError, match=r"KernelConfig\.bwd_block_n must be an int >= 16"):
        KernelConfig(bwd_block_n=8)
    with pytest.raises(ValueError, match=r"KernelConfig\.programs must be an int >= 1"):
        KernelConfig(programs=0)
