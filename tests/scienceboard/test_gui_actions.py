"""The agent's pyautogui blocks read as data: supported calls become xdotool events, everything
else (other modules, variables, loops, run-time strings) is refused with a message, never run."""

from __future__ import annotations

import pytest

from iclr26.agents import InvalidAction
from iclr26.scienceboard.gui_actions import GuiAction, keysym, parse_pyautogui


def test_supported_calls_become_events():
    code = """import pyautogui
import time
pyautogui.click(100, 200)
pyautogui.doubleClick(x=10, y=20)
pyautogui.rightClick(5, 6)
pyautogui.moveTo(300.4, 400.6)
pyautogui.write('p := conjugate(1+i)', interval=0.05)
pyautogui.press('enter')
pyautogui.press(['tab', 'tab'])
pyautogui.hotkey('ctrl', 's')
pyautogui.typewrite(['a', 'enter'])
pyautogui.scroll(-3)
time.sleep(0.5)
"""
    assert parse_pyautogui(code) == [
        GuiAction("click", 100, 200),
        GuiAction("click", 10, 20, clicks=2),
        GuiAction("click", 5, 6, button=3),
        GuiAction("move", 300, 401),
        GuiAction("type", text="p := conjugate(1+i)"),
        GuiAction("key", text="Return"),
        GuiAction("key", text="Tab"),
        GuiAction("key", text="Tab"),
        GuiAction("key", text="ctrl+s"),
        GuiAction("key", text="a"),
        GuiAction("key", text="Return"),
        GuiAction("scroll", button=5, clicks=3),
        GuiAction("sleep", seconds=0.5),
    ]
    assert keysym("PageDown") == "Next" and keysym("F5") == "F5" and keysym("+") == "plus"
    assert parse_pyautogui("time.sleep(600)") == [GuiAction("sleep", seconds=10.0)]  # capped


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("import os\nos.system('rm -rf /')", "only pyautogui calls"),
        ("__import__('os').system('ls')", "only pyautogui.\\* and time.sleep"),
        ("subprocess.run(['ls'])", "only pyautogui.\\* and time.sleep"),
        ("x = 5\npyautogui.click(x, 5)", "only pyautogui calls"),
        ("pyautogui.click(x, 5)", "must be a literal value"),
        ("pyautogui.write('a' + open('/etc/passwd').read())", "must be a literal value"),
        ("for i in range(3):\n    pyautogui.press('tab')", "only pyautogui calls"),
        ("pyautogui.locateOnScreen('button.png')", "not supported"),
        ("pyautogui.press('hyperdrive')", "unknown key"),
        ("pyautogui.click(100)", "needs x and y"),
        ("pyautogui.click(100, 'top')", "must be a number"),
        ("pyautogui.click(100, 200", "not valid Python"),
    ],
)
def test_anything_else_is_refused_with_a_message(code, message):
    with pytest.raises(InvalidAction, match=message):
        parse_pyautogui(code)
