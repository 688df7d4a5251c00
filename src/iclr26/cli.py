"""`iclr26 list | run NAME [--preset P] [--set k=v ...] [--llm M] [--out DIR] [--help-config] |
config NAME | demo [--llm M] | report RUN_DIR`."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from iclr26.catalog import PAPERS, all_systems, get_system, status_of
from iclr26.core.config import describe_config, parse_overrides
from iclr26.core.errors import UserError
from iclr26.core.interrupt import Interrupted, exit_code, stop_on_signals
from iclr26.core.llm.choice import resolve_llm
from iclr26.core.records import load_record, now_stamp, write_report
from iclr26.core.runner import run_system

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Working, tested, measured implementations of 19 ICLR 2026 systems.",
)
LLM_HELP = (
    "The run's language model: auto (the server at ICLR26_LLM_BASE_URL when it is set, else the "
    "embedded SmolLM2-135M), embedded, http (ICLR26_LLM_BASE_URL, ICLR26_LLM_MODEL, "
    "ICLR26_LLM_API_KEY) or hf:PATH (a local Hugging Face checkpoint folder)."
)
# Outside a terminal (CI logs, pipes) rich would wrap at 80 columns; tables need more.
console = Console() if Console().is_terminal else Console(width=160)


def _triton_interpreter_without_gpu() -> None:
    """Triton reads TRITON_INTERPRET once, when first imported: an entry point chooses it. Without a
    GPU, the systems' Triton kernels (dash, laplacianformer) run in the interpreter."""
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")


def _fail(message: str, code: int = 2) -> typer.Exit:
    # one line, however long: no wrapping, and brackets in the message are text, not markup
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _interrupted(interrupt: KeyboardInterrupt, resume: str) -> typer.Exit:
    # one line; the exit status says which signal: 130 SIGINT (Ctrl-C), 143 SIGTERM, 129 SIGHUP
    how = interrupt.name if isinstance(interrupt, Interrupted) else "Ctrl-C"
    console.print(
        f"[bold red]interrupted[/] by {how}; re-run with {escape(resume)} to resume", highlight=False
    )
    return typer.Exit(exit_code(interrupt))


@app.command("list")
def list_systems() -> None:
    """Show all 19 systems: name, paper title, status, claim (imports no system)."""
    table = RichTable(title="iclr26 systems", show_lines=False)
    for col in ("#", "name", "status", "paper", "claim"):
        table.add_column(col, overflow="fold")
    for p in PAPERS:
        status, why = status_of(p.name)
        colour = {"implemented": "green", "planned": "yellow"}.get(status, "red")
        shown = f"{status} ({why})" if why else status
        table.add_row(str(p.number), p.name, f"[{colour}]{escape(shown)}[/]", p.title, p.claim)
    console.print(table)


def _show(value: object) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 48 else text[:45] + "..."


def _print_config(name: str, preset: str, overrides: list[str]) -> None:
    system = get_system(name)
    if system.status != "implemented":
        raise UserError(f"system {name!r} is {system.status}: it has no config yet")
    config = system.config(preset, parse_overrides(overrides))
    table = RichTable(title=f"{name}: {type(config).__name__} (preset {preset})", show_lines=False)
    table.add_column("field", no_wrap=True)
    for col in ("type", "default", preset, "help"):
        table.add_column(col, overflow="fold")
    rows = describe_config(config)
    for row in rows:
        changed = row.value != row.default
        value = f"[bold]{escape(_show(row.value))}[/]" if changed else escape(_show(row.value))
        table.add_row(row.path, escape(row.type), escape(_show(row.default)), value, escape(row.help))
    console.print(table)
    console.print(
        f"bold: the preset's value differs from the default. Set any field with --set FIELD=VALUE "
        f"(nested fields with dots, e.g. --set {rows[-1].path}=...).",
        highlight=False,
    )


@app.command()
def run(
    name: Annotated[str, typer.Argument(help="System name, as `iclr26 list` shows it.")],
    preset: Annotated[
        str, typer.Option(help="smoke (seconds), demo (≤ 2 CPU minutes), bench (README figures), paper.")
    ] = "demo",
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config field: field=value.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Run folder (default runs/NAME/<stamp>); reuse to resume.")
    ] = None,
    help_config: Annotated[
        bool, typer.Option("--help-config", help="Print every config field (type, default, preset, help).")
    ] = False,
    llm: Annotated[str, typer.Option(help=LLM_HELP)] = "auto",
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of user errors too.")] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", min=1, help="Cells of a study run at once (processes); results do not depend on it."
        ),
    ] = 1,
    parallel: Annotated[
        str,
        typer.Option(
            help="Where a study's cells run: process (--jobs of them), threads (LLM cells sharing one "
            "model) or ray (RAY_ADDRESS, else local).",
        ),
    ] = "process",
) -> None:
    """Run one system's preset and write results.json, report.md and figures."""
    try:
        if help_config:
            _print_config(name, preset, set_ or [])
            return
        _triton_interpreter_without_gpu()
        system = get_system(name)
        overrides = parse_overrides(set_ or [])
        with stop_on_signals():  # SIGTERM too stops the children and records what finished
            record, run_dir = run_system(
                system, preset, overrides, out=out, console=console, llm=llm, jobs=jobs, parallel=parallel
            )
    except UserError as e:
        if debug:
            raise
        raise _fail(str(e), e.exit_code) from None
    except KeyboardInterrupt as e:
        raise _interrupted(e, f"--out {out}" if out is not None else "--out on its run folder") from None
    console.print(f"[bold green]done[/] in {record.wall_time_s:.1f} s → {run_dir / 'report.md'}")


@app.command()
def config(
    name: Annotated[str, typer.Argument(help="System name, as `iclr26 list` shows it.")],
    preset: Annotated[str, typer.Option(help="The preset whose values to show.")] = "demo",
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Show the config with these overrides: field=value.")
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of user errors too.")] = False,
) -> None:
    """Print a system's config fields: type, default, the preset's value, help (= run --help-config)."""
    try:
        _print_config(name, preset, set_ or [])
    except UserError as e:
        if debug:
            raise
        raise _fail(str(e), e.exit_code) from None


@app.command()
def demo(
    out: Annotated[
        Path | None, typer.Option(help="Tour folder (default runs/demo/<stamp>); reuse it to resume.")
    ] = None,
    only: Annotated[str, typer.Option(help="Run only these systems (comma-separated).")] = "",
    skip: Annotated[str, typer.Option(help="Leave these systems out (comma-separated).")] = "",
    jobs: Annotated[
        int | None,
        typer.Option(help="Systems at once, each on its share of the cores (default: core count)."),
    ] = None,
    preset: Annotated[str, typer.Option(help="The preset to tour (demo; smoke for a quick check).")] = "demo",
    llm: Annotated[str, typer.Option(help=LLM_HELP)] = "auto",
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of user errors too.")] = False,
) -> None:
    """Run every implemented system's demo preset, then write one summary page (index.html)."""
    from iclr26.core.tour import run_tour, select, write_summary

    try:
        catalog = all_systems()
        if not any(s.status == "implemented" for s in catalog):
            console.print("No system is implemented yet: nothing to tour.")
            return
        resolve_llm(llm)  # a bad --llm is one error, not one per system
        systems = select(catalog, only, skip)
        if not systems:
            raise UserError("no system left to run: check --only and --skip")
        root = out if out is not None else Path("runs") / "demo" / now_stamp()
        start = time.perf_counter()
        with stop_on_signals():  # each system's run is told too, and records what it finished
            outcomes = run_tour(
                systems,
                root,
                preset=preset,
                jobs=jobs,
                llm=llm,
                say=lambda m: console.print(m, highlight=False),
            )
    except UserError as e:
        if debug:
            raise
        raise _fail(str(e), e.exit_code) from None
    except KeyboardInterrupt as e:
        raise _interrupted(e, f"--out {root}") from None
    page = write_summary(root, outcomes, preset, wall_s=time.perf_counter() - start)
    for o in outcomes:
        cc = o.record.report.claim_check if o.record else None
        verdict = cc.verdict if cc else o.status
        console.print(f"  {o.system.name:16s} {verdict:14s} {o.wall_s:6.0f} s", highlight=False)
    console.print(f"summary → {page} (and report.md); resume with --out {root}")
    failed = [o.system.name for o in outcomes if o.status == "failed"]
    if failed:
        console.print(f"[bold red]failed:[/] {', '.join(failed)} (see their tour.log)")
        raise typer.Exit(1)


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run folder holding results.json.")],
) -> None:
    """Re-render report.md from a run folder's results.json."""
    try:
        record = load_record(run_dir)
    except (FileNotFoundError, ValueError, UserError) as e:
        raise _fail(str(e)) from None
    path = write_report(run_dir, record)
    console.print(f"wrote {path}")


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
