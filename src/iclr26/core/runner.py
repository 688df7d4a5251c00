"""Run one system preset into a run folder: config, seed, timing, results.json, report.md."""

from __future__ import annotations

import datetime as _dt
import tempfile
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from iclr26.core.config import ConfigError, config_to_dict
from iclr26.core.device import resolve_device
from iclr26.core.distributed import launch_env
from iclr26.core.errors import UserError
from iclr26.core.interrupt import Interrupted
from iclr26.core.jsonfile import read_log
from iclr26.core.llm.choice import LLMChoice, resolve_llm
from iclr26.core.llm.identity import model_identity
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
from iclr26.core.runlock import RunFolderLock
from iclr26.core.system import RunContext, System


class SystemNotImplemented(UserError, RuntimeError):
    """Raised when asked to run a system whose status is `planned`."""


def _check_resumable(run_dir: Path, name: str, preset: str, config: dict, llm: str | None = None) -> None:
    """Refuse to resume a run folder that holds a different system or config, or whose model
    (`--llm`, when it used one) was another: its checkpoints and finished parts would silently
    mix with the new settings."""
    if not (run_dir / RESULTS_FILE).exists():
        return
    old = load_record(run_dir)
    if old.system != name:
        raise ConfigError(f"{run_dir} holds a run of {old.system!r}, not {name!r}; use another --out")
    used = (old.llm or {}).get("used")
    if llm is not None and old.llm_usage and used and used != llm:
        raise ConfigError(
            f"{run_dir} holds a run made with --llm {used}, not {llm}; resume with --llm {used} "
            "(or the same ICLR26_LLM_BASE_URL), or use another --out"
        )
    changed = sorted(k for k in set(old.config) | set(config) if old.config.get(k) != config.get(k))
    if changed:
        raise ConfigError(
            f"{run_dir} holds a {old.preset!r} run with different settings ({', '.join(changed)}); "
            "resume only with the same config, or use another --out"
        )


def finished_work(run_dir: Path) -> list[str]:
    """What an interrupted run leaves for its resume: the records in each append-only log and the
    done markers (JSON files) in each subfolder of `run_dir`."""
    notes = []
    for log in sorted(run_dir.glob("*.jsonl")):
        try:
            notes.append(f"finished: {len(read_log(log))} records in {log.name}")
        except UserError as e:
            notes.append(f"unreadable log: {e}")
    for folder in sorted(p for p in run_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        done = sum(1 for f in folder.glob("*.json") if not f.name.startswith("."))
        if done:
            notes.append(f"finished: {done} results in {folder.name}/")
    return notes


def run_system(
    system: System,
    preset: str = "demo",
    overrides: Mapping[str, str] | None = None,
    *,
    out: Path | str | None = None,
    runs_root: Path | str = "runs",
    console: Console | None = None,
    llm: str = "auto",
    jobs: int = 1,
    parallel: str = "process",
) -> tuple[RunRecord, Path]:
    """Run `system` at `preset` with `overrides` and the model `llm` (`--llm`: auto, embedded,
    http or hf:PATH); write results.json and report.md. A system that runs a study runs `jobs` of
    its cells at once, in processes, threads or (`parallel="ray"`) on Ray.

    `out` names the run folder explicitly; running again with the same `out` lets the system
    resume from the checkpoints it left there. The folder is locked for the run: a second run into it
    raises `RunFolderInUse`. An exception, Ctrl-C or (under `core.interrupt.stop_on_signals`)
    SIGTERM still writes a record (status `failed`/`interrupted`, the latter with what finished)
    before it propagates.
    """
    if system.unavailable:
        raise SystemNotImplemented(f"system {system.name!r} is unavailable here: {system.unavailable}")
    if system.run is None:
        raise SystemNotImplemented(
            f"system {system.name!r} is {system.status}: it is listed in the catalog but not "
            "implemented yet, so there is nothing to run"
        )
    console = console or Console()
    if (
        parallel not in ("process", "threads", "ray")
        or isinstance(jobs, bool)
        or not isinstance(jobs, int)
        or jobs < 1
    ):
        raise ConfigError(
            f"--jobs must be >= 1 and --parallel process, threads or ray, got {jobs!r} and {parallel!r}"
        )
    config = system.config(preset, overrides)  # ConfigError names the bad field
    choice = resolve_llm(llm)  # `--llm http` without a server URL is a one-line error before any work
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
        tempfile.TemporaryFile(dir=run_dir).close()  # writable? (no fixed name for two runs to race on)
    except OSError as e:
        where = out if out is not None else runs_root
        raise UserError(
            f"cannot write the run folder under {where}: {e.strerror or e}; give a writable --out"
        ) from e
    lock = RunFolderLock(run_dir)  # one run per folder: a second one stops here, naming the first
    try:
        if out is not None:
            _check_resumable(run_dir, system.name, preset, config_to_dict(config), choice.label)
        return _run_in(system, preset, config, run_dir, console, choice, jobs, parallel)
    finally:
        lock.release()


def _run_in(
    system: System,
    preset: str,
    config: Any,
    run_dir: Path,
    console: Console,
    choice: LLMChoice,
    jobs: int = 1,
    parallel: str = "process",
) -> tuple[RunRecord, Path]:
    """Run `system` in the locked `run_dir`, keeping its record up to date (see `run_system`)."""
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
        llm=choice.describe(),
    )
    save_record(run_dir, record)
    ctx = RunContext(out_dir=run_dir, console=console, llm=choice, jobs=jobs, parallel=parallel)
    console.rule(f"[bold]{system.name}[/] · preset {preset} · {run_dir}")
    start = time.perf_counter()
    try:
        report = system.run(config, ctx)
        if not isinstance(report, Report):
            raise TypeError(f"{system.name}.run returned {type(report).__name__}, not a Report")
        record.report = report
        record.status = "complete"
    except KeyboardInterrupt as e:
        record.status = "interrupted"
        how = e.name if isinstance(e, Interrupted) else "Ctrl-C"
        record.error = f"interrupted ({how}); re-run with --out on this folder to resume"
        record.report = Report(notes=finished_work(run_dir))
        raise
    except BaseException as e:
        record.status = "failed"
        record.error = f"{type(e).__name__}: {e}"
        (run_dir / "traceback.txt").write_text(traceback.format_exc())
        raise
    finally:
        record.wall_time_s = time.perf_counter() - start
        record.llm_usage = ctx.llm_usage()
        if ctx.models:
            record.llm = {**choice.describe(), "identity": model_identity(ctx.models[0][0])}
        ctx.close_models()
        save_record(run_dir, record)
        write_report(run_dir, record)
        console.print(f"wrote {run_dir / RESULTS_FILE} and report.md", highlight=False)
    return record, run_dir
