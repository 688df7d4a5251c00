"""Run sci_refine's smoke preset against a stub server (not a language model) and read its ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iclr26.core.ledger import CELLS_FILE, read_cells
from iclr26.core.runner import run_system
from iclr26.sci_refine import SYSTEM
from tests.core.llm.json_server import ChatStub, point_llm_at, serve


def run_on_stub(handler: type[ChatStub], settings: dict[str, str], out: Path, monkeypatch: Any, **kw: Any):
    """(record, run folder) of the smoke preset with `settings`, every model call going to `handler`."""
    with serve(handler) as url:
        point_llm_at(monkeypatch, url)
        return run_system(SYSTEM, "smoke", settings, out=out, **kw)


def cell_metrics(run_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Each (arm, unit)'s metrics, from the run's `cells.jsonl`."""
    return {key: cell.metrics for key, cell in read_cells(run_dir / CELLS_FILE).items()}
