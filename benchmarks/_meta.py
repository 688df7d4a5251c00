"""Provenance recorded with every benchmark result: command, date, machine, versions."""

from __future__ import annotations

import datetime as dt
import os
import platform
import sys

import torch


def provenance() -> dict:
    """Who/where/when for a results file."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{cpu}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}",
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
