"""The small shared kernel: systems, configs, run records, seeding, devices, progress.

Nothing in `core` is specific to one paper.
"""

from iclr26.core.config import ConfigError, apply_overrides, config_to_dict, parse_overrides
from iclr26.core.device import resolve_device
from iclr26.core.records import ClaimCheck, Report, RunRecord, Table, load_record, render_report
from iclr26.core.seeding import derive_seed, set_seed
from iclr26.core.system import RunContext, System

__all__ = [
    "ClaimCheck",
    "ConfigError",
    "Report",
    "RunContext",
    "RunRecord",
    "System",
    "Table",
    "apply_overrides",
    "config_to_dict",
    "derive_seed",
    "load_record",
    "parse_overrides",
    "render_report",
    "resolve_device",
    "set_seed",
]
