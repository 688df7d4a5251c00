"""Grounding versus planning (issue 60): two scripted agents that split the reference solution's plan
from the pixels it clicks.

- `NoisyOracleAgent`: the reference solution with Gaussian noise of σ pixels added to every pointer
  action (`jitter`, seeded per task): how much a task's success depends on clicking the exact point.
- `GroundingAgent` (scripted, no model): it gets the reference solution's plan as text (`plan`:
  "click the editable text", "type 'a := 42'", "press enter", ...), finds each named element itself
  in the accessibility tree (the AT-SPI dump, `Desktop.nodes`), and clicks the centre of its box.
  An element it cannot find is left out of the block (the rest of the step still runs), and
  counted (`found`, `missed`).

The plan names each clicked element as a person would name it (`TARGETS`, written here, one per app
and point the reference solutions click): its accessibility role and name, or for a field without a
name, that it is editable. Where the app does not expose that element (xterm has no accessibility
tree; TeXstudio's editor is unnamed fillers), the name is still the one a person would give, and the
tree cannot resolve it: that is what the agent measures.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iclr26.agents import AgentReply, Observation
from iclr26.core.seeding import derive_seed
from iclr26.scienceboard.gui_actions import reply_calls

POINTER_CALLS = ("click", "doubleClick", "rightClick", "moveTo")
"""The pyautogui calls that take a screen point: the ones the noise moves."""
CONTROL_RE = re.compile(r"^\s*(DONE|FAIL|WAIT|ANSWER\b.*)\s*$", re.S)


def _pointer(node: ast.AST) -> bool:
    f = node.func if isinstance(node, ast.Call) else None
    return (
        isinstance(f, ast.Attribute)
        and isinstance(f.value, ast.Name)
        and f.value.id == "pyautogui"
        and f.attr in POINTER_CALLS
    )


def jitter(code: str, sigma: float, rng: random.Random, width: int = 1280, height: int = 800) -> str:
    """`code` (a reply: a ```python block of pyautogui calls, or a control word) with N(0, σ²) pixels
    added to x and y of every pointer call, rounded and kept on the `width` × `height` screen."""
    m = re.search(r"```python\n(.*?)```", code, re.S)
    if m is None or sigma <= 0:
        return code
    tree = ast.parse(m.group(1))
    for node in ast.walk(tree):
        if _pointer(node) and len(node.args) >= 2:  # type: ignore[attr-defined]
            x, y = (ast.literal_eval(a) for a in node.args[:2])  # type: ignore[attr-defined]
            nx = min(max(round(x + rng.gauss(0.0, sigma)), 0), width - 1)
            ny = min(max(round(y + rng.gauss(0.0, sigma)), 0), height - 1)
            node.args[:2] = [ast.Constant(nx), ast.Constant(ny)]  # type: ignore[attr-defined]
    return f"```python\n{ast.unparse(tree)}\n```"


def pointer_actions(replies: Sequence[str]) -> int:
    """How many pointer calls the replies' code blocks make (0: the noise cannot change the outcome)."""
    n = 0
    for r in replies:
        m = re.search(r"```python\n(.*?)```", r, re.S)
        if m:
            n += sum(_pointer(node) for node in ast.walk(ast.parse(m.group(1))))
    return n


class NoisyOracleAgent:
    """The reference solution with σ-pixel Gaussian noise on its pointer actions, seeded per task
    (`derive_seed(seed, "noise", sigma, task)`), so a rerun clicks the same points."""

    def __init__(self, solutions: dict[str, Sequence[str]], sigma: float, seed: int) -> None:
        self.solutions, self.sigma, self.seed = solutions, sigma, seed
        self.name = f"oracle + noise σ={sigma:g} px"
        self._replies: list[str] = []
        self._rng = random.Random(seed)

    def reset(self, task_id: str, instruction: str) -> None:
        """Queue the task's reference replies and seed its noise."""
        self._replies = list(self.solutions[task_id])
        self._rng = random.Random(derive_seed(self.seed, "noise", str(self.sigma), task_id))

    def act(self, observation: Observation) -> AgentReply:
        """The next reference reply, its pointer actions moved by the noise; then DONE."""
        if not self._replies:
            return AgentReply("DONE")
        return AgentReply(jitter(self._replies.pop(0), self.sigma, self._rng))


# ------------------------------------------------------------------------------ the plan as text


@dataclass(frozen=True)
class Target:
    """An element as the plan names it: its accessibility `role`, its `name` (a prefix when `prefix`),
    or, for a field without a name, `editable`."""

    role: str
    name: str = ""
    editable: bool = False
    prefix: bool = False

    def describe(self) -> str:
        """The plan's words for it: `the editable text`, `the filler named "Stellarium…"`."""
        if self.editable:
            return f"the editable {self.role}"
        return f'the {self.role} named "{self.name}{"…" if self.prefix else ""}"'


TARGET_RE = re.compile(r'^the (?:(editable) (.+)|(.+?) named "(.*?)(…)?")$')


def parse_target(words: str) -> Target:
    """The inverse of `Target.describe`; a description it cannot read raises ValueError."""
    m = TARGET_RE.match(words.strip())
    if m is None:
        raise ValueError(f"not an element description: {words!r}")
    if m.group(1):
        return Target(m.group(2), editable=True)
    return Target(m.group(3), m.group(4), prefix=bool(m.group(5)))


TARGETS: dict[str, dict[tuple[int, int], Target]] = {
    "kalgebra": {(320, 450): Target("text", editable=True)},  # the calculator's input line
    "pymol": {(500, 218): Target("text", editable=True)},  # the command line (the oracle clicks the viewer)
    "grass": {(400, 300): Target("terminal", "GRASS GIS")},  # xterm: no accessibility tree
    "stellarium": {(640, 400): Target("filler", "Stellarium", prefix=True)},  # the sky view
    "texstudio": {
        (600, 250): Target("document text", "main.tex"),  # the editor (unnamed fillers in the tree)
        (346, 397): Target("document text", "main.tex"),  # back to the editor, keeping the selection
    },
}
"""What each point the reference solutions click is, named as the plan names it (written here)."""


def _step_words(call: ast.Call, app: str) -> str:
    """One pyautogui call of the reference solution as one line of the plan."""
    f = call.func
    assert isinstance(f, ast.Attribute)
    args = [ast.literal_eval(a) for a in call.args]
    if f.attr in POINTER_CALLS:
        target = TARGETS[app][(int(args[0]), int(args[1]))]
        verb = {"click": "click", "doubleClick": "double-click", "rightClick": "right-click"}.get(
            f.attr, "move to"
        )
        return f"{verb} {target.describe()}"
    if f.attr in ("write", "typewrite"):
        return f"type {json.dumps(args[0])}"
    if f.attr == "press":
        return f"press {args[0]}"
    if f.attr == "hotkey":
        return "hotkey " + " ".join(args)
    if f.attr == "sleep":
        return f"wait {args[0]}"
    raise ValueError(f"no plan words for pyautogui.{f.attr}")


def plan(replies: Sequence[str], app: str) -> list[str]:
    """The reference replies as the plan's text: a control word stays as it is; a code block becomes
    its steps, one per line (clicks name their element, never a point)."""
    out = []
    for r in replies:
        calls = reply_calls(r)
        out.append(r if calls is None else "\n".join(_step_words(c, app) for c in calls))
    return out


def find(nodes: Sequence[Any], target: Target) -> Any | None:
    """The first showing node in tree order that `target` names, with a box on screen; None if none."""
    for n in nodes:
        if n.role != target.role or n.box is None or n.box[2] <= 0 or n.box[3] <= 0:
            continue
        if "showing" not in n.states:
            continue
        if target.editable and "editable" not in n.states:
            continue
        if not target.editable and not (
            n.name.startswith(target.name) if target.prefix else n.name == target.name
        ):
            continue
        return n
    return None


def _call_for(line: str, nodes: Callable[[], Sequence[Any]]) -> tuple[str | None, bool | None]:
    """One plan line as a pyautogui call (None: the element was not found) and whether it named an
    element that was found (None: it names none)."""
    verb, _, rest = line.partition(" ")
    if verb in ("click", "double-click", "right-click", "move"):
        words = rest.removeprefix("to ") if verb == "move" else rest
        node = find(nodes(), parse_target(words))
        if node is None:
            return None, False
        x, y, w, h = node.box
        fn = {"click": "click", "double-click": "doubleClick", "right-click": "rightClick"}
        return f"pyautogui.{fn.get(verb, 'moveTo')}({x + w // 2}, {y + h // 2})", True
    if verb == "type":
        return f"pyautogui.write({json.loads(rest)!r})", None
    if verb == "press":
        return f"pyautogui.press({rest!r})", None
    if verb == "hotkey":
        return "pyautogui.hotkey(" + ", ".join(repr(k) for k in rest.split()) + ")", None
    if verb == "wait":
        return f"pyautogui.sleep({float(rest)!r})", None
    raise ValueError(f"not a plan step: {line!r}")


class GroundingAgent:
    """Scripted grounding-only agent: it follows the plan's text (`plan`) and finds each named element
    in the accessibility tree (`nodes()`, read when the step runs), clicking the centre of its box. An
    element not found is left out of that step's block. `found` / `missed` count the plan's elements."""

    name = "grounding-only (scripted, plan as text)"

    def __init__(self, plans: dict[str, Sequence[str]], nodes: Callable[[], Sequence[Any]]) -> None:
        self.plans, self.nodes = plans, nodes
        self._steps: list[str] = []
        self.found = self.missed = 0

    def reset(self, task_id: str, instruction: str) -> None:
        """Queue the task's plan."""
        self._steps = list(self.plans[task_id])
        self.found = self.missed = 0

    def act(self, observation: Observation) -> AgentReply:
        """The next plan step: a control word as it is, or its lines as one pyautogui block; then DONE."""
        if not self._steps:
            return AgentReply("DONE")
        step = self._steps.pop(0)
        if CONTROL_RE.match(step):
            return AgentReply(step)
        calls = []
        for line in step.splitlines():
            call, hit = _call_for(line, self.nodes)
            if hit is not None:
                self.found += hit
                self.missed += not hit
            if call is not None:
                calls.append(call)
        if not calls:
            return AgentReply("WAIT 0")
        return AgentReply("```python\n" + "\n".join(calls) + "\n```")
