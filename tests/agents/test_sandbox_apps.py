"""The Sandbox options a desktop app needs (issue 57, item 3): a cleared environment, hidden host
folders, the caller's uid kept, and another uid seen inside."""

from __future__ import annotations

import os
import subprocess

import pytest

from iclr26.agents.sandbox import Sandbox

pytestmark = pytest.mark.debian("bubblewrap")


def test_clear_env_hide_and_inner_uid(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "key.txt").write_text("sk-file-secret")
    work = tmp_path / "work"
    work.mkdir()
    with Sandbox(work, caller_uid=True) as box:
        assert box.uid == os.geteuid()
        argv = box.command_line(
            ["bash", "-c", f"env; ls -A {hidden}; id -u"],
            hide=[str(hidden)],
            clear_env={"ONLY": "this"},
            inner_uid=1000,
        )
        done = subprocess.run(argv, env=os.environ.copy(), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "ONLY=this" in done.stdout and "sk-test-secret" not in done.stdout
    assert "key.txt" not in done.stdout
    assert done.stdout.split()[-1] == "1000"


def test_caller_uid_excludes_user():
    with pytest.raises(ValueError, match="caller_uid"):
        Sandbox(user=1234, caller_uid=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="drop_inside is for a root caller")
def test_drop_inside_binds_a_root_only_file_and_runs_as_nobody(tmp_path):
    """bwrap opens the bind sources as root (a file in a 0700 folder), the command runs as nobody with
    no capabilities, and the folders above the mount point and /tmp are open to it."""
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    (closed / "note.txt").write_text("for the app")
    (closed / "note.txt").chmod(0o644)
    work = tmp_path / "work"
    work.mkdir()
    with Sandbox(work, drop_inside=True) as box:
        argv = box.command_line(
            [
                "bash",
                "-c",
                "id -u; grep CapEff /proc/self/status; cat /tmp/a/b/note.txt; touch /tmp/t && echo tmp-ok",
            ],
            ro_binds={closed / "note.txt": "/tmp/a/b/note.txt"},
        )
        done = subprocess.run(argv, env=box.env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "65534" and lines[1].endswith("0000000000000000")
    assert "for the app" in done.stdout and "tmp-ok" in done.stdout
