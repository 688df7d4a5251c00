"""Run folders: `results.json` (what ran and what it measured), `report.md`, figures.

A run folder is `runs/NAME/<stamp>/`. `results.json` holds the config, library versions, seed,
wall time, status and the report (tables, claim check, figure names); `report.md` is rendered
from it and can be re-rendered at any time with `iclr26 report RUN_DIR`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from iclr26.core.errors import UserError

SCHEMA_VERSION = 1
RESULTS_FILE = "results.json"
REPORT_FILE = "report.md"

Cell = str | int | float | bool | None


class RecordError(UserError, ValueError):
    """A `results.json` that cannot be read back (not UTF-8, not JSON, not a run's record); the
    message names the file. `iclr26 report` and a resume into the folder say it in one line."""


@dataclass
class Table:
    """A results table: one row per method (or setting), one column per metric."""

    title: str
    columns: list[str]
    rows: list[list[Cell]]
    caption: str = ""

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"table {self.title!r}: row {i} has {len(row)} cells but there are "
                    f"{len(self.columns)} columns ({', '.join(self.columns)})"
                )

    def column(self, name: str) -> list[Cell]:
        """The cells of column `name`."""
        if name not in self.columns:
            raise KeyError(f"table {self.title!r} has no column {name!r}: {self.columns}")
        j = self.columns.index(name)
        return [row[j] for row in self.rows]


VERDICTS = ("held", "within noise", "did not hold", "not tested", "uninformative")
"""The verdicts of a claim check: the method beats the baseline by more than the noise (`held`), the
difference is within the noise, it is worse by more than the noise (`did not hold`), the design cannot
test the claim (`not tested`: too few paired units), or every compared arm sits at its floor
(`uninformative`: e.g. 0 vs 0)."""


@dataclass
class ClaimCheck:
    """Did the paper's claim hold in this run? Method vs baseline on one named metric.

    A study's claim (`core.claim.judge`) fills `verdict`, `n` (paired units), `interval` (of the mean
    paired difference method − baseline) and `rule`; a check built with only the values and a
    `margin` gets the margin rule's verdict (`held` when the difference beats ± margin)."""

    metric: str
    method: str
    method_value: float
    baseline: str
    baseline_value: float
    higher_is_better: bool = True
    margin: float = 0.0  # a difference within ± margin (e.g. the seeds' standard error) is noise
    verdict: str = ""  # one of VERDICTS; "" at construction: the margin rule's
    n: int | None = None  # paired units compared
    interval: list[float] | None = None  # interval of the mean paired difference, method − baseline
    rule: str = ""  # how the interval was made, e.g. "± 2 SE of 8 paired differences"
    floors: dict[str, float] | None = None  # each floor arm's mean of the metric over the paired units

    def __post_init__(self) -> None:
        if self.interval is not None:
            self.interval = [float(x) for x in self.interval]
        if not self.verdict:
            diff = self.method_value - self.baseline_value
            if (diff if self.higher_is_better else -diff) > self.margin:
                self.verdict = "held"
            elif abs(diff) <= self.margin:
                self.verdict = "within noise"
            else:
                self.verdict = "did not hold"
        elif self.verdict not in VERDICTS:
            raise ValueError(f"ClaimCheck.verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def held(self) -> bool:
        """True when the verdict is `held`."""
        return self.verdict == "held"


@dataclass
class Report:
    """What a system's `run` returns: tables, figure file names, an optional claim check."""

    tables: list[Table] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    claim_check: ClaimCheck | None = None
    notes: list[str] = field(default_factory=list)


Status = Literal["complete", "failed", "interrupted", "running"]


@dataclass
class RunRecord:
    """Everything `results.json` holds about one run."""

    system: str
    preset: str
    config: dict[str, Any]
    seed: int | None
    started: str
    wall_time_s: float
    status: Status
    report: Report
    versions: dict[str, str] = field(default_factory=dict)
    title: str = ""
    claim: str = ""
    error: str | None = None
    llm_usage: dict[str, float | int] | None = None  # language-model calls, tokens, wall time
    llm: dict[str, str] | None = None  # the run's model (--llm): asked, used, server or folder, identity
    schema_version: int = SCHEMA_VERSION


def library_versions() -> dict[str, str]:
    """Versions of Python, the platform and the main libraries, for results.json."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    out["cpu_count"] = str(os.cpu_count())
    for mod in ("iclr26", "torch", "numpy"):
        with contextlib.suppress(ImportError, AttributeError):  # absent: just not listed
            out[mod] = __import__(mod).__version__
    with contextlib.suppress(ImportError, RuntimeError):
        import torch

        out["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return out


def now_stamp() -> str:
    """A sortable, filesystem-safe UTC time stamp."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")


def make_run_dir(root: Path | str, system: str, stamp: str | None = None) -> Path:
    """Create and return `root/system/<stamp>`; a clash gets a numeric suffix."""
    base = Path(root) / system
    stamp = stamp or now_stamp()
    base.mkdir(parents=True, exist_ok=True)
    path, k = base / stamp, 1
    while True:
        try:
            path.mkdir()  # atomic: of two runs started in the same second, each gets its own folder
            return path
        except FileExistsError:
            path, k = base / f"{stamp}-{k}", k + 1


def _json_safe(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)  # JSON has no NaN/inf; keep them visible as strings
    if isinstance(v, dict):
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_json_safe(x) for x in v]
    return v


def save_record(run_dir: Path | str, record: RunRecord) -> Path:
    """Write `results.json` atomically (write, then rename) and return its path."""
    from iclr26.core.checkpoint import write_text_atomic

    path = Path(run_dir) / RESULTS_FILE
    write_text_atomic(path, json.dumps(_json_safe(asdict(record)), indent=2) + "\n")
    return path


def load_record(path: Path | str) -> RunRecord:
    """Read a run folder's (or a file's) `results.json` back into a RunRecord."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.exists():
        raise FileNotFoundError(f"no {RESULTS_FILE} at {path}: is this a run folder?")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise RecordError(f"{path} is not UTF-8 text: {e}") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: not an iclr26 results file (a JSON {type(data).__name__}, not an object)")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise RecordError(f"{path}: schema_version {version!r}, this iclr26 reads {SCHEMA_VERSION}")
    try:
        rep = data.pop("report")
        claim = rep.get("claim_check")
        report = Report(
            tables=[Table(**t) for t in rep.get("tables", [])],
            figures=list(rep.get("figures", [])),
            claim_check=None
            if claim is None
            else ClaimCheck(
                **{
                    **claim,
                    "method_value": float(claim["method_value"]),  # "nan" too
                    "baseline_value": float(claim["baseline_value"]),
                }
            ),
            notes=list(rep.get("notes", [])),
        )
        return RunRecord(report=report, **data)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        raise RecordError(f"{path}: not an iclr26 results file ({e})") from None


def format_cell(v: Cell) -> str:
    """Format one table cell: floats to 4 significant digits, None as an em dash."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:.4g}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """A GitHub-flavoured markdown table."""
    head = "| " + " | ".join(format_cell(c) for c in columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(format_cell(c) for c in row) + " |" for row in rows]
    return "\n".join([head, rule, *body])


def _claim_noise(cc: ClaimCheck) -> str:
    """The noise behind a verdict, as text: the rule and interval of a study's claim, else the margin."""
    if cc.rule:
        where = ""
        if cc.interval is not None:
            where = f": difference in [{format_cell(cc.interval[0])}, {format_cell(cc.interval[1])}]"
        return f" ({cc.rule}{where})"
    return f" (margin ±{format_cell(cc.margin)})" if cc.margin else ""


def render_report(record: RunRecord) -> str:
    """Render a RunRecord as markdown: header, claim check, tables, figures, config."""
    lines = [f"# {record.system} — {record.preset}"]
    if record.title:
        lines.append(f"\n*{record.title}*")
    if record.claim:
        lines.append(f"\n**Paper's claim:** {record.claim}")
    lines.append(
        f"\nStatus: **{record.status}** · started {record.started} · "
        f"wall time {record.wall_time_s:.1f} s · seed {record.seed}"
    )
    if record.error:
        lines.append(f"\nError: `{record.error}`")
    if record.llm_usage:
        u = record.llm_usage
        lines.append(
            f"\nLanguage model: {u['calls']} calls ({u['cached_calls']} from the cache), "
            f"{u['prompt_tokens']} prompt + {u['completion_tokens']} completion tokens, {u['wall_s']} s"
        )
    cc = record.report.claim_check
    if cc is not None:
        arrow = "higher" if cc.higher_is_better else "lower"
        lines.append(
            f"\n**Claim check** ({cc.metric}, {arrow} is better): {cc.method} "
            f"{format_cell(cc.method_value)} vs {cc.baseline} {format_cell(cc.baseline_value)} "
            f"→ {cc.verdict}" + _claim_noise(cc)
        )
        if cc.floors:
            shown = ", ".join(f"{k} {format_cell(v)}" for k, v in cc.floors.items())
            lines.append(f"Floors on the same units: {shown}.")
    for t in record.report.tables:
        lines.append(f"\n## {t.title}\n")
        lines.append(markdown_table(t.columns, t.rows))
        if t.caption:
            lines.append(f"\n{t.caption}")
    if record.report.figures:
        lines.append("\n## Figures\n")
        lines.extend(f"![{Path(f).stem}]({f})" for f in record.report.figures)
    if record.report.notes:
        lines.append("\n## Notes\n")
        lines.extend(f"- {n}" for n in record.report.notes)
    lines.append("\n## Config\n")
    lines.append("```json\n" + json.dumps(record.config, indent=2) + "\n```")
    lines.append("\n## Versions\n")
    lines.append(markdown_table(["library", "version"], sorted(record.versions.items())))
    return "\n".join(lines) + "\n"


def write_report(run_dir: Path | str, record: RunRecord | None = None) -> Path:
    """(Re-)render `report.md` in `run_dir` from `record` or from its `results.json`."""
    run_dir = Path(run_dir)
    record = record or load_record(run_dir)
    path = run_dir / REPORT_FILE
    path.write_text(render_report(record))
    return path


def pyplot() -> Any:
    """`matplotlib.pyplot` on the non-interactive Agg backend: figures go to files, never a window."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, run_dir: Path | str, name: str) -> str:
    """Save a matplotlib figure as `run_dir/name.png` and return the file name for Report."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"figure name must be a plain file stem, got {name!r}")
    fname = f"{name}.png"
    fig.savefig(Path(run_dir) / fname, dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return fname
