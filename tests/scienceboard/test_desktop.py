"""The desktop with a real app: TeXstudio starts on Xvfb with a clean profile, its widgets appear
in the linearised accessibility tree, a parsed pyautogui block typed through xdotool changes the
document it saves, and closing the desktop leaves no app running."""

from __future__ import annotations

import subprocess

import pytest

from iclr26.agents import InvalidAction
from iclr26.scienceboard.checks import LocalProbe, evaluate
from iclr26.scienceboard.gui_actions import parse_pyautogui, perform
from iclr26.scienceboard.task import parse_task
from tests.waiting import wait_until

PACKAGES = ("xvfb", "xdotool", "dbus", "at-spi2-core", "python3-pyatspi", "openbox", "texstudio")


def _running(name: str) -> bool:
    return subprocess.run(["pgrep", "-x", name], capture_output=True, check=False).returncode == 0


@pytest.mark.debian(*PACKAGES)
def test_texstudio_on_the_desktop_tree_typing_and_teardown(tmp_path):
    from iclr26.scienceboard.desktop import Desktop

    doc = tmp_path / "root" / "home" / "user" / "doc"
    doc.mkdir(parents=True)
    text = "\\documentclass{article}\\begin{document}Water: xxx.xx\\end{document}\n"
    (doc / "main.tex").write_text(text)
    before = _running("texstudio")
    with Desktop() as desk:
        desk.launch(["texstudio", "--no-session", str(doc / "main.tex")], home=tmp_path / "home")
        desk.wait_for_window("TeXstudio", timeout_s=60)
        desk.wait_for_app("TeXstudio", holding="main.tex")
        tree = desk.a11y_tree(max_chars=4000)
        assert tree.startswith("role\tname\ttext") and "page tab\tmain.tex" in tree
        assert len(desk.a11y_tree(max_chars=300)) <= 300 + len("\n[...]")
        block = "pyautogui.click(600, 250)\npyautogui.hotkey('ctrl', 'end')\npyautogui.write(' % 18.02')\n"
        perform(parse_pyautogui(block + "pyautogui.hotkey('ctrl', 's')"), desk.display, pause_s=0.3)
        wait_until(lambda: "% 18.02" in (doc / "main.tex").read_text(), 30, "TeXstudio saving main.tex")
        with pytest.raises(InvalidAction, match="click failed"):
            perform(parse_pyautogui("pyautogui.click(5000, 10)"), desk.display)  # off the screen
        image = desk.display.screenshot()
        assert image.size == (1280, 800)
    assert "% 18.02" in (doc / "main.tex").read_text()
    task = parse_task(
        {"type": "TeXstudio", "sort": "VM", "steps": 5, "version": "0.1", "instruction": "add the mass",
         "initialize": [],
         "evaluate": [{"type": "include", "path": "/home/user/doc/main.tex", "pattern": "18\\.02"}]},
        "t.json",
    )  # fmt: skip
    assert evaluate(task, LocalProbe(tmp_path / "root"), "DONE")[0]
    if not before:
        assert not _running("texstudio")  # the desktop's close stopped it
