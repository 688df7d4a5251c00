"""Issue 57 (items 3 and 7): a ScienceBoard app writes its task's folder, so the harness's reads and
writes there (the control server's /file, the checks' file reads, the task's setup files) must not
follow a link or wait on a FIFO the app planted, even one swapped in after a path was checked.

Before the fix, a write opened the resolved path after checking it (a link swapped in between sent
the host's write out of the folder) and a FIFO in a file's place hung the control server."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from iclr26.agents.beneath import NotBeneath, read_beneath, write_beneath
from iclr26.scienceboard.checks import LocalProbe
from iclr26.scienceboard.control import ControlServer
from iclr26.scienceboard.desktop import Desktop


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "task", tmp_path / "host"
    (root / "home/user").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("host secret")
    return root, outside


def test_planted_links_and_fifos_are_refused_by_the_control_server_and_the_checks(folders):
    root, outside = folders
    user = root / "home/user"
    (user / "leak.txt").symlink_to(outside / "secret.txt")
    os.mkfifo(user / "pipe.txt")
    (root / "home/linked").symlink_to(outside, target_is_directory=True)
    server = ControlServer(Desktop(), root)
    with server as url, httpx.Client(timeout=5, headers=server.headers) as http:
        for path in ("/home/user/leak.txt", "/home/user/pipe.txt", "/home/linked/secret.txt"):
            r = http.get(f"{url}/file", params={"path": path})
            assert r.status_code == 400 and b"host secret" not in r.content, (path, r.text)
        for path in ("/home/user/leak.txt", "/home/user/pipe.txt", "/home/linked/new.txt"):
            r = http.post(f"{url}/file", json={"path": path, "content": "written by the host"})
            assert r.status_code == 400, (path, r.text)  # answered at once: no wait on the FIFO
        ok = http.post(f"{url}/file", json={"path": "/home/user/ok.txt", "content": "fine"})
        assert ok.status_code == 200, ok.text
    assert (user / "ok.txt").read_text() == "fine"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "host secret"
    probe = LocalProbe(root)
    for path in ("/home/user/leak.txt", "/home/user/pipe.txt", "/home/linked/secret.txt"):
        with pytest.raises(NotBeneath):
            probe.read_text(path)
    assert probe.read_text("/home/user/ok.txt") == "fine"


def test_a_link_swapped_in_after_the_check_never_takes_a_write_out(folders):
    """A thread of the "app" keeps swapping home/user between its real folder and a link to the
    host's folder while the harness writes there through the control server: a path checked while it
    was the folder must not be written after it became the link. (A race: on the old code about one
    run in three sent a write out; the FIFO and planted links above fail it every time.)"""
    root, outside = folders
    user, held, link = root / "home/user", root / "home/held", root / "home/link"
    link.symlink_to(outside, target_is_directory=True)
    swap = (  # another process, as the app is: it runs beside the server, not between its steps
        "import os, sys\n"
        "user, held, link = sys.argv[1:]\n"
        "while True:\n"
        "    os.rename(user, held); os.rename(link, user); os.rename(user, link); os.rename(held, user)\n"
    )
    server = ControlServer(Desktop(), root)  # its /file endpoint's own method, without HTTP's pace
    swapper = subprocess.Popen([sys.executable, "-c", swap, str(user), str(held), str(link)])
    try:
        for i in range(10_000):
            with contextlib.suppress(ValueError, OSError):  # refused, or the folder was away
                server.write_file({"path": f"/home/user/w{i}.txt", "content": "x"})
    finally:
        swapper.kill()
        swapper.wait()
    if not user.is_dir() or user.is_symlink():  # killed mid-swap: put the folder back
        with contextlib.suppress(OSError):
            os.rename(user, link)
        os.rename(held, user)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert any(user.iterdir())  # some writes did land, inside


def test_reads_are_bounded_and_paths_stay_inside(folders):
    root, _ = folders
    (root / "home/user/big.bin").write_bytes(b"0" * 2048)
    assert read_beneath(root, "/home/user/big.bin", max_bytes=4096) == b"0" * 2048
    with pytest.raises(NotBeneath):
        read_beneath(root, "/home/user/big.bin", max_bytes=1024)
    for bad in ("/", "/../etc/passwd", "../../x"):
        with pytest.raises(NotBeneath):
            write_beneath(root, bad, b"x")
    assert write_beneath(root, "/home/user/./a/../b.txt", b"y") == root / "home/user/b.txt"
