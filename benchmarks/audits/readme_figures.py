"""Every figure in a system README's tables traces to that system's saved results.

    python benchmarks/audits/readme_figures.py [SYSTEM ...]

README tables are typed from `benchmarks/<system>/results/` (JSON, JSONL, CSV). This reads each
table row of `src/iclr26/<system>/README.md` (not the "paper | code" map, which quotes the paper)
and lists each number that no saved result holds, at any rounding to 0-4 decimals, as a
percentage, or to 3-4 significant digits. Small whole numbers (< 20: seeds, shots, steps) and the
numbers in `ALLOWED` (with the reason each is not a measurement) are not checked. It is a net for
transcription slips, not a proof: a number that some other saved figure happens to equal passes.
Exits 1 when a figure is not found.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"(?<![\w.,])[-−+]?(\d{1,3}(?:,\d{3})+|\d+\.\d+|\d+)(?![\w.])")
_RATIO = "the two-pass table's last column: a ratio report.py computes from two saved timings"
_MEANS = "a mean over the 6 translators of the saved per-translator rows (clean -> noise 0.2)"
ALLOWED: dict[str, dict[str, str]] = {
    "dash": dict.fromkeys(("0.88", "0.98", "0.99"), _RATIO),
    "devops_gym": {"1.22": "Go version", "1.19": "Go version"},
    "laplacianformer": {"192": "the paper's ViT width, in the profile table's caption row"},
    "scaf_grpo": {"120": "the training groups after warm-up: a setting of the run, not a result"},
    "slt_reliability": dict.fromkeys(("45.3", "317", "375", "293", "356"), _MEANS),
    "tiered_pruning": {"2006": "a citation's year"},
}


def table_rows(readme: Path) -> Iterator[str]:
    """Each body row of each markdown table, skipping the "paper | code" maps."""
    header: str | None = None
    for line in readme.read_text().splitlines():
        if not line.startswith("|"):
            header = None
            continue
        if header is None:
            header = line
            continue
        if set(line) <= set("|-: ") or header.strip("| ").lower().startswith("paper"):
            continue
        yield line


def _values(obj: object) -> Iterator[float]:
    if isinstance(obj, bool):
        return
    if isinstance(obj, int | float):
        yield float(obj)
    elif isinstance(obj, str):
        for m in NUMBER.findall(obj):
            yield float(m.replace(",", ""))
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _values(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _values(v)


def _renderings(value: float) -> set[str]:
    """How a README may write `value`: 0-4 decimals (half up and as Python rounds), as a percentage,
    to 3 or 4 significant digits; without its sign."""
    out: set[str] = set()
    for x in (abs(value), abs(value) * 100):
        try:
            exact = Decimal(repr(x))
        except InvalidOperation:
            continue
        for d in range(5):
            out.add(str(exact.quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)))
            out.add(f"{x:.{d}f}")
        out |= {f"{x:.3g}", f"{x:.4g}"}
    return out


def saved_figures(system: str) -> set[str]:
    """Every rendering of every number in the system's saved results."""
    found: set[str] = set()
    for path in sorted((ROOT / "benchmarks" / system / "results").glob("*")):
        if path.suffix == ".json":
            values = list(_values(json.loads(path.read_text())))
        elif path.suffix == ".jsonl":
            lines = path.read_text().splitlines()
            values = [v for line in lines if line.strip() for v in _values(json.loads(line))]
        elif path.suffix == ".csv":
            with path.open() as f:
                values = [v for row in csv.reader(f) for v in _values(row)]
        else:
            continue
        for v in values:
            found |= _renderings(v)
    return found


def untraced(system: str) -> list[tuple[str, str]]:
    """(figure, its row) for each README table figure no saved result holds."""
    readme = ROOT / "src" / "iclr26" / system / "README.md"
    known, allowed = saved_figures(system), ALLOWED.get(system, {})
    out = []
    for row in table_rows(readme):
        for m in NUMBER.findall(row):
            figure = m.replace(",", "")
            small = figure.isdigit() and int(figure) < 20
            if not small and figure not in known and figure not in allowed:
                out.append((figure, row))
    return out


def systems() -> list[str]:
    """The systems with a README and saved results."""
    found = (p.parent.name for p in (ROOT / "benchmarks").glob("*/results") if p.is_dir())
    return sorted(s for s in found if (ROOT / "src" / "iclr26" / s / "README.md").is_file())


def main(argv: list[str]) -> int:
    names = argv or systems()
    bad = 0
    for name in names:
        for figure, row in untraced(name):
            bad += 1
            print(f"{name}: {figure} not in benchmarks/{name}/results: {row[:120]}")
    print(f"{bad} figures not traced to a saved result in {len(names)} READMEs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
