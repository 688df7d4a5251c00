"""Provenance recorded with every benchmark result: command, date, machine, versions."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
from dataclasses import asdict
from pathlib import Path

import torch

from iclr26.core.device import cpu_flags, cpuinfo


def provenance() -> dict:
    """Who/where/when for a results file."""
    cpu = cpuinfo("model name") or platform.processor() or platform.machine()
    return {
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{cpu}, {os.cpu_count()} cores, torch threads {torch.get_num_threads()}",
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),  # the vector path torch's CPU kernels take
        "cpu_bf16": sorted(cpu_flags() & {"avx512_bf16", "amx_bf16"}),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


def run_preset_benchmark(
    system,
    results_dir: Path,
    stem: str,
    description: str,
    sets: tuple[str, ...] = (),
    *,
    tag: str = "",
    out: Path | None = None,
) -> None:
    """CLI for benchmarks that run a system preset: `--preset`, `--set k=v`, `--out`, `--tag`; saves
    `results_dir/<stem>_<preset>[_<tag>].json` with the tables, claim check and provenance. `sets`
    are this benchmark's own `k=v` changes; a field the command line sets replaces this benchmark's.
    `tag` and `out` are the defaults of `--tag` and `--out` (else none and runs/benchmarks/<stem>)."""
    if not torch.cuda.is_available():  # Triton kernels (dash, laplacianformer) run in its interpreter
        os.environ.setdefault("TRITON_INTERPRET", "1")
    from iclr26.core.config import parse_overrides
    from iclr26.core.runner import run_system

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--preset", default="bench")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--out", type=Path, default=out or Path(f"runs/benchmarks/{stem}"))
    ap.add_argument("--tag", default=tag, help="suffix of the results file, for a non-default configuration")
    ap.add_argument("--llm", default="auto", help="the run's model: auto, embedded, http or hf:PATH")
    args = ap.parse_args()
    overrides = {**parse_overrides(list(sets)), **parse_overrides(args.overrides)}
    record, run_dir = run_system(system, args.preset, overrides, out=args.out, llm=args.llm)
    save_preset_result(record, run_dir, results_dir, stem, args.preset, args.tag)


def save_preset_result(
    record, run_dir: Path, results_dir: Path, stem: str, preset: str, tag: str = ""
) -> Path:
    """Save a finished run's tables, claim check, config and provenance as
    `results_dir/<stem>_<preset>[_<tag>].json`, its study ledger as `....cells.jsonl` and its figures
    beside it; print its report."""
    results_dir.mkdir(parents=True, exist_ok=True)
    suffix = f"_{preset}{'_' + tag if tag else ''}"
    path = results_dir / f"{stem}{suffix}.json"
    payload = {
        **provenance(),
        "preset": preset,
        "run_dir": str(run_dir),
        "wall_time_s": record.wall_time_s,
        "config": record.config,
        "llm": record.llm,
        "claim_check": asdict(record.report.claim_check) if record.report.claim_check else None,
        "tables": [asdict(t) for t in record.report.tables],
        "notes": record.report.notes,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")
    ledger = run_dir / "cells.jsonl"  # a study's cells: every figure of the tables traces to one
    if ledger.is_file():
        shutil.copyfile(ledger, path.with_suffix(".cells.jsonl"))
    for fig in record.report.figures:  # e.g. frames.png -> results/frames_bench.png, for the README
        src = run_dir / fig
        if src.is_file():
            shutil.copyfile(src, results_dir / f"{src.stem}{suffix}{src.suffix}")
    print((run_dir / "report.md").read_text())
    print(f"saved {path}")
    return path


def save_study_result(result, run_dir: Path, path: Path, preset: str, config, **extra) -> Path:
    """For a benchmark that runs its own `Study`: print its tables and claims, save them with the
    config and provenance as `path` (plus `extra` keys) and its ledger beside it as `....cells.jsonl`."""
    from iclr26.core.records import markdown_table

    report = result.report
    for t in report.tables:
        print(f"\n{t.title}\n" + markdown_table(t.columns, t.rows))
    for c in result.checks:
        print(f"claim {c.metric}: {c.method} vs {c.baseline}: {c.verdict} ({c.rule})")
    payload = {
        **provenance(),
        "preset": preset,
        "run_dir": str(run_dir),
        "config": asdict(config),
        **extra,
        "claim_checks": [asdict(c) for c in result.checks],
        "tables": [asdict(t) for t in report.tables],
        "notes": report.notes,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")
    shutil.copyfile(run_dir / "cells.jsonl", path.with_suffix(".cells.jsonl"))
    print(f"saved {path}")
    return path
