"""The offline Java and Go toolchains as the sandbox sees them.

- **Maven** runs offline (`mvn -o`) against a local repository that holds the plugins and test
  libraries the suite's poms name (JUnit Jupiter 5.10.2, Surefire 3.2.5, ...). It is
  `$ICLR26_MAVEN_REPO`, else `$HOME/.m2/repository`, else the account's own (`source_repository`).
  A root caller's sandbox runs as `nobody`, who cannot enter `/root`, so the repository is mirrored
  once, as hard links (no copy of the jars), under `/var/tmp`, world-readable; sandboxed builds read
  it and never write it.
- **Go** (Debian's golang-go, standard library only) builds with `GOPROXY=off` and its caches in
  the sandbox's private `/tmp`, so nothing is fetched and no task sees another's build cache.
"""

from __future__ import annotations

import contextlib
import os
import pwd
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
    """The local Maven repository the suite builds against: `$ICLR26_MAVEN_REPO`, else the first of
    `$HOME/.m2/repository` and the account's own `~/.m2/repository` (its home in the passwd database,
    for a run whose HOME is a fresh or temporary folder) that holds junit-jupiter."""
    given = os.environ.get(MAVEN_REPO_ENV)
    if given:
        candidates = [Path(given)]
    else:
        candidates = [Path.home() / ".m2" / "repository"]
        with contextlib.suppress(KeyError):  # a uid without a passwd entry
            own = Path(pwd.getpwuid(os.geteuid()).pw_dir) / ".m2" / "repository"
            if own not in candidates:
                candidates.append(own)
    for repo in candidates:
        if (repo / "org" / "junit" / "jupiter" / "junit-jupiter" / JUNIT_VERSION).is_dir():
            return repo
    raise UserError(
        f"no local Maven repository with junit-jupiter {JUNIT_VERSION} (looked in "
        f"{', '.join(map(str, candidates))}): the Java tasks build offline (mvn -o); point "
        f"{MAVEN_REPO_ENV} at a repository that has it"
    )


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
