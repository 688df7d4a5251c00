"""The built-here task set, in ScienceBoard's task-file schema, each with a reference solution.

The tasks span the paper's four kinds: direct instructions (the value is given), basic operations,
advanced knowledge (the value must be known: a constant or a molar mass), and reasoning ending in
an answer (ANS); plus infeasible requests whose right ending is FAIL. The reference solution is
the oracle agent's replies: pyautogui blocks in the action format, then DONE, ANSWER or FAIL. A
task set is valid only when the oracle passes every task and the null agent none
(`iclr26.agents.check_suite`), which `benchmarks/scienceboard/suite_check.py` verifies on the real
apps.

So far: documents (TeXstudio) and biochemistry (PyMOL, in ChimeraX's place).
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
    spec = {
        "type": "TeXstudio",
        "sort": "VM",
        "steps": steps,
        "version": "0.1",
        "instruction": instruction,
        "initialize": [
            {"func": "touch", "path": DOC_PATH, "text": _doc(body)},
            {"func": "launch", "command": "texstudio"},
        ],
        "evaluate": evaluate,
    }
    return BuiltTask(task_id, kind, spec, tuple(oracle))


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
    spec = {
        "type": "PyMOL",
        "sort": "VM",
        "steps": 8,
        "version": "0.1",
        "instruction": instruction,
        "initialize": [
            {"func": "touch", "path": PDB_PATH, "text": PEPTIDE_PDB},
            {"func": "launch", "command": "pymol"},
        ],
        "evaluate": evaluate,
    }
    return BuiltTask(task_id, kind, spec, tuple(oracle))


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


def built_tasks() -> list[BuiltTask]:
    """Every built-here task, in a fixed order."""
    return texstudio_tasks() + pymol_tasks()


def write_suite(root: str | Path, tasks: list[BuiltTask] | None = None) -> Path:
    """Write the tasks as task files in the authors' layout (`<root>/VM/<App>/<id>.json`)."""
    root = Path(root)
    for t in tasks if tasks is not None else built_tasks():
        path = root / t.spec["sort"] / t.spec["type"] / f"{t.task_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(t.spec, indent=1) + "\n", encoding="utf-8")
    return root
