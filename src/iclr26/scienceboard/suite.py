"""The built-here task set, in ScienceBoard's task-file schema, each with a reference solution.

The tasks span the paper's four kinds: direct instructions (the value is given), basic operations,
advanced knowledge (the value must be known: a constant or a molar mass), and reasoning ending in
an answer (ANS); plus infeasible requests whose right ending is FAIL. The reference solution is
the oracle agent's replies: pyautogui blocks in the action format, then DONE, ANSWER or FAIL. A
task set is valid only when the oracle passes every task and the null agent none
(`iclr26.agents.check_suite`), which `benchmarks/scienceboard/suite_check.py` verifies on the real
apps.

Five domains, as the paper's (Lean's aside): documents (TeXstudio), biochemistry (PyMOL, in
ChimeraX's place), algebra (KAlgebra), geoinformatics (GRASS GIS's shell, on a location built from
data written here) and astronomy (Stellarium, in Celestia's place).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iclr26.scienceboard.task import TaskFile, parse_task

DOC_PATH = "/home/user/doc/main.tex"
DOC_FOLDER = "/home/user/doc"


@dataclass(frozen=True)
class BuiltTask:
    """A built-here task: its id, kind, the task file's JSON, and the oracle's replies."""

    task_id: str
    kind: str  # direct, basic, knowledge, reasoning, infeasible
    spec: dict[str, Any]
    oracle: tuple[str, ...]

    def task(self) -> TaskFile:
        return parse_task(self.spec, self.task_id)


def _built(
    app: str,
    task_id: str,
    kind: str,
    instruction: str,
    initialize: list[dict[str, Any]],
    evaluate: list[dict[str, Any]],
    oracle: list[str],
    steps: int,
) -> BuiltTask:
    """A task in the authors' schema (`app` is the file's `type`) with its oracle replies."""
    spec = {
        "type": app,
        "sort": "VM",
        "steps": steps,
        "version": "0.1",
        "instruction": instruction,
        "initialize": initialize,
        "evaluate": evaluate,
    }
    return BuiltTask(task_id, kind, spec, tuple(oracle))


def _doc(body: str) -> str:
    return f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"


def _replace_script(placeholder: str, value: str) -> str:
    """TeXstudio: find the placeholder (the find bar selects it as it is typed), close the bar, type over
    the selection, save."""
    return (
        "```python\npyautogui.click(600, 250)\npyautogui.hotkey('ctrl', 'f')\n"
        f"pyautogui.write('{placeholder}')\npyautogui.click(346, 397)\npyautogui.write('{value}')\n"
        "pyautogui.hotkey('ctrl', 's')\n```"
    )


def _tex(
    task_id: str,
    kind: str,
    instruction: str,
    body: str,
    evaluate: list[dict[str, Any]],
    oracle: list[str],
    steps: int = 8,
) -> BuiltTask:
    initialize = [
        {"func": "touch", "path": DOC_PATH, "text": _doc(body)},
        {"func": "launch", "command": "texstudio"},
    ]
    return _built("TeXstudio", task_id, kind, instruction, initialize, evaluate, oracle, steps)


def _replace_task(task_id: str, kind: str, instruction: str, sentence: str, value: str) -> BuiltTask:
    evaluate = [
        {"type": "file", "path": DOC_PATH, "source": "xxx.xx", "target": value},
        {"type": "compile", "path": DOC_FOLDER, "file": "main"},
    ]
    return _tex(task_id, kind, instruction, sentence, evaluate, [_replace_script("xxx.xx", value), "DONE"])


DIRECT = (
    ("water", "The molar mass of water is xxx.xx g/mol.", "18.02"),
    ("ethanol", "The boiling point of ethanol is xxx.xx degrees Celsius.", "78.37"),
    ("gravity", "Standard gravity is xxx.xx metres per second squared.", "9.81"),
)
KNOWLEDGE = (
    ("co2", "The molar mass of carbon dioxide, to two decimals, is xxx.xx g/mol.", "44.01"),
    ("nacl", "The molar mass of sodium chloride, to two decimals, is xxx.xx g/mol.", "58.44"),
    ("pi", "The number pi, to two decimals, is xxx.xx here.", "3.14"),
    ("kelvin", "Zero degrees Celsius, to two decimals, is xxx.xx kelvin.", "273.15"),
)
SECTIONS = (
    ("sections-3", ["Introduction", "Methods", "Results"]),
    ("sections-4", ["Background", "Data", "Analysis", "Discussion"]),
)


def texstudio_tasks() -> list[BuiltTask]:
    """The documents domain: TeXstudio tasks of every kind."""
    out = []
    for name, sentence, value in DIRECT:
        out.append(
            _replace_task(
                f"tex-direct-{name}",
                "direct",
                f"In the open document, replace xxx.xx with {value} and save it.",
                sentence,
                value,
            )
        )
    for name, sentence, value in KNOWLEDGE:
        out.append(
            _replace_task(
                f"tex-knowledge-{name}",
                "knowledge",
                "In the open document, replace xxx.xx with the right value (two decimals) and save it.",
                sentence,
                value,
            )
        )
    for name, titles in SECTIONS:
        body = "\n".join(f"\\section{{{t}}}\nText about {t.lower()}." for t in titles)
        ans = str(len(titles))
        question = "How many sections does the open document have? Answer with ANSWER: <number>."
        stop = [{"type": "stop", "value": "ANS", "args": [ans]}]
        out.append(
            _tex(f"tex-reasoning-{name}", "reasoning", question, body, stop, [f"ANSWER: {ans}"], steps=5)
        )
    request = "Open the document's PDF in Adobe Acrobat Reader."
    fail = [{"type": "stop", "value": "FAIL"}]
    out.append(_tex("tex-infeasible-acrobat", "infeasible", request, "Hello.", fail, ["FAIL"], steps=3))
    return out


# A small peptide written here (chain A: ALA 1, GLY 2, SER 3, no hydrogens) and two waters; the
# coordinates are a plausible backbone, not a deposited structure.
PEPTIDE_PDB = """\
ATOM      1  N   ALA A   1      -0.677  -1.230  -0.491  1.00  0.00           N
ATOM      2  CA  ALA A   1      -0.001   0.064  -0.491  1.00  0.00           C
ATOM      3  C   ALA A   1       1.499  -0.110  -0.491  1.00  0.00           C
ATOM      4  O   ALA A   1       2.030  -1.227  -0.502  1.00  0.00           O
ATOM      5  CB  ALA A   1      -0.509   0.856   0.727  1.00  0.00           C
ATOM      6  N   GLY A   2       2.196   1.018  -0.481  1.00  0.00           N
ATOM      7  CA  GLY A   2       3.649   1.018  -0.481  1.00  0.00           C
ATOM      8  C   GLY A   2       4.181   2.437  -0.470  1.00  0.00           C
ATOM      9  O   GLY A   2       3.420   3.406  -0.459  1.00  0.00           O
ATOM     10  N   SER A   3       5.508   2.560  -0.472  1.00  0.00           N
ATOM     11  CA  SER A   3       6.131   3.874  -0.462  1.00  0.00           C
ATOM     12  C   SER A   3       7.648   3.753  -0.465  1.00  0.00           C
ATOM     13  O   SER A   3       8.214   2.662  -0.476  1.00  0.00           O
ATOM     14  CB  SER A   3       5.677   4.652   0.771  1.00  0.00           C
ATOM     15  OG  SER A   3       6.150   5.990   0.760  1.00  0.00           O
HETATM   16  O   HOH A 101       9.000   0.000   0.000  1.00  0.00           O
HETATM   17  O   HOH A 102      -3.000   2.000   1.000  1.00  0.00           O
END
"""
PDB_PATH = "/home/user/bio/peptide.pdb"
PROTEIN_ATOMS = 15


def _pymol_commands(*commands: str) -> str:
    """PyMOL: click its command line and type each command, then Enter."""
    lines = "".join(f"pyautogui.write('{c}')\npyautogui.press('enter')\n" for c in commands)
    return f"```python\npyautogui.click(500, 218)\n{lines}```"


def _pymol(
    task_id: str, kind: str, instruction: str, evaluate: list[dict[str, Any]], oracle: list[str]
) -> BuiltTask:
    initialize = [
        {"func": "touch", "path": PDB_PATH, "text": PEPTIDE_PDB},
        {"func": "launch", "command": "pymol"},
    ]
    return _built("PyMOL", task_id, kind, instruction, initialize, evaluate, oracle, 8)


def _atoms(selection: str, n: int) -> dict[str, Any]:
    return {"type": "select", "selection": selection, "value": n}


def pymol_tasks() -> list[BuiltTask]:
    """The biochemistry domain: PyMOL tasks on the peptide written here."""
    return [
        _pymol("pymol-direct-color-gly", "direct",
               "In PyMOL, color the glycine residue red (and nothing else).",
               [_atoms("color red and resn GLY", 4), _atoms("color red", 4)],
               [_pymol_commands("color red, resn GLY"), "DONE"]),
        _pymol("pymol-basic-remove-water", "basic",
               "In PyMOL, delete the water molecules from the structure.",
               [_atoms("resn HOH", 0), _atoms("all", PROTEIN_ATOMS)],
               [_pymol_commands("remove resn HOH"), "DONE"]),
        _pymol("pymol-basic-spheres", "basic", "In PyMOL, show every atom as spheres.",
               [_atoms("rep spheres", PROTEIN_ATOMS + 2)],
               [_pymol_commands("show spheres"), "DONE"]),
        _pymol("pymol-knowledge-serine", "knowledge",
               "In PyMOL, color the residue whose one-letter code is S blue (and nothing else).",
               [_atoms("color blue and resn SER", 6), _atoms("color blue", 6)],
               [_pymol_commands("color blue, resn SER"), "DONE"]),
        _pymol("pymol-reasoning-ala-atoms", "reasoning",
               "How many atoms does the alanine residue have in this file? Answer with ANSWER: <number>.",
               [{"type": "stop", "value": "ANS", "args": ["5"]}], ["ANSWER: 5"]),
        _pymol("pymol-infeasible-alphafold", "infeasible",
               "In PyMOL, predict this peptide's structure with AlphaFold.",
               [{"type": "stop", "value": "FAIL"}], ["FAIL"]),
    ]  # fmt: skip


def _kalgebra_input(*expressions: str) -> str:
    """KAlgebra (its window placed at the top-left): click the calculator's input line, then enter
    each expression."""
    lines = "".join(f"pyautogui.write('{e}')\npyautogui.press('enter')\n" for e in expressions)
    return f"```python\npyautogui.click(320, 450)\n{lines}```"


def _kalgebra(
    task_id: str, kind: str, instruction: str, evaluate: list[dict[str, Any]], oracle: list[str]
) -> BuiltTask:
    initialize = [{"func": "launch", "command": "kalgebra"}]
    return _built("KAlgebra", task_id, kind, instruction, initialize, evaluate, oracle, 6)


def _val(key: str, value: float) -> dict[str, Any]:
    return {"type": "val", "key": key, "value": value}


def kalgebra_tasks() -> list[BuiltTask]:
    """The algebra domain: KAlgebra's calculator, its variables read from the Variables panel."""
    return [
        _kalgebra("kalgebra-direct-define", "direct",
                  "In KAlgebra, define the variable `a` with the value 42.",
                  [_val("a", 42)], [_kalgebra_input("a := 42"), "DONE"]),
        _kalgebra("kalgebra-direct-power", "direct",
                  "In KAlgebra, store 2 to the power 16 in the variable `n`.",
                  [_val("n", 65536)], [_kalgebra_input("n := 2^16"), "DONE"]),
        _kalgebra("kalgebra-basic-sum", "basic",
                  "In KAlgebra, store the sum of the integers from 1 to 100 in the variable `s`.",
                  [_val("s", 5050)], [_kalgebra_input("s := sum(k : k=1..100)"), "DONE"]),
        _kalgebra("kalgebra-basic-function", "basic",
                  "In KAlgebra, define the function f(x) = x^2 + 1 as the variable `f`.",
                  [{"type": "var", "key": "f", "value": "x->x^2+1"}],
                  [_kalgebra_input("f := x->x^2+1"), "DONE"]),
        _kalgebra("kalgebra-knowledge-light", "knowledge",
                  "In KAlgebra, store the speed of light in vacuum, in metres per second, in the "
                  "variable `c`.",
                  [_val("c", 299792458)], [_kalgebra_input("c := 299792458"), "DONE"]),
        _kalgebra("kalgebra-knowledge-day", "knowledge",
                  "In KAlgebra, store the number of seconds in one day in the variable `d`.",
                  [_val("d", 86400)], [_kalgebra_input("d := 24*60*60"), "DONE"]),
        _kalgebra("kalgebra-reasoning-factorial", "reasoning",
                  "Use KAlgebra to compute 10 factorial. Answer with ANSWER: <number>.",
                  [{"type": "stop", "value": "ANS", "args": ["3628800"]}],
                  [_kalgebra_input("factorial(10)"), "ANSWER: 3628800"]),
        _kalgebra("kalgebra-infeasible-mathematica", "infeasible",
                  "In KAlgebra, export this session as a Mathematica notebook.",
                  [{"type": "stop", "value": "FAIL"}], ["FAIL"]),
    ]  # fmt: skip


# The GIS data, written here: a 100 m elevation grid (UTM zone 33N) and eight wells with depths.
GIS_DB, GIS_LOCATION = "/home/user/grassdata", "demo"
ELEV_PATH, WELLS_PATH = "/home/user/gis/elevation.asc", "/home/user/gis/wells.txt"
ELEV_ROWS, ELEV_COLS, ELEV_RES = 8, 10, 100
ELEV_NORTH, ELEV_WEST = 5_000_800, 500_000
WELLS = (
    (1, 500_150, 5_000_150, 120.5, "Alder"),
    (2, 500_350, 5_000_250, 80.0, "Birch"),
    (3, 500_550, 5_000_650, 145.0, "Cedar"),
    (4, 500_750, 5_000_450, 60.5, "Dogwood"),
    (5, 500_250, 5_000_550, 101.0, "Elm"),
    (6, 500_850, 5_000_150, 99.5, "Fir"),
    (7, 500_450, 5_000_750, 210.0, "Gum"),
    (8, 500_950, 5_000_350, 40.0, "Hazel"),
)


def elevation(row: int, col: int) -> int:
    """The elevation grid's cell (metres): a slope rising east and south, and one hill."""
    return 200 + 15 * col + 10 * row + (60 if (row, col) == (2, 7) else 0)


def elevation_ascii() -> str:
    """The grid in GRASS's ASCII raster format (r.in.ascii)."""
    head = (
        f"north: {ELEV_NORTH}\nsouth: {ELEV_NORTH - ELEV_ROWS * ELEV_RES}\n"
        f"east: {ELEV_WEST + ELEV_COLS * ELEV_RES}\nwest: {ELEV_WEST}\nrows: {ELEV_ROWS}\ncols: {ELEV_COLS}\n"
    )
    rows = (" ".join(str(elevation(r, c)) for c in range(ELEV_COLS)) for r in range(ELEV_ROWS))
    return head + "\n".join(rows) + "\n"


def _grass_commands(*commands: str) -> str:
    """GRASS's shell in the terminal window: click into it, type each command and Enter, wait a moment."""
    lines = "".join(
        f"pyautogui.write({c!r})\npyautogui.press('enter')\npyautogui.sleep(1)\n" for c in commands
    )
    return f"```python\npyautogui.click(400, 300)\n{lines}```"


def _grass(
    task_id: str, kind: str, instruction: str, evaluate: list[dict[str, Any]], oracle: list[str]
) -> BuiltTask:
    wells = "".join(f"{x}|{y}|{cat}|{depth}|{name}\n" for cat, x, y, depth, name in WELLS)
    build = {
        "epsg": 32633,
        "import": [
            {"module": "r.in.ascii", "input": ELEV_PATH, "output": "elevation"},
            {"module": "v.in.ascii", "input": WELLS_PATH, "output": "wells", "x": 1, "y": 2, "cat": 3,
             "columns": "x double precision, y double precision, cat integer, depth double precision, "
                        "name varchar(20)"},
        ],
        "region": {"raster": "elevation"},
    }  # fmt: skip
    initialize = [
        {"func": "touch", "path": ELEV_PATH, "text": elevation_ascii()},
        {"func": "touch", "path": WELLS_PATH, "text": wells},
        {
            "func": "map",
            "grassdb": GIS_DB,
            "location": GIS_LOCATION,
            "mapset": "PERMANENT",
            "build": build,
        },
    ]
    return _built("GrassGIS", task_id, kind, instruction, initialize, evaluate, oracle, 8)


def _region(key: str, value: float) -> dict[str, Any]:
    return {"type": "info", "key": f"lambda dump: dump['region']['{key}']", "value": value}


def _univar(raster: str, stat: str, value: float, tol: float = 1e-6) -> dict[str, Any]:
    return {"type": "db", "cmd": "r.univar", "kwargs": {"map": raster, "flags": "g"},
            "key": f"lambda out: out['{stat}']", "value": value,
            "pred": f"lambda key, value: abs(key - value) < {tol!r}"}  # fmt: skip


def grass_tasks() -> list[BuiltTask]:
    """The geoinformatics domain: GRASS GIS's shell on the elevation grid and the wells."""
    peak = max(elevation(r, c) for r in range(ELEV_ROWS) for c in range(ELEV_COLS))
    low = min(elevation(r, c) for r in range(ELEV_ROWS) for c in range(ELEV_COLS))
    deep = sum(1 for w in WELLS if w[3] > 100)
    return [
        _grass("grass-direct-resolution", "direct",
               "In GRASS GIS, set the computational region's resolution to 50 metres.",
               [_region("nsres", 50), _region("ewres", 50)], [_grass_commands("g.region res=50"), "DONE"]),
        _grass("grass-direct-north", "direct",
               "In GRASS GIS, move the computational region's north edge to 5000500 (keep the other edges).",
               [_region("n", 5_000_500), _region("s", ELEV_NORTH - ELEV_ROWS * ELEV_RES)],
               [_grass_commands("g.region n=5000500"), "DONE"]),
        _grass("grass-basic-double", "basic",
               "In GRASS GIS, create a raster map `double_elev` whose cells are twice those of `elevation`.",
               [_univar("double_elev", "max", 2 * peak), _univar("double_elev", "min", 2 * low)],
               [_grass_commands('r.mapcalc "double_elev = 2 * elevation"'), "DONE"]),
        _grass("grass-basic-rename", "basic", "In GRASS GIS, rename the vector map `wells` to `boreholes`.",
               [{"type": "db", "cmd": "v.db.select", "kwargs": {"map": "boreholes", "format": "json"},
                 "key": "lambda out: len(out['records'])", "value": len(WELLS)}],
               [_grass_commands("g.rename vector=wells,boreholes"), "DONE"]),
        _grass("grass-knowledge-feet", "knowledge",
               "In GRASS GIS, create a raster map `elev_ft` with the elevation converted from metres to feet "
               "(international feet).",
               [_univar("elev_ft", "max", peak / 0.3048, tol=0.01)],
               [_grass_commands(f'r.mapcalc "elev_ft = elevation * {1 / 0.3048!r}"'), "DONE"]),
        _grass("grass-reasoning-peak", "reasoning",
               "What is the highest elevation, in metres, in the raster map `elevation`? Answer with "
               "ANSWER: <number>.",
               [{"type": "stop", "value": "ANS", "args": [str(peak)]}],
               [_grass_commands("r.univar map=elevation"), f"ANSWER: {peak}"]),
        _grass("grass-reasoning-deep-wells", "reasoning",
               "How many wells in the vector map `wells` are deeper than 100 metres? Answer with "
               "ANSWER: <number>.",
               [{"type": "stop", "value": "ANS", "args": [str(deep)]}],
               [_grass_commands('v.db.select map=wells where="depth > 100"'), f"ANSWER: {deep}"]),
        _grass("grass-infeasible-satellite", "infeasible",
               "In GRASS GIS, download today's Sentinel-2 image of this area.",
               [{"type": "stop", "value": "FAIL"}], ["FAIL"]),
    ]  # fmt: skip


def _search(name: str) -> str:
    """Stellarium: open its search window (F3), type the object's name, Enter selects and centres it."""
    return (
        "```python\npyautogui.click(640, 400)\npyautogui.press('f3')\npyautogui.sleep(1)\n"
        f"pyautogui.write('{name}')\npyautogui.press('enter')\npyautogui.sleep(1)\npyautogui.press('esc')\n```"
    )


def _stellarium(
    task_id: str, kind: str, instruction: str, evaluate: list[dict[str, Any]], oracle: list[str]
) -> BuiltTask:
    initialize = [{"func": "launch", "command": "stellarium"}]
    return _built("Stellarium", task_id, kind, instruction, initialize, evaluate, oracle, 6)


def _selected(name: str) -> dict[str, Any]:
    return {"type": "info", "key": "lambda dump: dump['selected']", "value": name}


def stellarium_tasks() -> list[BuiltTask]:
    """The astronomy domain: Stellarium's sky, read through its RemoteControl API."""
    return [
        _stellarium("stellarium-direct-mars", "direct", "In Stellarium, select the planet Mars.",
                    [_selected("Mars")], [_search("Mars"), "DONE"]),
        _stellarium("stellarium-direct-sirius", "direct", "In Stellarium, select the star Sirius.",
                    [_selected("Sirius")], [_search("Sirius"), "DONE"]),
        _stellarium("stellarium-basic-stop-time", "basic",
                    "In Stellarium, stop the flow of time (a time rate of zero).",
                    [{"type": "info", "key": "lambda dump: dump['time']['timerate']", "value": 0}],
                    ["```python\npyautogui.click(640, 400)\npyautogui.press('7')\n```", "DONE"]),
        _stellarium("stellarium-knowledge-largest-planet", "knowledge",
                    "In Stellarium, select the largest planet of the Solar System.",
                    [_selected("Jupiter")], [_search("Jupiter"), "DONE"]),
        _stellarium("stellarium-knowledge-pole-star", "knowledge",
                    "In Stellarium, select the bright star closest to the north celestial pole.",
                    [_selected("Polaris")], [_search("Polaris"), "DONE"]),
        _stellarium("stellarium-reasoning-city", "reasoning",
                    "In which city is Stellarium's observer located? Answer with ANSWER: <city>.",
                    [{"type": "stop", "value": "ANS", "args": ["Paris"]}], ["ANSWER: Paris"]),
        _stellarium("stellarium-infeasible-gaia", "infeasible",
                    "In Stellarium, download the newest Gaia star catalogue.",
                    [{"type": "stop", "value": "FAIL"}], ["FAIL"]),
    ]  # fmt: skip


def built_tasks() -> list[BuiltTask]:
    """Every built-here task, in a fixed order."""
    return texstudio_tasks() + pymol_tasks() + kalgebra_tasks() + grass_tasks() + stellarium_tasks()


def write_suite(root: str | Path, tasks: list[BuiltTask] | None = None) -> Path:
    """Write the tasks as task files in the authors' layout (`<root>/VM/<App>/<id>.json`)."""
    root = Path(root)
    for t in tasks if tasks is not None else built_tasks():
        path = root / t.spec["sort"] / t.spec["type"] / f"{t.task_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(t.spec, indent=1) + "\n", encoding="utf-8")
    return root
