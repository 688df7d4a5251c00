"""The model agent's instructions: the desktop, the observation it gets, and the action format.

Written for this package (the authors' prompts were read, not copied). The action format itself
(a ```python block, DONE, FAIL, WAIT, ANSWER) is appended by `iclr26.agents.LLMAgent` from the
parser, so prompt and parser cannot disagree.
"""

from __future__ import annotations

from iclr26.scienceboard.task import APPS

SEEN = {
    "a11y_tree": "the screen's accessibility tree: one line per element with its role, name, text, "
    "position (x, y) and size (w, h) in pixels",
    "screenshot": "a screenshot of the screen",
    "screenshot_a11y_tree": "a screenshot and the screen's accessibility tree (role, name, text, "
    "position, size)",
    "set_of_marks": "a screenshot with numbered boxes on the elements, and the list of those elements; "
    "`pyautogui.click(tag_3)` clicks the centre of box 3",
    "textual": "the text of the terminal the app runs in",
}

APP_NOTES = {
    "kalgebra": "KAlgebra is a calculator: type an expression into its input line and press Enter; "
    "`name := expression` stores a variable, shown in the Variables panel.",
    "grass": "GRASS GIS runs as a command shell in a terminal window: click into it, type a GRASS "
    "command (g.region, r.mapcalc, r.univar, v.db.select, g.rename, ...) and press Enter.",
    "texstudio": "TeXstudio edits the LaTeX document that is open; save it with ctrl+s.",
    "pymol": "PyMOL has a command line under its menu bar: click it, type a PyMOL command "
    "(color, show, remove, select, ...) and press Enter.",
}


def system_prompt(task_type: str, observation: str, width: int = 1280, height: int = 800) -> str:
    """The system message for a task of `task_type` (the task file's `type`) seen as `observation`."""
    app = APPS.get(task_type) or task_type
    return (
        f"You control a Linux desktop of {width}x{height} pixels to carry out a scientific task in "
        f"{task_type}. {APP_NOTES.get(app, '')}\n"
        f"Each turn you get the task and {SEEN[observation]}.\n"
        "Answer with exactly one action. To act, write a ```python block of pyautogui calls, one per "
        "line, with literal arguments: pyautogui.click(x, y), doubleClick(x, y), rightClick(x, y), "
        "moveTo(x, y), write('text'), press('enter'), hotkey('ctrl', 's'), scroll(-3), time.sleep(1). "
        "Say WAIT if the app needs time, DONE when the task is complete, FAIL if it cannot be done, "
        "and ANSWER: <answer> when the task asks a question."
    )
