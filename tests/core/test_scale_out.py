import json
import textwrap

import pytest
import torch

from iclr26.core.distributed import DistInfo, all_gather_objects, all_reduce_mean, shard
from iclr26.core.parallel import parallel_map
from tests.torchrun import torchrun


def _square(x: int) -> int:
    return x * x


def _boom(x: int) -> int:
    if x == 2:
        raise ValueError("bad item")
    return x


def test_parallel_map_serial_order_and_errors():
    ticks = []
    assert parallel_map(_square, [3, 1, 2], on_result=ticks.append) == [9, 1, 4]
    assert sum(ticks) == 3
    with pytest.raises(RuntimeError, match="item 2 failed: bad item"):
        parallel_map(_boom, [0, 1, 2])
    with pytest.raises(ValueError, match="backend must be"):
        parallel_map(_square, [1], backend="dask")


def test_parallel_map_on_ray_matches_serial():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        items = list(range(10))
        assert parallel_map(_square, items, backend="ray") == parallel_map(_square, items)
        with pytest.raises(RuntimeError, match="item 2 failed"):
            parallel_map(_boom, [0, 1, 2, 3], backend="ray")
    finally:
        ray.shutdown()


def test_single_process_is_a_no_op():
    info = DistInfo()
    t = torch.tensor([2.0, 4.0])
    assert all_reduce_mean(t, info) is t and t.tolist() == [2.0, 4.0]
    assert shard(list(range(5)), info) == [0, 1, 2, 3, 4]
    assert all_gather_objects({"a": 1}, info) == [{"a": 1}]
    assert shard(list(range(5)), DistInfo(rank=1, world_size=2)) == [1, 3]


def test_torchrun_two_processes_agree_with_one(tmp_path):
    """The same script under torchrun with 2 CPU processes gives the single-process answer."""
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(f"""
        import json, torch
        from iclr26.core.distributed import (init_distributed, shard, all_reduce_mean,
                                             all_gather_objects, cleanup)
        info = init_distributed()
        mine = shard(list(range(10)), info)
        total = torch.tensor([float(sum(mine))])
        all_reduce_mean(total, info)
        total *= info.world_size
        ranks = all_gather_objects(info.rank, info)
        if info.is_main:
            out = {{"total": total.item(), "ranks": ranks, "world": info.world_size}}
            open({str(tmp_path / "out.json")!r}, "w").write(json.dumps(out))
        cleanup()
    """)
    )
    proc = torchrun(script, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads((tmp_path / "out.json").read_text())
    assert out == {"total": 45.0, "ranks": [0, 1], "world": 2}
