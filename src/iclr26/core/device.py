"""Device selection: CPU by default, CUDA only when asked for and present."""

from __future__ import annotations

import functools
import re

import torch

from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError

_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?|auto)$")


class DeviceUnavailable(UserError, RuntimeError):
    """The device asked for is not there (no CUDA build, no GPU, or too few GPUs)."""


def resolve_device(name: str = "cpu") -> torch.device:
    """Turn `cpu`, `cuda`, `cuda:N` or `auto` into a torch.device, with a clear error if absent."""
    if not isinstance(name, str) or not _DEVICE.match(name):
        raise ConfigError(f"device must be one of cpu, cuda, cuda:N, auto; got {name!r}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise DeviceUnavailable(
                f"device={name!r} was asked for but torch sees no CUDA device "
                f"(torch {torch.__version__}); use device=cpu, or install a CUDA build of torch"
            )
        index = int(name.split(":")[1]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise DeviceUnavailable(
                f"device={name!r}: only {torch.cuda.device_count()} CUDA device(s) are visible"
            )
    return torch.device(name)


def cpuinfo(field: str) -> str | None:
    """The value of `field` ("model name", "flags", ...) for the first CPU in /proc/cpuinfo; None
    where the file or the field is missing (not Linux)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                name, sep, value = line.partition(":")
                if sep and name.strip() == field:
                    return value.strip()
    except OSError:
        pass
    return None


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags from /proc/cpuinfo (empty where there is none)."""
    return frozenset((cpuinfo("flags") or "").split())
