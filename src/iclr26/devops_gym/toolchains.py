"""The offline Java and Go toolchains as the sandbox sees them.

- **Maven** runs offline (`mvn -o`) against a local repository that holds the plugins and test
  libraries the suite's poms name (JUnit Jupiter 5.10.2, Surefire 3.2.5, ...). It is
  `$ICLR26_MAVEN_REPO`, else `~/.m2/repository`. A root caller's sandbox runs as `nobody`, who
  cannot enter `/root`, so the repository is mirrored once, as hard links (no copy of the jars),
  under `/var/tmp`, world-readable; sandboxed builds read it and never write it.
- **Go** (Debian's golang-go, standard library only) builds with `GOPROXY=off` and its caches in
  the sandbox's private `/tmp`, so nothing is fetched and no task sees another's build cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from iclr26.core.errors import UserError

MAVEN_REPO_ENV = "ICLR26_MAVEN_REPO"
_MIRROR = Path("/var/tmp/iclr26-maven-repository")
_STAMP = ".iclr26-mirrored-from"
JUNIT_VERSION = "5.10.2"
PLUGIN_VERSIONS: dict[str, str] = {
    "maven-clean-plugin": "3.3.2",
    "maven-resources-plugin": "3.3.1",
    "maven-compiler-plugin": "3.13.0",
    "maven-surefire-plugin": "3.2.5",
    "maven-install-plugin": "3.1.1",
}
"""Plugin versions pinned in every generated pom: Maven 3.8's defaults are not in the local repository."""


def source_repository() -> Path:
    """The local Maven repository the suite builds against."""
    given = os.environ.get(MAVEN_REPO_ENV)
    repo = Path(given) if given else Path.home() / ".m2" / "repository"
    probe = repo / "org" / "junit" / "jupiter" / "junit-jupiter" / JUNIT_VERSION
    if not probe.is_dir():
        raise UserError(
            f"the local Maven repository {repo} lacks junit-jupiter {JUNIT_VERSION}: the Java tasks build "
            f"offline (mvn -o); point {MAVEN_REPO_ENV} at a repository that has it"
        )
    return repo


@cache
def maven_repository() -> Path:
    """A local repository the sandbox uid can read: the source itself, or (as root) its mirror."""
    repo = source_repository()
    if os.geteuid() != 0:
        return repo
    stamp = _MIRROR / _STAMP
    if stamp.is_file() and stamp.read_text() == str(repo):
        return _MIRROR
    shutil.rmtree(_MIRROR, ignore_errors=True)
    _MIRROR.parent.mkdir(parents=True, exist_ok=True)
    linked = subprocess.run(["cp", "-al", str(repo), str(_MIRROR)], capture_output=True, check=False)
    if linked.returncode != 0:  # another file system: copy instead
        shutil.rmtree(_MIRROR, ignore_errors=True)
        shutil.copytree(repo, _MIRROR, symlinks=True)
    subprocess.run(["chmod", "-R", "a+rX", str(_MIRROR)], check=True)
    stamp.write_text(str(repo))
    return _MIRROR


def toolchain_env() -> dict[str, str]:
    """Environment variables for sandboxed builds: offline Maven and Go, caches in private /tmp."""
    return {
        "MAVEN_OPTS": f"-Dmaven.repo.local={maven_repository()}",
        "GOPROXY": "off",
        "GOFLAGS": "-mod=mod",
        "GOCACHE": "/tmp/go-build",
        "GOPATH": "/tmp/go",
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
    }
