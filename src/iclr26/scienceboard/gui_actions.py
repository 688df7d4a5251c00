"""The agent's pyautogui code, read as data: each call becomes an xdotool action, nothing is executed.

ScienceBoard's agents answer with ```` ```python ```` blocks of pyautogui calls (and `time.sleep`).
The authors run that code in their VM; here the block is parsed with `ast` and only these calls
are accepted, with literal arguments: `click`, `doubleClick`, `rightClick`, `moveTo`, `write` /
`typewrite`, `press`, `hotkey`, `scroll`, and `time.sleep` (or `pyautogui.sleep`).
`import pyautogui` / `import time` lines are allowed and ignored. With set-of-mark observations a
point may be a tag, as in the paper's prompt: `pyautogui.click(tag_3)` clicks the centre of the
element numbered 3. Anything else (another module, a variable, a loop, a string built at run time)
raises `InvalidAction` naming it, and the agent sees that message as its observation.
"""

from __future__ import annotations

import ast
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iclr26.agents import InvalidAction

KEYSYMS = {
    "enter": "Return", "return": "Return", "tab": "Tab", "esc": "Escape", "escape": "Escape",
    "backspace": "BackSpace", "delete": "Delete", "del": "Delete", "space": "space", "up": "Up",
    "down": "Down", "left": "Left", "right": "Right", "home": "Home", "end": "End", "pageup": "Prior",
    "pagedown": "Next", "insert": "Insert", "ctrl": "ctrl", "control": "ctrl", "ctrlleft": "ctrl",
    "shift": "shift", "shiftleft": "shift", "alt": "alt", "altleft": "alt", "win": "super",
    "command": "super", "super": "super", "capslock": "Caps_Lock",
    "+": "plus", "-": "minus", ".": "period", ",": "comma", "/": "slash", "=": "equal", ";": "semicolon",
    "'": "apostrophe", "[": "bracketleft", "]": "bracketright", "\\": "backslash", "*": "asterisk",
    "(": "parenleft", ")": "parenright", " ": "space",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}  # fmt: skip
MAX_TEXT = 2000
MAX_SLEEP_S = 10.0


@dataclass(frozen=True)
class GuiAction:
    """One input event: kind (click, move, type, key, scroll, sleep) and its arguments."""

    kind: str
    x: int = 0
    y: int = 0
    button: int = 1
    clicks: int = 1
    text: str = ""
    seconds: float = 0.0


def keysym(name: str) -> str:
    """pyautogui's key name as an xdotool keysym ('enter' -> 'Return', 'a' -> 'a')."""
    low = name.lower()
    if low in KEYSYMS:
        return KEYSYMS[low]
    if len(name) == 1 and name.isalnum():
        return name
    raise InvalidAction(f"unknown key {name!r}: use pyautogui key names such as 'enter', 'ctrl', 'a'")


def _literal(node: ast.AST, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise InvalidAction(f"{what} must be a literal value, got `{ast.unparse(node)}`") from None


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidAction(f"{what} must be a number, got {value!r}")
    return round(value)


def _point(node: ast.Call, name: str, tags: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
    """The (x, y) a click or move names: two numbers, x=/y= keywords, or one set-of-mark tag."""
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Name) and first.id.startswith("tag_"):
        if first.id not in tags:
            known = f"tags are tag_1 .. tag_{len(tags)}" if tags else "this observation has no tags"
            raise InvalidAction(f"{name}: unknown point {first.id!r} ({known})")
        return tags[first.id]
    args = [_literal(a, f"{name}'s argument") for a in node.args]
    kw = {k.arg: _literal(k.value, f"{name}'s {k.arg}") for k in node.keywords if k.arg in ("x", "y")}
    if len(args) < 2 and not {"x", "y"} <= set(kw):
        raise InvalidAction(f"{name} needs x and y (screen pixels)")
    return _int(args[0] if args else kw["x"], "x"), _int(args[1] if len(args) > 1 else kw["y"], "y")


def _call(node: ast.Call, tags: Mapping[str, tuple[int, int]]) -> list[GuiAction]:
    f = node.func
    if not (
        isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("pyautogui", "time")
    ):
        raise InvalidAction(
            f"only pyautogui.* and time.sleep calls are allowed, got `{ast.unparse(node.func)}`"
        )
    name = f"{f.value.id}.{f.attr}"
    point = ("pyautogui.click", "pyautogui.doubleClick", "pyautogui.rightClick", "pyautogui.moveTo")
    if name in point:
        x, y = _point(node, name, tags)
        node = ast.Call(node.func, [], [k for k in node.keywords if k.arg not in ("x", "y")])
    args = [_literal(a, f"{name}'s argument") for a in node.args]
    kw = {k.arg: _literal(k.value, f"{name}'s {k.arg}") for k in node.keywords if k.arg}
    if name in ("time.sleep", "pyautogui.sleep"):
        seconds = float(args[0] if args else kw.get("secs", 0))
        return [GuiAction("sleep", seconds=min(max(seconds, 0.0), MAX_SLEEP_S))]
    if name in point:
        if f.attr == "moveTo":
            return [GuiAction("move", x, y)]
        button = {"left": 1, "middle": 2, "right": 3}.get(str(kw.get("button", "left")), 1)
        clicks = _int(kw.get("clicks", 1), "clicks")
        if f.attr == "doubleClick":
            clicks = 2
        if f.attr == "rightClick":
            button = 3
        return [GuiAction("click", x, y, button, max(1, min(clicks, 3)))]
    if name in ("pyautogui.write", "pyautogui.typewrite"):
        text = args[0] if args else kw.get("message", "")
        if isinstance(text, list):  # typewrite(['a', 'enter']) presses keys
            return [GuiAction("key", text=keysym(str(k))) for k in text]
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise InvalidAction(f"{name} needs a string of at most {MAX_TEXT} characters")
        return [GuiAction("type", text=text)]
    if name == "pyautogui.press":
        keys = args[0] if args else kw.get("keys", "")
        presses = _int(kw.get("presses", 1), "presses")
        names = keys if isinstance(keys, list) else [keys]
        return [GuiAction("key", text=keysym(str(k))) for _ in range(max(1, min(presses, 50))) for k in names]
    if name == "pyautogui.hotkey":
        if not args:
            raise InvalidAction("pyautogui.hotkey needs keys, e.g. hotkey('ctrl', 's')")
        return [GuiAction("key", text="+".join(keysym(str(k)) for k in args))]
    if name == "pyautogui.scroll":
        amount = _int(args[0] if args else kw.get("clicks", 0), "scroll amount")
        return [GuiAction("scroll", button=4 if amount > 0 else 5, clicks=max(1, min(abs(amount), 20)))]
    raise InvalidAction(
        f"{name} is not supported; use click, doubleClick, rightClick, moveTo, write, press, hotkey, scroll"
    )


def reply_calls(reply: str) -> list[ast.Call] | None:
    """The top-level calls of a reference reply's ```python block; None when the reply has none (a
    control word such as DONE). Only for the task files' own solutions: a model's code goes through
    `parse_pyautogui`."""
    m = re.search(r"```python\n(.*?)```", reply, re.S)
    if m is None:
        return None
    return [
        s.value
        for s in ast.parse(m.group(1)).body
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
    ]


def parse_pyautogui(code: str, tags: Mapping[str, tuple[int, int]] | None = None) -> list[GuiAction]:
    """The input events a pyautogui block asks for, in order; anything else raises `InvalidAction`.
    `tags` maps set-of-mark names (tag_1, ...) to the points they stand for."""
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise InvalidAction(f"the code block is not valid Python: {e.msg} (line {e.lineno})") from None
    out: list[GuiAction] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Import) and all(a.name in ("pyautogui", "time") for a in stmt.names):
            continue
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            out += _call(stmt.value, tags or {})
            continue
        raise InvalidAction(
            f"only pyautogui calls, one per line, are allowed; got `{ast.unparse(stmt)[:80]}`"
        )
    return out


def perform(actions: list[GuiAction], display: Any, *, pause_s: float = 0.5) -> None:
    """Run the events on a `VirtualDisplay` through xdotool, `pause_s` after each (as the paper's harness);
    a point off the screen or a key xdotool refuses raises `InvalidAction`."""
    from iclr26.agents.display import XdotoolError

    for a in actions:
        try:
            _perform_one(a, display)
        except (ValueError, XdotoolError) as e:
            raise InvalidAction(f"{a.kind} failed: {e}") from None
        if a.kind != "sleep":
            time.sleep(pause_s)


def _perform_one(a: GuiAction, display: Any) -> None:
    if a.kind == "click":
        display.click(a.x, a.y, button=a.button, repeat=a.clicks)
    elif a.kind == "move":
        display.move(a.x, a.y)
    elif a.kind == "type":
        display.type_text(a.text)
    elif a.kind == "key":
        display.key(a.text)
    elif a.kind == "scroll":
        x, y = display.mouse_position()
        display.click(x, y, button=a.button, repeat=a.clicks)
    elif a.kind == "sleep":
        time.sleep(a.seconds)
