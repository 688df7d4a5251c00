"""Where the offline Maven repository is found: `$ICLR26_MAVEN_REPO` alone when set, else HOME's, else
the account's own from the passwd database (a fresh HOME on a machine whose account has one), and a
one-line error naming every place looked in."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from iclr26.core.errors import UserError
from iclr26.devops_gym import toolchains
from iclr26.devops_gym.toolchains import JUNIT_VERSION, source_repository


def _repo(root: Path) -> Path:
    (root / "org/junit/jupiter/junit-jupiter" / JUNIT_VERSION).mkdir(parents=True)
    return root


def test_the_repository_is_found_in_order_and_its_absence_is_named(tmp_path, monkeypatch):
    home, own = tmp_path / "home", tmp_path / "own"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(toolchains.MAVEN_REPO_ENV, raising=False)
    entry = SimpleNamespace(pw_dir=str(own))
    monkeypatch.setattr(toolchains.pwd, "getpwuid", lambda uid: entry)
    with pytest.raises(UserError, match=rf"looked in {home}/.m2/repository, {own}/.m2/repository"):
        source_repository()
    assert _repo(own / ".m2/repository") == source_repository()
    assert _repo(home / ".m2/repository") == source_repository()  # HOME's comes first
    monkeypatch.setenv(toolchains.MAVEN_REPO_ENV, str(tmp_path / "given"))
    with pytest.raises(UserError, match="given"):  # the variable alone, when set
        source_repository()
    assert _repo(tmp_path / "given") == source_repository()
