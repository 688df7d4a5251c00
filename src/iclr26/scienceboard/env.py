"""One ScienceBoard task as an `iclr26.agents` environment on the desktop.

`reset` gives the task a fresh root (the task's paths, e.g. /home/user/doc/main.tex, live under
it) and a fresh HOME, runs the task's set-up steps (files written, the app launched with a clean
profile) and returns the instruction with the first observation. `step` carries out one action:
a pyautogui block (parsed, never executed: `gui_actions`) or WAIT. The observation is the
accessibility tree (`a11y_tree`), the screenshot (`screenshot`) or both. `evaluate` runs the
task's checks against the app's final state and how the episode ended. `close` stops the app; the
next task's `reset` starts from empty folders, so nothing carries over.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from iclr26.agents import Observation, StepOutcome
from iclr26.agents.actions import Action, ActionParser, InvalidAction
from iclr26.agents.display import stop_group
from iclr26.core.errors import UserError
from iclr26.scienceboard.checks import CheckResult, LocalProbe, evaluate, under_root
from iclr26.scienceboard.desktop import Desktop
from iclr26.scienceboard.gui_actions import parse_pyautogui, perform
from iclr26.scienceboard.task import TaskFile, map_task

OBSERVATIONS = ("a11y_tree", "screenshot", "screenshot_a11y_tree")
GUI_PARSER = ActionParser(code_languages=("python", "py", ""), controls=("DONE", "FAIL", "WAIT", "ANSWER"))
"""The action format: one ```python block of pyautogui calls, or DONE, FAIL, WAIT, ANSWER: <words>."""

LAUNCH = {
    "texstudio": ("texstudio", "--no-session"),
    "pymol": ("/usr/bin/python3", "-m", "pymol", "-R"),  # Debian's module, its XML-RPC server on 9123
}
WINDOW = {"texstudio": "TeXstudio", "pymol": "PyMOL"}
STOPS = {"done": "DONE", "fail": "FAIL", "answer": "ANS"}


class ScienceBoardEnv:
    """A task on the desktop; implements `iclr26.agents.Environment` (plus `stopped`)."""

    def __init__(
        self,
        task: TaskFile,
        desktop: Desktop,
        workdir: str | Path,
        *,
        observation: str = "a11y_tree",
        a11y_chars: int = 6000,
        pause_s: float = 0.5,
        settle_s: float = 1.5,
    ) -> None:
        mapping = map_task(task)
        if not mapping.supported:
            raise UserError(f"{task.path} cannot run here: {'; '.join(mapping.reasons)}")
        if mapping.app not in LAUNCH:
            raise UserError(f"{task.path}: the environment cannot launch {mapping.app} yet")
        if observation not in OBSERVATIONS:
            raise UserError(f"observation must be one of {OBSERVATIONS}, got {observation!r}")
        self.task, self.desktop, self.app = task, desktop, mapping.app
        self.workdir = Path(workdir)
        self.observation, self.a11y_chars, self.pause_s, self.settle_s = (
            observation,
            a11y_chars,
            pause_s,
            settle_s,
        )
        self.proc: subprocess.Popen[Any] | None = None
        self.stop_reason = ""
        self.results: list[CheckResult] = []
        self.pymol: Any = None

    @property
    def root(self) -> Path:
        return self.workdir / "root"

    def local(self, path: str) -> Path:
        """Where a task path (/home/user/...) lives on this machine (never outside the task's root)."""
        try:
            return under_root(self.root, path)
        except ValueError as e:
            raise UserError(f"{self.task.path}: {e}") from None

    def reset(self) -> Observation:
        for sub in ("root", "home"):
            shutil.rmtree(self.workdir / sub, ignore_errors=True)
            (self.workdir / sub).mkdir(parents=True)
        files = []
        for step in self.task.initialize:
            if step["func"] == "touch":
                target = self.local(step["path"])
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(str(step.get("text", "")), encoding="utf-8")
                files.append(str(target))
        argv = [*LAUNCH[self.app], *files[-1:]]  # the app opens the document the task wrote
        self.proc = self.desktop.launch(argv, home=self.workdir / "home", log=self.workdir / "app.log")
        try:
            self.desktop.wait_for_window(WINDOW[self.app], timeout_s=60)
        except Exception as e:
            log = (self.workdir / "app.log").read_text(errors="replace")[-400:]
            raise UserError(f"{self.app} did not open a window ({e}); its log ends: {log!r}") from None
        time.sleep(self.settle_s)
        if self.app == "pymol":
            from iclr26.scienceboard.probes import PymolSession

            self.pymol = PymolSession()
        return self._observe(f"Task: {self.task.instruction}\n")

    def _observe(self, head: str = "") -> Observation:
        text, image = head, None
        if "a11y_tree" in self.observation:
            text += "The accessibility tree of the screen:\n" + self.desktop.a11y_tree(
                max_chars=self.a11y_chars
            )
        if "screenshot" in self.observation:
            assert self.desktop.display is not None
            image = self.desktop.display.screenshot()
        return Observation(text or "(the screenshot)", image=image)

    def step(self, action: Action) -> StepOutcome:
        if action.kind == "wait":
            try:
                seconds = float(str(action.content or "").split()[0])
            except (ValueError, IndexError):
                seconds = 5.0  # WAIT without a number: the paper's default
            time.sleep(min(max(seconds, 0.0), 10.0))
        elif action.kind == "code":
            assert self.desktop.display is not None
            perform(parse_pyautogui(str(action.content)), self.desktop.display, pause_s=self.pause_s)
        else:
            raise InvalidAction(
                f"{action.kind} is not an action here: send a ```python block of pyautogui calls"
            )
        return StepOutcome(self._observe())

    def stopped(self, stop_reason: str) -> None:
        self.stop_reason = stop_reason

    def evaluate(self, answer: str | None) -> bool:
        stop = STOPS.get(self.stop_reason, "TIMEOUT")
        ok, self.results = evaluate(self.task, LocalProbe(self.root, pymol=self.pymol), stop, answer or "")
        return ok

    def close(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, grace=10.0)  # the app and anything it started
        self.proc = None
