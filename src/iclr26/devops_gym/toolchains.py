"""The offline Java and Go toolchains as the sandbox sees them.

- **Maven** runs offline (`mvn -o`) against a local repository that holds the plugins and test
  libraries the suite's poms name (JUnit Jupiter 5.10.2, Surefire 3.2.5, ...). It is
  `$ICLR26_MAVEN_REPO`, else `$HOME/.m2/repository`, else the account's own (`source_repository`).
  A root caller's sandbox runs as `nobody`, who cannot enter `/root`, so the repository is mirrored
  once, as hard links (no copy of the jars), to `/var/cache/iclr26/maven-repository`, world-readable.
  Only root may change `/var/cache/iclr26` (it is checked, never trusted: a link or a folder another
  user owns there is refused), the mirror is built in a fresh `mkdtemp` folder and renamed into
  place, and its modes are set file by file without following links. Sandboxed builds see it
  read-only (`toolchain_binds`) and never write it.
- **Go** (Debian's golang-go, standard library only) builds with `GOPROXY=off` and its caches in
  the sandbox's private `/tmp`, so nothing is fetched and no task sees another's build cache.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from iclr26.agents.sandbox import read_untrusted, readable_by_all
from iclr26.core.errors import UserError

MAVEN_REPO_ENV = "ICLR26_MAVEN_REPO"
_MIRROR = Path("/var/cache/iclr26/maven-repository")
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
    if _mirror_of() == str(repo):
        return _MIRROR
    _root_only(_MIRROR.parent)
    build = Path(tempfile.mkdtemp(prefix=".maven-", dir=_MIRROR.parent))  # 0700, ours alone
    try:
        copy = build / "repository"
        linked = subprocess.run(["cp", "-al", str(repo), str(copy)], capture_output=True, check=False)
        if linked.returncode != 0:  # another file system: copy instead
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(repo, copy, symlinks=True)
        readable_by_all(copy)  # our own 0700 folder: nothing is swapped in meanwhile
        (copy / _STAMP).write_text(str(repo))
        if _mirror_of() == str(repo):  # another process of ours finished first: keep its mirror
            return _MIRROR
        if os.path.lexists(_MIRROR):  # an older mirror (of another source): set aside, then removed
            os.rename(_MIRROR, build / "old")
        os.rename(copy, _MIRROR)
    except OSError:
        if _mirror_of() != str(repo):  # not another process of ours that finished first
            raise
    finally:
        shutil.rmtree(build, ignore_errors=True)  # never follows links
    return _MIRROR


def _mirror_of() -> str | None:
    """The source the mirror was made from, if `_MIRROR` is a folder (not a link) with a stamp."""
    try:
        if not stat.S_ISDIR(os.lstat(_MIRROR).st_mode):
            return None
    except FileNotFoundError:
        return None
    data = read_untrusted(_MIRROR / _STAMP, 4096)
    return data.decode(errors="replace") if data is not None else None


def _root_only(folder: Path) -> None:
    """Create `folder` (0755) if needed; refuse it if it is a link or another user could change it
    (owned by another uid, writable by group or others), and likewise any folder above it, where
    a sticky world-writable one (/tmp, /var/tmp) is fine: no one may replace root's entries there."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o755)
    for path in (folder, *folder.parents):
        st = os.lstat(path)
        sticky = path != folder and st.st_mode & stat.S_ISVTX
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or (st.st_mode & 0o022 and not sticky):
            raise UserError(
                f"{path} is not a folder that only root can change ({stat.filemode(st.st_mode)}, uid "
                f"{st.st_uid}); the Maven mirror is not built there: remove it and run again"
            )


def toolchain_binds() -> dict[Path, str]:
    """The toolchain folders outside the system a sandboxed build needs, read-only: the Maven repository."""
    repo = maven_repository()
    return {repo: str(repo)}


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
