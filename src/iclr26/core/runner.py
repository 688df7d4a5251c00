"""Run one system preset into a run folder: config, seed, timing, results.json, report.md."""

from __future__ import annotations

import datetime as _dt
import time
import traceback
from collections.abc import Mapping
from pathlib import Path

from rich.console import Console

from iclr26.core.config import ConfigError, config_to_dict
from iclr26.core.device import resolve_device
from iclr26.core.distributed import launch_env
from iclr26.core.errors import UserError
from iclr26.core.records import (
    RESULTS_FILE,
    Report,
    RunRecord,
    library_versions,
    load_record,
    make_run_dir,
    save_record,
    write_report,
)
from iclr26.core.system import RunContext, System


class SystemNotImplemented(UserError, RuntimeError):
    """Raised when asked to run a system whose status is `planned`."""


def _check_resumable(run_dir: Path, name: str, preset: str, config: dict) -> None:
    """Refuse to resume a run folder that holds a different system or config: its checkpoints
    and finished parts would silently mix with the new settings."""
    if not (run_dir / RESULTS_FILE).exists():
        return
    old = load_record(run_dir)
    if old.system != name:
        raise ConfigError(f"{run_dir} holds a run of {old.system!r}, not {name!r}; use another --out")
    changed = sorted(k for k in set(old.config) | set(config) if old.config.get(k) != config.get(k))
    if changed:
        raise ConfigError(
            f"{run_dir} holds a {old.preset!r} run with different settings ({', '.join(changed)}); "
            "resume only with the same config, or use another --out"
        )


def run_system(
    system: System,
    preset: str = "demo",
    overrides: Mapping[str, str] | None = None,
    *,
    out: Path | str | None = None,
    runs_root: Path | str = "runs",
    console: Console | None = None,
) -> tuple[RunRecord, Path]:
    """Run `system` at `preset` with `overrides`; write results.json and report.md.

    `out` names the run folder explicitly; running again with the same `out` lets the system
    resume from the checkpoints it left there. An exception or Ctrl-C still writes a record
    (status `failed`/`interrupted`) before it propagates.
    """
    if system.unavailable:
        raise SystemNotImplemented(f"system {system.name!r} is unavailable here: {system.unavailable}")
    if system.run is None:
        raise SystemNotImplemented(
            f"system {system.name!r} is {system.status}: it is listed in the catalog but not "
            "implemented yet, so there is nothing to run"
        )
    console = console or Console()
    config = system.config(preset, overrides)  # ConfigError names the bad field
    if isinstance(getattr(config, "device", None), str):
        resolve_device(config.device)  # a missing GPU is a one-line error before any work
    rank, world, _ = launch_env()
    if out is None and world > 1:
        raise ConfigError("under torchrun/accelerate give --out, so that all ranks share one run folder")
    try:
        if out is None:
            run_dir = make_run_dir(runs_root, system.name)
        else:
            # rank 0 owns the folder; other ranks keep their own record and checkpoints in rank<r>/
            run_dir = Path(out) if rank == 0 else Path(out) / f"rank{rank}"
            run_dir.mkdir(parents=True, exist_ok=True)
        probe = run_dir / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        where = out if out is not None else runs_root
        raise UserError(
            f"cannot write the run folder under {where}: {e.strerror or e}; give a writable --out"
        ) from e
    if out is not None:
        _check_resumable(run_dir, system.name, preset, config_to_dict(config))
    seed = getattr(config, "seed", None)
    record = RunRecord(
        system=system.name,
        preset=preset,
        config=config_to_dict(config),
        seed=seed if isinstance(seed, int) else None,
        started=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        wall_time_s=0.0,
        status="running",
        report=Report(),
        versions=library_versions(),
        title=system.title,
        claim=system.claim,
    )
    save_record(run_dir, record)
    ctx = RunContext(out_dir=run_dir, console=console)
    console.rule(f"[bold]{system.name}[/] · preset {preset} · {run_dir}")
    start = time.perf_counter()
    try:
        report = system.run(config, ctx)
        if not isinstance(report, Report):
            raise TypeError(f"{system.name}.run returned {type(report).__name__}, not a Report")
        record.report = report
        record.status = "complete"
    except KeyboardInterrupt:
        record.status = "interrupted"
        record.error = "interrupted (Ctrl-C); re-run with --out on this folder to resume"
        raise
    except BaseException as e:
        record.status = "failed"
        record.error = f"{type(e).__name__}: {e}"
        (run_dir / "traceback.txt").write_text(traceback.format_exc())
        raise
    finally:
        record.wall_time_s = time.perf_counter() - start
        record.llm_usage = ctx.llm_usage()
        ctx.close_models()
        save_record(run_dir, record)
        write_report(run_dir, record)
        console.print(f"wrote {run_dir / RESULTS_FILE} and report.md", highlight=False)
    return record, run_dir
