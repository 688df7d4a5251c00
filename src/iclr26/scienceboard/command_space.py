"""A command action space for text-only models (issue 60): `command(text)` types `text` into the app's
known input and presses Enter, so a model that knows the domain but cannot point is measured on what it
knows.

The apps with such an input: KAlgebra (its expression line), PyMOL (its command line) and GRASS GIS
(its shell). The environment clicks the input at the point the reference solutions click
(`INPUTS`: the windows are placed the same way each start), types and presses Enter. In this space a
reply is a ```python block of `command('...')` calls only (one per line), or DONE / FAIL / WAIT /
ANSWER; a pyautogui call is refused, so the pixel actions are out of the model's reach.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from iclr26.agents import InvalidAction
from iclr26.scienceboard.gui_actions import MAX_TEXT, GuiAction, reply_calls
from iclr26.scienceboard.task import APPS

INPUTS = {"kalgebra": (320, 450), "pymol": (500, 218), "grass": (400, 300)}
"""Where each app's known input is clicked: KAlgebra's expression line, PyMOL's viewer (typing there
reaches its command line), GRASS's terminal."""
COMMAND_APPS = tuple(INPUTS)
SETTLE_S = {"grass": 1.0}
"""Seconds to wait after Enter (a GRASS module runs before the next command)."""
HINTS = {
    "kalgebra": "command(text) types an expression into KAlgebra's input line and presses Enter; "
    "`name := expression` stores a variable.",
    "pymol": "command(text) types a PyMOL command (color, show, remove, select, ...) into PyMOL's "
    "command line and presses Enter.",
    "grass": "command(text) types a GRASS GIS command (g.region, r.mapcalc, r.univar, v.db.select, "
    "g.rename, ...) into the GRASS shell and presses Enter.",
}


def parse_commands(code: str) -> list[str]:
    """The texts of a block's `command('...')` calls, in order; anything else raises `InvalidAction`."""
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise InvalidAction(f"the code block is not valid Python: {e.msg} (line {e.lineno})") from None
    out = []
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        args = [] if not isinstance(call, ast.Call) else [*call.args, *(k.value for k in call.keywords)]
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "command"
            and len(args) == 1
            and all(k.arg == "text" for k in call.keywords)
        ):  # command(text): one argument, by position or as text=
            got = ast.unparse(stmt)[:80]
            raise InvalidAction(f"only command('text') calls are allowed here, got `{got}`")
        arg = args[0]
        if not isinstance(arg, ast.Constant) or not isinstance(arg.value, str):
            raise InvalidAction(f"command needs one literal string, got `{ast.unparse(arg)[:80]}`")
        if not arg.value.strip() or len(arg.value) > MAX_TEXT or "\n" in arg.value:
            raise InvalidAction(f"command needs one non-empty line of at most {MAX_TEXT} characters")
        out.append(arg.value)
    return out


def command_events(app: str, text: str) -> list[GuiAction]:
    """The input events of `command(text)` in `app`: click its known input, type, Enter (and wait)."""
    if app not in INPUTS:
        raise InvalidAction(f"{app} has no command input: command() works in {', '.join(COMMAND_APPS)}")
    x, y = INPUTS[app]
    events = [GuiAction("click", x, y), GuiAction("type", text=text), GuiAction("key", text="Return")]
    if app in SETTLE_S:
        events.append(GuiAction("sleep", seconds=SETTLE_S[app]))
    return events


def reference_commands(replies: Sequence[str]) -> list[str]:
    """A reference solution in the command space: each code block's typed texts become `command()`
    calls (its clicks, Enter presses and sleeps are what `command` does); control words stay."""
    out = []
    for r in replies:
        calls = reply_calls(r)
        if calls is None:
            out.append(r)
            continue
        texts = [
            ast.literal_eval(c.args[0])
            for c in calls
            if isinstance(c.func, ast.Attribute) and c.func.attr in ("write", "typewrite")
        ]
        out.append("```python\n" + "".join(f"command({t!r})\n" for t in texts) + "```")
    return out


def command_prompt(task_type: str, observation_words: str) -> str:
    """The system message in the command space for a task of `task_type` (the task file's `type`)."""
    app = APPS.get(task_type) or task_type
    return (
        f"You carry out a scientific task in {task_type}. {HINTS[app]}\n"
        f"Each turn you get the task and {observation_words}.\n"
        "Answer with exactly one action: a ```python block with one command('text') call, DONE when "
        "the task is complete, FAIL if it cannot be done, or ANSWER: <answer> when the task asks a "
        "question."
    )
