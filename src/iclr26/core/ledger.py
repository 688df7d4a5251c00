"""A study's ledger: `cells.jsonl` in the run folder, one record per finished (arm, unit) cell.

Each record holds the cell's metrics, its seed, wall time, language-model tokens and model identity
(when the cell used a model) and the hash of the config it ran under. It is appended with
`core.jsonfile.append_log` and read back with `read_log`, so a kill at any byte loses at most the
record being written; a resume skips the cells already recorded and runs the rest.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from iclr26.core.errors import UserError
from iclr26.core.jsonfile import append_log, read_log

CELLS_FILE = "cells.jsonl"


class LedgerError(UserError):
    """A `cells.jsonl` that cannot be resumed from (another config's cells, a record not a cell's)."""


@dataclass
class CellRecord:
    """One finished cell: `metrics` of `arm` on unit `unit` (its key)."""

    arm: str
    unit: str
    metrics: dict[str, Any]
    seed: int | None = None
    wall_s: float = 0.0
    tokens: dict[str, float | int] | None = None  # the cell's language-model usage, if it used one
    models: list[str] = field(default_factory=list)  # identities of the models it used
    config_hash: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """(arm, unit): what a resume skips on."""
        return self.arm, self.unit


def config_hash(config: Any) -> str:
    """A short SHA-256 of a JSON-ready config (its keys sorted)."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_cells(path: Path | str, expect_hash: str | None = None) -> dict[tuple[str, str], CellRecord]:
    """The cells recorded in the ledger at `path` ({} when it does not exist yet), by (arm, unit); a
    torn last record (a kill mid-write) is dropped and that cell redone. With `expect_hash`, a cell run
    under another config raises `LedgerError`: one ledger never mixes two configs."""
    out: dict[tuple[str, str], CellRecord] = {}
    for n, raw in enumerate(read_log(path, LedgerError), 1):
        try:
            cell = CellRecord(**raw)
        except TypeError as e:
            raise LedgerError(f"{path}: record {n} is not a cell ({e}); remove it to resume") from None
        if expect_hash is not None and cell.config_hash != expect_hash:
            raise LedgerError(
                f"{path}: cell {cell.arm}/{cell.unit} was run under config {cell.config_hash}, this run's is "
                f"{expect_hash}; resume with the same config or use another --out"
            )
        out[cell.key] = cell
    return out


def append_cell(path: Path | str, cell: CellRecord) -> None:
    """Append one finished cell to the ledger at `path`, whole (`append_log`)."""
    append_log(path, asdict(cell))
