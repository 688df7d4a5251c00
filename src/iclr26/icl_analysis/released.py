"""The authors' released predictions, rescored. A file
`predictions/<model>/<Task>/predictions_<style>_<k>_shot[_shuffled].json` is one JSON object keyed
`delta_<δ>` (δ = 0 for the ID test items), each holding items with `Entry`, `Label`, `Index` and the
model's `Response`. Each split is scored three ways:

- `paper`: the paper's rule (§3.3), restated here from its description (no code copied): strip
  periods and commas, lower-case, read the first word as an integer; a reply marked `fail`
  (a broken request) or missing leaves the accuracy's denominator; "punish" counts an unread reply
  as wrong; VM-Sum is graded against the tape's sum with the stated balance added back;
- `ours`: `scoring.parse_reply` on every item (binary tasks accept only 0 and 1);
- `checked`: our parser against the label our task's `check` gives the entry, for the tasks whose
  released labels a check disagrees with (reversal, vending machine, VM-Sum's balance).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from iclr26.icl_analysis.scoring import Score, parse_reply
from iclr26.icl_analysis.tasks import TASKS
from iclr26.icl_analysis.tasks.vending import COINS, PRICES

# the paper's model folders and the names its tables use
MODELS: dict[str, str] = {
    "turbo": "GPT-4 Turbo",
    "omni": "GPT-4o",
    "phi3": "Phi-3.5 MoE",
    "mixtral": "Mixtral 8x7B",
}
# our task name -> the authors' folder under predictions/<model>/
TASK_FOLDERS: dict[str, str] = {
    "parity": "PARITY",
    "pattern_matching": "Pattern_Matching",
    "reversal": "Reversal",
    "stack": "Stack",
    "vending_machine": "Vending_Machine",
    "vending_machine_sum": "Vending_Machine_Sum",
    "hamiltonian": "Hamiltonian",
    "maze_solve": "MazeSolve",
    "maze_complete": "MazeComplete",
}
# the authors' style stems -> ours (the direct styles, read by the label parser)
DIRECT_STYLES: dict[str, str] = {
    "modus_ponens": "modus_ponens",
    "w_desc": "description",
    "w_automaton": "automaton",
    "word_salad": "word_salad",
    "apo": "apo",
}
CHECKED_TASKS = ("reversal", "vending_machine", "vending_machine_sum")
_FILE = re.compile(r"predictions_(?P<style>[a-z_]+?)_(?P<shots>\d+)_shot(?P<shuffled>_shuffled)?\.json$")


class ReleaseError(ValueError):
    """A prediction file that does not have the released format."""


@dataclass(frozen=True)
class Prediction:
    """One released item: the string (a graph dict for Hamiltonian), its released label, its index,
    and the model's reply (None when the file has none)."""

    entry: object
    label: int
    index: int
    response: str | None


def file_name(path: str) -> tuple[str, int, bool]:
    """(style stem, shots, shuffled) of a prediction file's name."""
    m = _FILE.search(path)
    if not m:
        raise ReleaseError(f"{path}: not a predictions_<style>_<k>_shot[_shuffled].json file")
    return m["style"], int(m["shots"]), bool(m["shuffled"])


def read_predictions(data: object, where: str = "predictions") -> dict[float, list[Prediction]]:
    """A prediction file's object as {δ: items}."""
    if not isinstance(data, dict):
        raise ReleaseError(f"{where}: expected one object keyed by 'delta_<value>'")
    out: dict[float, list[Prediction]] = {}
    for key, items in data.items():
        if not (isinstance(key, str) and key.startswith("delta_")) or not isinstance(items, list):
            raise ReleaseError(f"{where}: key {key!r} is not 'delta_<value>' with a list of items")
        rows = []
        for i, obj in enumerate(items):
            if not isinstance(obj, dict) or "Entry" not in obj or "Label" not in obj:
                raise ReleaseError(f"{where} [{key}][{i}]: expected an object with 'Entry' and 'Label'")
            resp = obj.get("Response")
            if isinstance(resp, list):  # a few files keep the reply as a one-element list
                resp = resp[0] if resp else None
            rows.append(Prediction(obj["Entry"], int(obj["Label"]), int(obj.get("Index", i)), resp))
        out[float(key.removeprefix("delta_"))] = rows
    return out


def tape_sum(entry: str) -> int:
    """VM-Sum's grading target in the paper: coins minus prices over the tape, the stated balance
    (the tape's last field) added back."""
    total = 0
    for tok in entry.split(","):
        if tok in PRICES:
            total -= PRICES[tok]
        elif tok in COINS:
            total += COINS[tok]
        elif tok.lstrip("+-").isdigit():
            total += int(tok)
    return total


def paper_read(response: str | None) -> int | str | None:
    """The paper's reading of one reply: an int, None when it does not read, "fail" when the reply
    is missing or marked as a broken request (such items leave the denominator)."""
    if response is None:
        return "fail"
    text = response.replace(".", "").replace(",", "").replace("<s>", "").replace("<bos>", "").lower().strip()
    if text == "fail":
        return "fail"
    word = text.split("\n")[0].split(" ")[0]
    try:
        return int(word)
    except ValueError:
        return None


def paper_score(items: Iterable[Prediction], task: str) -> Score:
    """The paper's rule: `Score.punish` is its "punished" accuracy and `Score.drop` its unpunished
    one (both over items that did not fail); `n` counts the items that did not fail."""
    n = parsed = correct = 0
    for it in items:
        pred = paper_read(it.response)
        if pred == "fail":
            continue
        label = tape_sum(str(it.entry)) if task == "vending_machine_sum" else it.label
        n += 1
        if pred is not None:
            parsed += 1
            correct += pred == label
    return Score(n, parsed, correct)


def checked_label(task: str, entry: object) -> int | None:
    """The label our task's `check` gives a released entry, or None when it cannot read it."""
    if task not in CHECKED_TASKS or not isinstance(entry, str):
        return None
    try:
        return TASKS[task].check(entry)
    except ValueError:
        return None


def our_score(items: Iterable[Prediction], task: str, *, checked: bool = False) -> Score:
    """Our parser on every item, against the released label or (`checked`) our check's label; with
    `checked`, entries the check cannot read are left out."""
    n = parsed = correct = 0
    binary = TASKS[task].binary
    for it in items:
        if checked:
            label = checked_label(task, it.entry)
            if label is None:
                continue
        else:
            label = tape_sum(str(it.entry)) if task == "vending_machine_sum" else it.label
        pred = parse_reply(it.response or "", reasoning=False, binary=binary)
        n += 1
        if pred is not None:
            parsed += 1
            correct += pred == label
    return Score(n, parsed, correct)


Release = dict[float, list[Prediction]]


def same_replies(plain: Release, shuffled: Release) -> tuple[int, int]:
    """(items matched by δ, index and entry; those whose reply is the same text) between a file
    and its `_shuffled` twin."""
    same = total = 0
    for delta, items in plain.items():
        other = {(p.index, str(p.entry)): p.response for p in shuffled.get(delta, [])}
        for p in items:
            key = (p.index, str(p.entry))
            if key in other:
                total += 1
                same += other[key] == p.response
    return total, same


_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_CELL = re.compile(r"([A-Z]+)(\d+)")
_TABLE_COLUMNS = {4: "turbo", 5: "omni", 6: "phi3", 7: "mixtral"}  # the model columns of a block


def xlsx_sheets(data: bytes) -> dict[str, dict[tuple[int, int], str]]:
    """Every sheet of an .xlsx workbook as {(row, column): text}, both 1-based (values only)."""
    import io
    import xml.etree.ElementTree as ET
    import zipfile

    z = zipfile.ZipFile(io.BytesIO(data))
    rels = {r.get("Id"): r.get("Target") for r in ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))}
    strings = []
    if "xl/sharedStrings.xml" in z.namelist():
        for si in ET.fromstring(z.read("xl/sharedStrings.xml")).iter(f"{_NS}si"):
            strings.append("".join(t.text or "" for t in si.iter(f"{_NS}t")))
    out = {}
    for sheet in ET.fromstring(z.read("xl/workbook.xml")).iter(f"{_NS}sheet"):
        target = rels[sheet.get(_REL)].lstrip("/")
        cells = {}
        xml = z.read(target if target.startswith("xl/") else f"xl/{target}")
        for c in ET.fromstring(xml).iter(f"{_NS}c"):
            v = c.find(f"{_NS}v")
            if v is None or v.text is None:
                continue
            letters, row = _CELL.fullmatch(c.get("r")).groups()
            col = 0
            for ch in letters:
                col = col * 26 + ord(ch) - 64
            cells[(int(row), col)] = strings[int(v.text)] if c.get("t") == "s" else v.text
        out[sheet.get("name")] = cells
    return out


def paper_table(data: bytes) -> dict[tuple[str, str, str, int, float], float]:
    """The authors' accuracy workbook (`annotations/all_results_*.xlsx`) as
    {(model folder, task, style stem, shots, δ): accuracy %}: each "<Task> Accuracy" sheet holds one
    block per style, headed "(<style>)", whose rows are shots, δ and one column per model."""
    folders = {v: k for k, v in TASK_FOLDERS.items()}
    out = {}
    for name, cells in xlsx_sheets(data).items():
        folder = name.removesuffix(" Accuracy")
        if not name.endswith(" Accuracy") or folder not in folders:
            continue
        style = None
        for row in sorted({r for r, _ in cells}):
            head = cells.get((row, 2), "")
            if head.startswith("(") and head.endswith(")"):
                style = head[1:-1]
                continue
            try:
                shots, delta = int(float(head)), float(cells[(row, 3)])
            except (KeyError, ValueError):
                continue
            for col, model in _TABLE_COLUMNS.items():
                if style and (row, col) in cells:
                    out[(model, folders[folder], style, shots, delta)] = float(cells[(row, col)])
    return out
