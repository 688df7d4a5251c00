"""`iclr26 list | run NAME [--preset P] [--set k=v ...] [--out DIR] | demo | report RUN_DIR`."""

from __future__ import annotations

import json
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
from iclr26.core.records import format_cell, load_record, markdown_table, now_stamp, write_report
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
    runs_root: Annotated[Path, typer.Option(help="Where run folders go.")] = Path("runs"),
) -> None:
    """Run every implemented system's demo preset, then write one summary report."""
    list_systems()
    systems = all_systems()
    implemented = [s for s in systems if s.status == "implemented"]
    summary_dir = runs_root / "demo" / now_stamp()
    summary_dir.mkdir(parents=True, exist_ok=True)
    rows: list[list[object]] = []
    failures = 0
    for s in implemented:
        start = time.perf_counter()
        try:
            record, _ = run_system(s, "demo", runs_root=runs_root, console=console)
        except Exception as e:
            failures += 1
            rows.append(
                [
                    s.name,
                    s.claim,
                    "—",
                    "—",
                    "—",
                    f"failed: {type(e).__name__}: {e}",
                    round(time.perf_counter() - start, 1),
                ]
            )
            continue
        cc = record.report.claim_check
        if cc is None:
            rows.append([s.name, s.claim, "—", "—", "—", "no claim check", round(record.wall_time_s, 1)])
        else:
            rows.append(
                [
                    s.name,
                    s.claim,
                    cc.metric,
                    f"{cc.method} {format_cell(cc.method_value)}",
                    f"{cc.baseline} {format_cell(cc.baseline_value)}",
                    cc.verdict,
                    round(record.wall_time_s, 1),
                ]
            )
    columns = ["system", "paper's claim", "metric", "method", "baseline", "claim", "wall s"]
    planned = [s.name for s in systems if s.status == "planned"]
    text = [
        "# iclr26 demo summary\n",
        f"{len(implemented)} of {len(systems)} systems implemented; each ran its `demo` preset.\n",
        markdown_table(columns, rows) if rows else "_No system is implemented yet._",
        "\nPlanned (not run): " + (", ".join(planned) if planned else "none"),
    ]
    (summary_dir / "summary.md").write_text("\n".join(text) + "\n")
    (summary_dir / "summary.json").write_text(
        json.dumps({"columns": columns, "rows": rows, "planned": planned}, indent=2) + "\n"
    )
    console.print("\n".join(text), highlight=False)
    console.print(f"summary → {summary_dir / 'summary.md'}")
    if failures:
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
