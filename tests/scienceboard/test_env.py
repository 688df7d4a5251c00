"""A task run end to end on the desktop with real TeXstudio: the oracle's pyautogui script passes
and the null agent fails, on a state task and on an infeasible task (its right ending is FAIL);
each task starts from empty folders."""

from __future__ import annotations

import pytest

from iclr26.agents import Budget, NullAgent, OracleAgent, check_suite, run_suite
from iclr26.scienceboard.env import GUI_PARSER, ScienceBoardEnv
from iclr26.scienceboard.task import parse_task
from tests.scienceboard.test_desktop import PACKAGES

DOC = (
    "\\documentclass{article}\n\\begin{document}\nThe molar mass of water is xxx.xx g/mol.\n\\end{document}\n"
)
PATH = "/home/user/doc/main.tex"
TASKS = {
    "tex-molar-mass": {
        "type": "TeXstudio", "sort": "VM", "steps": 5, "version": "0.1",
        "instruction": "Replace xxx.xx with the molar mass of water, 18.02, and save the document.",
        "initialize": [{"func": "touch", "path": PATH, "text": DOC},
                       {"func": "launch", "command": "texstudio"}],
        "evaluate": [{"type": "file", "path": PATH, "source": "xxx.xx", "target": "18.02"},
                     {"type": "compile", "path": "/home/user/doc", "file": "main"}],
    },
    "tex-infeasible": {
        "type": "TeXstudio", "sort": "VM", "steps": 3, "version": "0.1",
        "instruction": "Open the compiled PDF in Adobe Acrobat.",
        "initialize": [{"func": "touch", "path": PATH, "text": DOC}],
        "evaluate": [{"type": "stop", "value": "FAIL"}],
    },
}  # fmt: skip
ORACLE_REPLIES = {
    "tex-molar-mass": [
        "```python\npyautogui.click(600, 250)\npyautogui.hotkey('ctrl', 'f')\npyautogui.write('xxx.xx')\n"
        "pyautogui.click(346, 397)\npyautogui.write('18.02')\npyautogui.hotkey('ctrl', 's')\n```",
        "DONE",
    ],
    "tex-infeasible": ["FAIL"],
}


@pytest.mark.debian(*PACKAGES, "texlive-latex-base")
def test_oracle_passes_and_null_fails_on_real_texstudio(tmp_path):
    from iclr26.scienceboard.desktop import Desktop

    tasks = {k: parse_task(v, k) for k, v in TASKS.items()}
    envs: list[ScienceBoardEnv] = []
    with Desktop() as desk:

        def make_env(task_id):
            env = ScienceBoardEnv(tasks[task_id], desk, tmp_path / task_id, pause_s=0.3, settle_s=1.0)
            envs.append(env)
            return env

        oracle = run_suite(
            list(TASKS), make_env, OracleAgent(ORACLE_REPLIES), GUI_PARSER, Budget(max_steps=5)
        )
        assert "18.02" in envs[0].local(PATH).read_text()
        null = run_suite(list(TASKS), make_env, NullAgent(), GUI_PARSER, Budget(max_steps=5))
    check = check_suite(oracle, null)
    assert check.valid, check.describe()
    assert "xxx.xx" in envs[2].local(PATH).read_text()  # the null run started from a fresh copy
    assert (
        "The accessibility tree" in oracle[0].steps[0].observation
        and "main.tex" in oracle[0].steps[0].observation
    )
