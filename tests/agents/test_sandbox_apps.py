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
