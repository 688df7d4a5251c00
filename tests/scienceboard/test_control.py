"""The control layer on 127.0.0.1 against a real KAlgebra: launch, the accessibility tree, a pyautogui
block executed as input events, a screenshot, task files read and written; code, unknown apps and
paths outside the task folder are refused with a JSON error."""

from __future__ import annotations

import httpx
import pytest

from tests.scienceboard.test_apps import DESKTOP
from tests.waiting import wait_until


@pytest.mark.debian(*DESKTOP, "kalgebra")
def test_endpoints_drive_a_real_app_and_refuse_bad_requests(tmp_path):
    from iclr26.scienceboard.control import ControlServer
    from iclr26.scienceboard.desktop import Desktop

    with (
        Desktop() as desk,
        (server := ControlServer(desk, tmp_path, pause_s=0.2)) as url,
        httpx.Client(timeout=60, headers=server.headers) as http,
    ):
        assert http.post(f"{url}/setup/launch", json={"app": "kalgebra"}).json()["status"] == "success"
        # launch answers once the app's tree is readable: no wait here
        assert "page tab\tCalculator" in http.get(f"{url}/accessibility").json()["AT"]
        wid = desk.display.main_window("KAlgebra")
        desk.display.move_window(wid, 0, 0)
        code = "pyautogui.click(320, 450)\npyautogui.write('zz := 7*6')\npyautogui.press('enter')"
        assert http.post(f"{url}/execute", json={"code": code}).json() == {"status": "success"}
        tree = lambda: http.get(f"{url}/accessibility").json()["AT"]  # noqa: E731
        wait_until(lambda: "table cell\tzz" in tree(), 30, "the variable zz in KAlgebra's tree")
        shot = http.get(f"{url}/screenshot")
        assert shot.headers["content-type"] == "image/png" and shot.content.startswith(b"\x89PNG")
        assert http.post(f"{url}/file", json={"path": "/home/user/a.txt", "content": "hi"}).status_code == 200
        assert (tmp_path / "home/user/a.txt").read_text() == "hi"
        assert http.get(f"{url}/file", params={"path": "/home/user/a.txt"}).content == b"hi"

        refused = {
            "code": http.post(f"{url}/execute", json={"code": "import os\nos.system('id')"}),
            "app": http.post(f"{url}/setup/launch", json={"app": "bash"}),
            "escape": http.get(f"{url}/file", params={"path": "/../../etc/passwd"}),
            "relative": http.post(f"{url}/file", json={"path": "a.txt", "content": "x"}),
            "json": http.post(f"{url}/execute", content=b"not json"),
        }
        for why, r in refused.items():
            assert r.status_code == 400 and r.json()["error"], why
        assert http.get(f"{url}/file", params={"path": "/home/user/none"}).status_code == 404
        assert http.get(f"{url}/nothing").status_code == 404


def test_only_the_harness_drives_it_and_bad_lengths_are_refused(tmp_path):
    """Issue 57, item 4: no token, a wrong token, a foreign Origin or Host, and a negative or malformed
    Content-Length are each refused before any endpoint runs; the token's own requests work."""
    import socket

    from iclr26.scienceboard.control import ControlServer
    from iclr26.scienceboard.desktop import Desktop

    server = ControlServer(Desktop(), tmp_path)  # the file endpoints need no running desktop
    with server as url, httpx.Client(timeout=10) as http:
        body = {"path": "/home/user/a.txt", "content": "hi"}
        assert http.post(f"{url}/file", json=body).status_code == 401
        assert (
            http.post(f"{url}/file", json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
        )
        evil = {**server.headers, "Origin": "http://evil.example"}
        assert http.post(f"{url}/file", json=body, headers=evil).status_code == 403
        rebound = {**server.headers, "Host": "attacker.example"}
        assert (
            http.get(f"{url}/file", params={"path": "/home/user/a.txt"}, headers=rebound).status_code == 403
        )
        assert not (tmp_path / "home/user/a.txt").exists()
        assert http.post(f"{url}/file", json=body, headers=server.headers).status_code == 200
        port = int(url.rsplit(":", 1)[1])
        for length in ("-1", "1e3", "abc"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
                conn.sendall(
                    f"POST /file HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {server.token}"
                    f"\r\nContent-Length: {length}\r\n\r\n{{}}".encode()
                )
                assert conn.recv(200).startswith(b"HTTP/1.0 400"), length  # answered, not left reading
