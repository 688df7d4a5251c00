"""Data-parallel training under `torchrun` (or `accelerate launch`) with the one-process path
as the same code: without the launcher's environment everything here is a no-op on rank 0 of 1.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch
import torch.distributed as dist

T = TypeVar("T")
CPU = torch.device("cpu")


@dataclass(frozen=True)
class DistInfo:
    """Where this process sits: global rank, world size, local rank, and the device it owns."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = CPU

    @property
    def is_main(self) -> bool:
        """True on the process that writes files and logs (rank 0)."""
        return self.rank == 0


def launch_env() -> tuple[int, int, int]:
    """(rank, world size, local rank) as torchrun/accelerate set them; (0, 1, 0) on one process."""
    return (
        int(os.environ.get("RANK", "0")),
        int(os.environ.get("WORLD_SIZE", "1")),
        int(os.environ.get("LOCAL_RANK", "0")),
    )


def init_distributed(device: str = "cpu") -> DistInfo:
    """Join the process group that torchrun/accelerate describe in RANK/WORLD_SIZE/LOCAL_RANK.

    Uses NCCL with one GPU per process when `device` is cuda, else gloo on the CPU.
    """
    rank, world, local = launch_env()
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise RuntimeError("device='cuda' asked for, but torch sees no CUDA device")
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    if world > 1 and not dist.is_initialized():
        dist.init_process_group(backend="nccl" if dev.type == "cuda" else "gloo")
    return DistInfo(rank=rank, world_size=world, local_rank=local, device=dev)


def shard(items: Sequence[T], info: DistInfo) -> list[T]:
    """This rank's share of `items` (round-robin, so shares differ by at most one)."""
    return list(items[info.rank :: info.world_size])


def all_reduce_mean(t: torch.Tensor, info: DistInfo) -> torch.Tensor:
    """Average `t` over ranks in place (identity on one process); returns `t`."""
    if info.world_size > 1:
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        t /= info.world_size
    return t


def all_gather_objects(obj: object, info: DistInfo) -> list[object]:
    """Every rank's `obj`, in rank order (a one-element list on one process)."""
    if info.world_size == 1:
        return [obj]
    out: list[object] = [None] * info.world_size
    dist.all_gather_object(out, obj)
    return out


def cleanup() -> None:
    """Leave the process group if one was joined."""
    if dist.is_initialized():
        dist.destroy_process_group()
