"""`iclr26 list | run NAME [--preset P] [--set k=v ...] [--out DIR] | demo | report RUN_DIR`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from iclr26.catalog import all_systems, get_system
from iclr26.core.config import parse_overrides
from iclr26.core.errors import UserError
from iclr26.core.records import load_record, now_stamp, write_report
from iclr26.core.runner import run_system

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Working, tested, measured implementations of 19 ICLR 2026 systems.",
)
# Outside a terminal (CI logs, pipes) rich would wrap at 80 columns; tables need more.
console = Console() if Console().is_terminal else Console(width=160)


def _fail(message: str, code: int = 2) -> typer.Exit:
    # one line, however long: no wrapping, and brackets in the message are text, not markup
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


@app.command("list")
def list_systems() -> None:
    """Show all 19 systems: name, paper title, status, claim."""
    table = RichTable(title="iclr26 systems", show_lines=False)
    for col in ("#", "name", "status", "paper", "claim"):
        table.add_column(col, overflow="fold")
    for s in all_systems():
        colour = {"implemented": "green", "planned": "yellow"}.get(s.status, "red")
        status = s.status if not s.unavailable else f"{s.status} ({s.unavailable})"
        table.add_row(str(s.number), s.name, f"[{colour}]{status}[/]", s.title, s.claim)
    console.print(table)


@app.command()
def run(
    name: Annotated[str, typer.Argument(help="System name, as `iclr26 list` shows it.")],
    preset: Annotated[str, typer.Option(help="smoke (seconds), demo (CPU minutes), paper.")] = "demo",
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config field: field=value.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Run folder (default runs/NAME/<stamp>); reuse to resume.")
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of user errors too.")] = False,
) -> None:
    """Run one system's preset and write results.json, report.md and figures."""
    try:
        system = get_system(name)
        overrides = parse_overrides(set_ or [])
        record, run_dir = run_system(system, preset, overrides, out=out, console=console)
    except UserError as e:
        if debug:
            raise
        raise _fail(str(e), e.exit_code) from None
    console.print(f"[bold green]done[/] in {record.wall_time_s:.1f} s → {run_dir / 'report.md'}")


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
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of user errors too.")] = False,
) -> None:
    """Run every implemented system's demo preset, then write one summary page (index.html)."""
    from iclr26.core.tour import run_tour, select, write_summary

    try:
        catalog = all_systems()
        if not any(s.status == "implemented" for s in catalog):
            console.print("No system is implemented yet: nothing to tour.")
            return
        systems = select(catalog, only, skip)
        if not systems:
            raise UserError("no system left to run: check --only and --skip")
        root = out if out is not None else Path("runs") / "demo" / now_stamp()
        start = time.perf_counter()
        outcomes = run_tour(
            systems, root, preset=preset, jobs=jobs, say=lambda m: console.print(m, highlight=False)
        )
    except UserError as e:
        if debug:
            raise
        raise _fail(str(e), e.exit_code) from None
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
