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
        desk.launch(
            ["texstudio", "--no-session", str(doc / "main.tex")],
            home=tmp_path / "home",
            writable=[tmp_path / "root"],
        )
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
        # the desktop's close stopped it (its sandbox's pid namespace dies with bwrap, just after)
        wait_until(lambda: not _running("texstudio"), timeout_s=10, what="texstudio gone after close")


@pytest.mark.debian("xvfb", "xdotool", "dbus", "at-spi2-core", "python3-pyatspi", "openbox", "xterm")
def test_the_session_bus_activates_nothing_and_an_app_without_a_tree_did_not_start(tmp_path):
    """The empty trees of a fresh machine: a second at-spi-bus-launcher, activated by the session bus,
    took org.a11y.Bus from ours. Our session bus can activate no name, the registry answers before any
    app starts, and an app whose tree never becomes readable is refused by name, not found empty."""
    import os

    from iclr26.scienceboard.desktop import Desktop, DesktopError

    with Desktop() as desk:
        names = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
             "/org/freedesktop/DBus", "org.freedesktop.DBus.ListActivatableNames"],
            env={**os.environ, **desk.env}, capture_output=True, text=True, check=True, timeout=30,
        ).stdout  # fmt: skip
        assert "org.a11y.Bus" not in names and "org.freedesktop.DBus" in names
        assert desk.env["AT_SPI_BUS_ADDRESS"].startswith("unix:path=" + desk.env["XDG_RUNTIME_DIR"])
        assert desk.nodes() == []  # the registry answers, with no app yet
        desk.launch(["xterm", "-T", "plain"], home=tmp_path / "home", bus=False)  # no accessibility tree
        desk.wait_for_window("plain", timeout_s=30)
        with pytest.raises(DesktopError, match=r"^xterm's accessibility tree was not readable 1 s after"):
            desk.wait_for_app("xterm", timeout_s=1)
