"""`iclr26 demo`: every implemented system's `demo` preset, as one resumable tour, and its summary.

Each system runs in its own process (`python -m iclr26 run NAME --preset demo --out DIR/NAME`),
`jobs` at a time, each limited to its share of the cores (`threads` in its config and the
OpenMP/BLAS thread counts). A system that fails is reported and the others go on. With the same
folder the tour resumes: a system whose run there is complete is not run again, and one that
was interrupted resumes from its own checkpoints. The summary (`index.html`, `report.md`,
`summary.json`) shows, per system, the paper's claim, the demo's measured figure for method and
baseline with its floors on the same units, the one-rule verdict and how it was made, the main
plot, and a link to the `bench` evidence in its README.

Expected times come from `demo_times.json` beside this package's root, written by
`benchmarks/demo/times.py` (measured, with its date and machine).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr26.core.checkpoint import write_text_atomic
from iclr26.core.errors import UserError
from iclr26.core.interrupt import Interrupted
from iclr26.core.llm.choice import resolve_llm
from iclr26.core.records import RunRecord, format_cell, load_record, markdown_table
from iclr26.core.runlock import RunFolderLock
from iclr26.core.system import System

DEMO_TIMES = Path(__file__).resolve().parents[1] / "demo_times.json"
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "ICLR26_LLM_THREADS")
"""thread counts set to each job's share of the cores (the last: the embedded LLM's llama.cpp threads)"""


def expected_times() -> dict[str, float]:
    """Measured demo wall times per system (seconds), from `demo_times.json`; {} when absent."""
    try:
        return {k: float(v) for k, v in json.loads(DEMO_TIMES.read_text())["seconds"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def select(systems: Sequence[System], only: str = "", skip: str = "") -> list[System]:
    """The implemented systems named in `only` (all when empty), less those in `skip`."""
    implemented = {s.name: s for s in systems if s.status == "implemented"}
    known = {s.name for s in systems}

    def names(arg: str, what: str) -> list[str]:
        out = [n.strip() for n in arg.split(",") if n.strip()]
        bad = [n for n in out if n not in known]
        if bad:
            raise UserError(f"--{what}: no system named {', '.join(bad)} (`iclr26 list` shows all 19)")
        planned = [n for n in out if n not in implemented and what == "only"]
        if planned:
            raise UserError(f"--only: {', '.join(planned)} not implemented yet, so there is no demo to run")
        return out

    chosen = names(only, "only") or list(implemented)
    dropped = set(names(skip, "skip"))
    return [implemented[n] for n in chosen if n not in dropped]


@dataclass
class Outcome:
    """One system's part of the tour."""

    system: System
    run_dir: Path
    status: str  # complete / failed / interrupted / reused
    wall_s: float
    record: RunRecord | None = None
    error: str = ""


def _finished(run_dir: Path, preset: str, llm: str = "auto") -> RunRecord | None:
    """The record of a complete run of `preset` in `run_dir`, if there is one and it did not use
    another model than `--llm llm` would (that one is run again, and refused in one line)."""
    try:
        record = load_record(run_dir)
    except (FileNotFoundError, ValueError):
        return None
    if record.llm_usage and (record.llm or {}).get("used") != resolve_llm(llm).label:
        return None
    return record if record.status == "complete" and record.preset == preset else None


def _command(system: System, preset: str, run_dir: Path, threads: int, llm: str = "auto") -> list[str]:
    cmd = [sys.executable, "-m", "iclr26", "run", system.name, "--preset", preset, "--out", str(run_dir)]
    cmd += ["--llm", llm]
    if hasattr(system.presets[preset], "threads"):
        cmd += ["--set", f"threads={threads}"]
    return cmd


class _Runs:
    """The system runs a tour has going, so that an interrupted tour stops them all and starts none."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._stopping: int | None = None

    def run(self, argv: list[str], **kw: Any) -> int:
        """Run `argv` to its end (Popen's keywords in `kw`); its exit status."""
        with self._lock:
            if self._stopping is not None:
                raise Interrupted(self._stopping)
            proc = subprocess.Popen(argv, **kw)
            self._procs.add(proc)
        try:
            return proc.wait()
        finally:
            with self._lock:
                self._procs.discard(proc)

    def stop(self, signum: int) -> None:
        """Pass `signum` on to every run going (each then stops its own children and records what
        it finished, see `core.interrupt`), and start no other."""
        with self._lock:
            self._stopping = signum
            procs = list(self._procs)
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signum)


def run_one(
    system: System, preset: str, root: Path, threads: int, runs: _Runs | None = None, llm: str = "auto"
) -> Outcome:
    """Run one system's preset with the model `llm` (`--llm`) in its own process under
    `root/NAME`; reuse a complete run."""
    run_dir = root / system.name
    done = _finished(run_dir, preset, llm)
    if done is not None:
        return Outcome(system, run_dir, "reused", done.wall_time_s, done)
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **dict.fromkeys(THREAD_VARS, str(threads))}
    start = time.perf_counter()
    with (run_dir / "tour.log").open("ab") as log:
        code = (runs or _Runs()).run(
            _command(system, preset, run_dir, threads, llm), stdout=log, stderr=subprocess.STDOUT, env=env
        )
    wall = time.perf_counter() - start
    record = _finished(run_dir, preset, llm)
    if code == 0 and record is not None:
        return Outcome(system, run_dir, "complete", wall, record)
    try:
        partial = load_record(run_dir)
        error = partial.error or f"exit status {code}"
    except (FileNotFoundError, ValueError):
        partial, error = None, f"exit status {code}"
    tail = (run_dir / "tour.log").read_text(errors="replace").strip().splitlines()[-1:]
    return Outcome(system, run_dir, "failed", wall, partial, error + (f" ({tail[0][:200]})" if tail else ""))


def run_tour(
    systems: Sequence[System],
    root: Path,
    *,
    preset: str = "demo",
    jobs: int | None = None,
    llm: str = "auto",
    say: Callable[[str], None] = print,
) -> list[Outcome]:
    """Run `preset` for each system, `jobs` at a time, with the model `llm` (`--llm`), into `root`;
    returns outcomes in order."""
    cores = os.cpu_count() or 1
    jobs = cores if jobs is None else jobs
    if not isinstance(jobs, int) or jobs < 1:
        raise UserError(f"--jobs must be a positive integer, got {jobs!r}")
    jobs = min(jobs, max(1, len(systems)))
    threads = max(1, cores // jobs)
    expected = expected_times()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create the demo folder {root}: {e.strerror or e}") from e
    say(f"{len(systems)} systems, {jobs} at a time, {threads} thread(s) each → {root}")
    start = time.perf_counter()
    outcomes: dict[str, Outcome] = {}
    runs = _Runs()
    with RunFolderLock(root), ThreadPoolExecutor(max_workers=jobs) as pool:  # one tour per folder
        futures = {pool.submit(run_one, s, preset, root, threads, runs, llm): s for s in systems}
        try:
            for f in as_completed(futures):
                o = f.result()
                outcomes[o.system.name] = o
                exp = expected.get(o.system.name)
                exp_text = f", expected {exp:.0f} s" if exp else ""
                what = (
                    "reused the finished run"
                    if o.status == "reused"
                    else f"{o.status} in {o.wall_s:.0f} s{exp_text}"
                )
                say(
                    f"[{len(outcomes)}/{len(systems)}] {o.system.name}: {what} · elapsed "
                    f"{time.perf_counter() - start:.0f} s" + (f" · {o.error}" if o.error else "")
                )
        except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: the runs going stop, each recording its part
            pool.shutdown(wait=False, cancel_futures=True)
            runs.stop(e.signum if isinstance(e, Interrupted) else signal.SIGINT)
            raise
    return [outcomes[s.name] for s in systems]


def _readme_link(system: System) -> str:
    """A file URL of the system's README (the `bench` evidence), installed with the package."""
    path = Path(__file__).resolve().parents[1] / system.name / "README.md"
    return path.as_uri() if path.exists() else system.readme


def summary_rows(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """One dict per system: claim, metric, method, baseline and floor figures, verdict, plot, wall time."""
    rows = []
    for o in outcomes:
        cc = o.record.report.claim_check if o.record else None
        figures = o.record.report.figures if o.record else []
        rows.append(
            {
                "system": o.system.name,
                "title": o.system.title,
                "claim": o.system.claim,
                "status": o.status,
                "metric": cc.metric if cc else None,
                "method": f"{cc.method} {format_cell(cc.method_value)}" if cc else None,
                "baseline": f"{cc.baseline} {format_cell(cc.baseline_value)}" if cc else None,
                "verdict": cc.verdict if cc else ("failed" if o.status == "failed" else "no claim check"),
                "floors": ", ".join(f"{k} {format_cell(v)}" for k, v in (cc.floors or {}).items())
                if cc
                else None,
                "rule": cc.rule if cc else None,
                "figure": f"{o.system.name}/{figures[0]}" if figures else None,
                "readme": _readme_link(o.system),
                "wall_s": round(o.wall_s, 1),
                "error": o.error,
            }
        )
    return rows


_CSS = """body{font:15px/1.5 system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
section{border-top:1px solid #ddd;padding:1em 0}h2{margin:.2em 0}.claim{color:#555;font-style:italic}
.verdict{display:inline-block;padding:.1em .6em;border-radius:1em;font-weight:600}
.held{background:#dafbe1;color:#1a7f37}.not{background:#ffebe9;color:#cf222e}.noise{background:#fff8c5;color:#7d4e00}
.untested{background:#eaeef2;color:#57606a}
img{max-width:100%;border:1px solid #eee;margin-top:.5em}table{border-collapse:collapse}
td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left}"""

_VERDICT_CLASS = {
    "held": "held",
    "within noise": "noise",
    "not tested": "untested",
    "uninformative": "untested",
}


def render_html(
    rows: Sequence[dict[str, Any]], preset: str, total_s: float, wall_s: float | None = None
) -> str:
    """The summary page: an overview table, then one section per system (all text escaped)."""
    esc = html.escape
    overview = "".join(
        f"<tr><td><a href='#{esc(r['system'])}'>{esc(r['system'])}</a></td><td>{esc(r['verdict'])}</td>"
        f"<td>{r['wall_s']:.0f}</td></tr>"
        for r in rows
    )
    parts = [
        f"<!doctype html><meta charset='utf-8'><title>iclr26 {esc(preset)} summary</title>",
        f"<style>{_CSS}</style><h1>iclr26 — {esc(preset)} tour</h1>",
        f"<p>{len(rows)} systems, {total_s / 60:.1f} min of runs"
        + (f" ({wall_s / 60:.1f} min wall clock). " if wall_s is not None else ". ")
        + f"Each ran its <code>{esc(preset)}</code> preset: a small version of the comparison. "
        "The README of each system holds the <code>bench</code> figures, the real evidence.</p>",
        f"<table><tr><th>system</th><th>verdict</th><th>wall s</th></tr>{overview}</table>",
    ]
    for r in rows:
        cls = _VERDICT_CLASS.get(r["verdict"], "not")
        parts.append(f"<section id='{esc(r['system'])}' class='system'>")
        parts.append(f"<h2>{esc(r['system'])}</h2><div>{esc(r['title'])}</div>")
        parts.append(f"<p class='claim'>Paper's claim: {esc(r['claim'])}</p>")
        if r["metric"]:
            floors = f" · floors: {esc(r['floors'])}" if r.get("floors") else " · no floor arm"
            rule = f" <small>({esc(r['rule'])})</small>" if r.get("rule") else ""
            parts.append(
                f"<p>{esc(r['metric'])}: <b>{esc(r['method'])}</b> vs {esc(r['baseline'])}{floors} "
                f"<span class='verdict {cls}'>{esc(r['verdict'])}</span>{rule}</p>"
            )
        else:
            parts.append(f"<p><span class='verdict {cls}'>{esc(r['verdict'])}</span> {esc(r['error'])}</p>")
        if r["figure"]:
            parts.append(f"<img src='{esc(r['figure'], quote=True)}' alt='{esc(r['system'])} main plot'>")
        parts.append(
            f"<p><a href='{esc(r['readme'], quote=True)}'>README: paper→code map and the bench figures</a>"
            f" · {r['wall_s']:.0f} s · <a href='{esc(r['system'])}/report.md'>this run's report</a></p>"
        )
        parts.append("</section>")
    return "\n".join(parts) + "\n"


def write_summary(
    root: Path, outcomes: Sequence[Outcome], preset: str = "demo", wall_s: float | None = None
) -> Path:
    """Write `index.html`, `report.md` and `summary.json` into `root` (`wall_s`: the tour's wall
    clock, when known); returns the HTML path."""
    rows = summary_rows(outcomes)
    total = sum(o.wall_s for o in outcomes)
    columns = ["system", "paper's claim", "metric", "method", "baseline", "floors", "verdict", "wall s"]
    table = [
        [
            r["system"],
            r["claim"],
            r["metric"],
            r["method"],
            r["baseline"],
            r["floors"],
            r["verdict"],
            r["wall_s"],
        ]
        for r in rows
    ]
    md = [f"# iclr26 {preset} summary\n", markdown_table(columns, table)]
    md += [f"\n## {r['system']}\n\n![{r['system']}]({r['figure']})" for r in rows if r["figure"]]
    write_text_atomic(root / "report.md", "\n".join(md) + "\n")
    payload = {"preset": preset, "wall_s": wall_s, "rows": rows}
    write_text_atomic(root / "summary.json", json.dumps(payload, indent=1) + "\n")
    path = root / "index.html"
    write_text_atomic(path, render_html(rows, preset, total, wall_s))
    return path
