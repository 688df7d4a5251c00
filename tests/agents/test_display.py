"""VirtualDisplay: Xvfb starts and stops cleanly, screenshots show what a real X client drew,
and xdotool's clicks and keystrokes reach a real window (a Tk app that reports what it got)."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from iclr26.agents.display import VirtualDisplay
from iclr26.core.config import ConfigError
from tests.agents.procs import alive, all_dead, chromium_pids

# A Tk window at (0, 0) without a window manager: a red band on top, an entry and a button below.
# It prints "ready x y w h" (the entry's box on screen) once drawn, then one line per event.
TK_APP = r"""
import tkinter as tk
root = tk.Tk()
root.title("iclr26-tk-probe")
root.geometry("400x300+0+0")
root.configure(bg="#0000ff")
tk.Frame(root, bg="#ff0000", width=400, height=120).place(x=0, y=0)
entry = tk.Entry(root, font=("TkFixedFont", 14))
entry.place(x=20, y=150, width=360, height=40)
button = tk.Button(root, text="Press", command=lambda: print("clicked", flush=True))
button.place(x=20, y=220, width=120, height=50)
entry.bind("<Return>", lambda e: print("typed:" + entry.get(), flush=True))
entry.focus_set()
root.wait_visibility()
root.update()
box = entry.winfo_rootx(), entry.winfo_rooty(), entry.winfo_width(), entry.winfo_height()
print("ready", *box, flush=True)
root.mainloop()
"""


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    """The stdout lines of `proc`, filled by a background thread."""
    out: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return out


def _next_line(lines: queue.Queue[str], proc: subprocess.Popen[str], timeout: float = 15.0) -> str:
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        stderr = proc.stderr.read() if proc.stderr is not None and proc.poll() is not None else ""
        pytest.fail(f"the Tk probe said nothing within {timeout} s (exit {proc.poll()}): {stderr}")


def _launch_tk(screen: VirtualDisplay) -> tuple[subprocess.Popen[str], queue.Queue[str], tuple[int, ...]]:
    pytest.importorskip("tkinter", reason="the Tk probe window needs Python's tkinter (Debian: python3-tk)")
    proc = screen.launch(
        [sys.executable, "-c", TK_APP], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines = _lines(proc)
    ready = _next_line(lines, proc)
    assert ready.startswith("ready "), ready
    return proc, lines, tuple(int(v) for v in ready.split()[1:])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"width": 0}, "width"),
        ({"height": "800"}, "height"),
        ({"width": 20000}, "width"),
        ({"depth": 16}, "depth"),
        ({"start_timeout": 0}, "start_timeout"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{field} "):
        VirtualDisplay(**kwargs)


def test_use_before_start_says_how() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        VirtualDisplay().display  # noqa: B018


@pytest.mark.debian("xvfb", "xdotool")
def test_start_exposes_display_env_and_blank_screenshot(tmp_path: Path) -> None:
    with VirtualDisplay(320, 200) as screen:
        assert re.fullmatch(r":\d+", screen.display)
        number = screen.display[1:]
        assert Path(f"/tmp/.X11-unix/X{number}").exists()
        assert screen.env["DISPLAY"] == screen.display
        assert os.environ.get("DISPLAY") != screen.display  # os.environ itself is untouched
        image = screen.screenshot(tmp_path / "shot.png")
        assert image.size == (320, 200)
        assert image.mode == "RGB"
        assert image.getcolors() == [(320 * 200, (0, 0, 0))]  # Xvfb's empty screen is black
        assert (tmp_path / "shot.png").stat().st_size > 0
        # A real X client connects through .env.
        info = subprocess.run(
            ["xdotool", "getdisplaygeometry"], env=screen.env, capture_output=True, text=True
        )
        assert info.stdout.split() == ["320", "200"]
    assert not Path(f"/tmp/.X11-unix/X{number}").exists()
    assert not Path(f"/tmp/.X{number}-lock").exists()


@pytest.mark.debian("xvfb", "xdotool")
def test_apps_do_not_inherit_qt_paths_into_this_python(monkeypatch) -> None:
    # as importing OpenCV's wheel does: its Qt plugins, inside this Python environment
    monkeypatch.setenv("QT_QPA_PLATFORM_PLUGIN_PATH", os.path.join(sys.prefix, "lib", "cv2", "qt", "plugins"))
    monkeypatch.setenv("QT_SCALE_FACTOR", "1")
    with VirtualDisplay(320, 200) as screen:
        assert "QT_QPA_PLATFORM_PLUGIN_PATH" not in screen.env
        assert screen.env["QT_SCALE_FACTOR"] == "1"  # other Qt settings pass through


@pytest.mark.debian("xvfb", "xdotool")
def test_two_displays_get_different_numbers() -> None:
    with VirtualDisplay(64, 64) as a, VirtualDisplay(64, 64) as b:
        assert a.display != b.display
        assert a.screenshot().size == b.screenshot().size == (64, 64)


@pytest.mark.debian("xvfb", "xdotool")
def test_screenshot_shows_what_the_window_drew() -> None:
    with VirtualDisplay(640, 480) as screen:
        _, _, (ex, ey, ew, eh) = _launch_tk(screen)
        image = screen.screenshot()
        assert image.size == (640, 480)
        assert image.getpixel((200, 60)) == (255, 0, 0)  # the red band
        assert image.getpixel((200, 135)) == (0, 0, 255)  # the blue window background
        assert image.getpixel((500, 400)) == (0, 0, 0)  # outside the window: the bare screen
        assert (ex, ey, ew, eh) == (20, 150, 360, 40)
        assert image.getpixel((ex + ew // 2, ey + eh // 2)) not in {(255, 0, 0), (0, 0, 255), (0, 0, 0)}


@pytest.mark.debian("xvfb", "xdotool")
def test_click_type_and_key_reach_the_window() -> None:
    with VirtualDisplay(640, 480) as screen:
        proc, lines, (ex, ey, ew, eh) = _launch_tk(screen)
        assert screen.wait_for_window("^iclr26-tk-probe$") > 0
        screen.click(ex + ew // 2, ey + eh // 2)
        screen.type_text("Hello, agent 42!")
        screen.key("Return")
        assert _next_line(lines, proc) == "typed:Hello, agent 42!"
        screen.key("ctrl+a")  # Tk's entry: start of line; the next keystroke lands before the text
        screen.type_text(">")
        screen.key("Return")
        assert _next_line(lines, proc) == "typed:>Hello, agent 42!"
        screen.click(80, 245)  # the button
        assert _next_line(lines, proc) == "clicked"
        assert screen.mouse_position() == (80, 245)


@pytest.mark.debian("xvfb", "xdotool")
def test_move_and_mouse_position_and_bounds() -> None:
    with VirtualDisplay(300, 200) as screen:
        screen.move(123, 45)
        assert screen.mouse_position() == (123, 45)
        screen.move(299, 199)
        assert screen.mouse_position() == (299, 199)
        with pytest.raises(ConfigError, match=r"^x must be an int in \[0, 299\], got 300"):
            screen.click(300, 10)
        with pytest.raises(ConfigError, match=r"^y "):
            screen.move(0, -1)
        with pytest.raises(ValueError, match=r"^combo must be xdotool keysyms"):
            screen.key("ctrl a; rm -rf /")
        with pytest.raises(TypeError, match="argv"):
            screen.launch("xterm -e sh")  # type: ignore[arg-type]
        with pytest.raises(TimeoutError, match="no visible window"):
            screen.wait_for_window("no-such-window", timeout=0.2)


@pytest.mark.debian("xvfb", "xdotool")
def test_teardown_after_a_raising_body_leaves_nothing() -> None:
    with pytest.raises(RuntimeError, match="boom"), VirtualDisplay(200, 100) as screen:
        xvfb_pid = screen.pid
        number = screen.display[1:]
        sleeper = screen.launch(["sh", "-c", "sleep 60 & sleep 60; wait"])
        raise RuntimeError("boom")
    assert not alive(xvfb_pid)
    assert sleeper.poll() is not None
    assert not any(
        alive(int(p)) for p in os.listdir("/proc") if p.isdigit() and _in_group(int(p), sleeper.pid)
    )
    assert not Path(f"/tmp/.X11-unix/X{number}").exists()
    assert not Path(f"/tmp/.X{number}-lock").exists()
    assert not screen.running
    screen.close()  # idempotent


def _in_group(pid: int, pgid: int) -> bool:
    try:
        return os.getpgid(pid) == pgid
    except ProcessLookupError:
        return False


@pytest.mark.debian("xvfb", "xdotool")
def test_start_timeout_error_carries_the_reason_and_stops_xvfb() -> None:
    screen = VirtualDisplay(64, 64, start_timeout=1e-9)
    with pytest.raises(
        RuntimeError, match=r"did not accept connections within start_timeout=1e-09 s; stderr: "
    ):
        screen.start()
    assert not screen.running
    assert screen._xvfb is None


@pytest.mark.debian("xvfb", "xdotool", "chromium")
def test_chromium_kiosk_on_the_display_and_its_processes_die_on_close() -> None:
    page = "data:text/html,<title>iclr26-red</title><body style='margin:0;background:%23ff0000'></body>"
    before = chromium_pids()
    with tempfile.TemporaryDirectory() as profile, VirtualDisplay(480, 320) as screen:
        browser = screen.launch(
            [
                "chromium",
                "--no-sandbox",  # Chromium's sandbox refuses to run as root (our CI); a test page needs none
                "--kiosk",
                "--no-first-run",
                "--disable-gpu",
                f"--user-data-dir={profile}",
                "--window-position=0,0",
                "--window-size=480,320",
                page,
            ]
        )
        screen.wait_for_window("iclr26-red", timeout=30)
        for _ in range(100):  # the title comes before the first paint
            if screen.screenshot().getpixel((240, 160)) == (255, 0, 0):
                break
            time.sleep(0.1)
        image = screen.screenshot()
        assert image.getpixel((240, 160)) == (255, 0, 0)
        assert image.getpixel((5, 315)) == (255, 0, 0)
        group = {int(p) for p in os.listdir("/proc") if p.isdigit() and _in_group(int(p), browser.pid)}
        assert len(group) > 1  # Chromium's zygote, GPU and renderer processes
        spawned = group | (chromium_pids() - before)
    assert browser.poll() is not None
    assert all_dead(spawned) == set()
