"""Helpers of the built-here tasks' verifiers, copied into every task's `tests/` as `checks.py`.

They run under the system `python3 -m pytest` inside the sandbox, after the agent has stopped, so
they use the standard library alone. `APP_DIR` is the agent's work dir; the verifiers work on
copies of it (`scratch_copy`), so a gold test or a restored source never touches the agent's files.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

APP_DIR = Path(os.environ.get("APP_DIR", os.getcwd()))
TEST_DIR = Path(os.environ.get("TEST_DIR", Path(__file__).parent))
BUILD_TIMEOUT_S = 240


def run(
    command: list[str], cwd: Path, timeout_s: float = BUILD_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """Run `command` in `cwd`, output captured (stderr folded into stdout)."""
    return subprocess.run(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout_s
    )


def scratch_copy(src: Path = APP_DIR) -> Path:
    """A fresh copy of `src` under /tmp, without build outputs."""
    dst = Path(tempfile.mkdtemp(prefix="verify-")) / "app"
    shutil.copytree(src, dst, symlinks=False, ignore=shutil.ignore_patterns("target", "bin", ".iclr26-tests"))
    return dst


def overlay(files: Path, dst: Path) -> None:
    """Copy the tree `files` over `dst` (gold tests, restored sources)."""
    shutil.copytree(files, dst, dirs_exist_ok=True)


def maven(cwd: Path, *goals: str) -> subprocess.CompletedProcess[str]:
    """Offline Maven (`mvn -o -B`); the local repository comes from MAVEN_OPTS."""
    return run(["mvn", "-o", "-B", "-q", *(goals or ("test",))], cwd)


def surefire(cwd: Path) -> dict[str, str]:
    """`Class.method` -> passed / failed / error / skipped, from target/surefire-reports."""
    out: dict[str, str] = {}
    for report in sorted((cwd / "target" / "surefire-reports").glob("TEST-*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname', '').rsplit('.', 1)[-1]}.{case.get('name', '').rstrip('()')}"
            status = "passed"
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    status = {"failure": "failed"}.get(child.tag, child.tag)
            out[name] = status
    return out


_GO_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)", re.M)


def go_test(cwd: Path, *packages: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """`go test -v -count=1`; returns the run and `TestName` -> passed / failed / skipped."""
    proc = run(["go", "test", "-v", "-count=1", *(packages or ("./...",))], cwd)
    names = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}
    return proc, {m.group(2): names[m.group(1)] for m in _GO_RESULT.finditer(proc.stdout)}


def tail(proc: subprocess.CompletedProcess[str], lines: int = 30) -> str:
    """The last lines of a run's output, for an assertion message."""
    return "\n".join(proc.stdout.splitlines()[-lines:])
