"""Embarrassingly parallel evaluation: the same `parallel_map` runs serially or on Ray.

`backend="ray"` starts a local Ray instance (or joins the cluster named by `RAY_ADDRESS`), so an
evaluation that runs on a laptop with `serial` scales out unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Backend = Literal["serial", "ray"]


def parallel_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    backend: Backend = "serial",
    num_cpus_per_task: float = 1.0,
    on_result: Callable[[int], None] | None = None,
) -> list[R]:
    """`[fn(x) for x in items]`, in input order, serially or as Ray tasks.

    `on_result(k)` is called as results arrive (e.g. a progress `advance`). An exception in a
    task is re-raised here with the index of the item that caused it.
    """
    if backend not in ("serial", "ray"):
        raise ValueError(f"backend must be 'serial' or 'ray', got {backend!r}")
    if backend == "serial":
        out = []
        for i, x in enumerate(items):
            try:
                out.append(fn(x))
            except Exception as e:
                raise RuntimeError(f"parallel_map: item {i} failed: {e}") from e
            if on_result:
                on_result(1)
        return out
    try:
        import ray
    except ImportError as e:
        raise ImportError("backend='ray' needs Ray: pip install 'iclr26[all]' or ray") from e
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    remote = ray.remote(num_cpus=num_cpus_per_task)(fn)
    refs = [remote.remote(x) for x in items]
    index = {ref: i for i, ref in enumerate(refs)}
    results: list[Any] = [None] * len(refs)
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            i = index[ref]
            try:
                results[i] = ray.get(ref)
            except Exception as e:
                raise RuntimeError(f"parallel_map: item {i} failed: {e}") from e
            if on_result:
                on_result(1)
    return results
