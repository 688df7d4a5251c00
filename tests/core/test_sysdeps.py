import subprocess
import sys

import pytest

from iclr26.core import sysdeps
from iclr26.core.errors import UserError


def test_table_and_declared():
    assert sysdeps.declared(["agents.sandbox", "agents.sandbox"]) == ("bubblewrap",)
    everything = sysdeps.declared()
    assert len(everything) == len(set(everything)) and {"bubblewrap", "tmux", "xvfb", "chromium"} <= set(
        everything
    )
    assert all(p in sysdeps.PROBES for p in everything)  # each is checked by its executable
    with pytest.raises(UserError, match="no Debian packages are declared for"):
        sysdeps.declared(["nope"])


def test_missing_and_require_name_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert sysdeps.missing(["tmux", "bubblewrap"]) == ["tmux", "bubblewrap"]
    with pytest.raises(sysdeps.MissingSystemPackage) as e:
        sysdeps.require("tmux")
    msg = str(e.value)
    assert "\n" not in msg and "tmux" in msg and "apt-get install -y --no-install-recommends tmux" in msg


def test_without_root_install_prints_the_exact_line(monkeypatch, capsys):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(sysdeps, "can_install", lambda: False)
    gone = sysdeps.install(["agents.terminal", "agents.display"])
    assert gone == ["tmux", "xvfb", "xdotool"]
    assert "sudo apt-get install -y --no-install-recommends tmux xvfb xdotool" in capsys.readouterr().out


def test_install_is_idempotent_when_nothing_is_missing(monkeypatch, capsys):
    monkeypatch.setattr(sysdeps, "missing", lambda pkgs: [])
    monkeypatch.setattr(sysdeps.subprocess, "run", lambda *a, **k: pytest.fail("apt-get must not run"))
    assert sysdeps.install() == []
    assert "every declared Debian package is installed" in capsys.readouterr().out


def test_skip_names_the_package_and_ci_fails(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-such-package-iclr26"):
        sysdeps.skip_or_fail(["no-such-package-iclr26"])
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and a declared package is missing"):
        sysdeps.skip_or_fail(["no-such-package-iclr26"])
    sysdeps.skip_or_fail([])  # nothing missing: nothing happens


def test_module_cli_lists_and_checks():
    out = subprocess.run(
        [sys.executable, "-m", "iclr26.core.sysdeps", "list"], capture_output=True, text=True, check=True
    ).stdout
    assert "agents.sandbox" in out and "bubblewrap" in out
    bad = subprocess.run(
        [sys.executable, "-m", "iclr26.core.sysdeps", "check", "nope"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "no Debian packages are declared" in bad.stderr
