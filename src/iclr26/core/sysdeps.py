"""The Debian packages that parts of iclr26 need, in one table, and `make deps` to install them.

`DEBIAN_PACKAGES` maps each part (a shared subpackage or a system) to the Debian packages it
runs. `python -m iclr26.core.sysdeps install` (what `make deps` runs) installs the missing ones
with apt-get when it runs as root on a Debian-like machine, and otherwise prints the exact
`apt-get install` line. Code that needs a package calls `require(...)`, which raises a
one-line `MissingSystemPackage` naming the package and the command; tests use the
`@pytest.mark.debian(...)` marker (tests/conftest.py): a skip that names the package, and a
failure under `CI=true`, so CI never passes by skipping.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable

from iclr26.core.errors import UserError

# Who needs what. A system adds its row when it lands (and nothing it does not run).
DEBIAN_PACKAGES: dict[str, tuple[str, ...]] = {
    "agents.sandbox": ("bubblewrap",),  # Sandbox: no network, read-only system, rlimits
    "agents.terminal": ("tmux",),  # TerminalSession, the Terminal-Bench way of driving a shell
    "agents.display": ("xvfb", "xdotool"),  # virtual X display, screenshots, synthetic input
    "agents.browser": ("chromium",),  # headless Chromium driven by Playwright (executable_path)
    "spatial_dise.blender": ("blender",),  # the optional Blender renderer (Cycles, Freestyle)
    # the Java and Go task suite (mvn -o against the local Maven repository; Go's standard library)
    # and the monitoring tools the agent is given (ps, top, free, netstat, iostat, lsof, sqlite3)
    "devops_gym": (
        "default-jdk-headless",
        "maven",
        "golang-go",
        "procps",
        "net-tools",
        "sysstat",
        "lsof",
        "sqlite3",
        "python3-pytest",  # run-tests.sh runs /usr/bin/python3 -m pytest (readable by the sandbox uid)
        "make",  # the Go release-target task
    ),
    # the Docker runner for the public DevOps-Gym tasks (its tests skip while no daemon runs):
    # Debian's engine and Compose v1 (`docker compose`, the v2 plugin, is used where it exists)
    "devops_gym.docker": ("docker.io", "docker-compose"),
    # ScienceBoard: the desktop (Xvfb, a D-Bus session, the AT-SPI bus read by the system Python's
    # pyatspi, openbox), the apps (TeXstudio, PyMOL, KAlgebra, Stellarium, GRASS's shell in tmux
    # shown by xterm, run in the agent sandbox), pdflatex for the compile check
    "scienceboard": (
        "xvfb",
        "xdotool",
        "dbus",
        "at-spi2-core",
        "python3-pyatspi",
        "openbox",
        "texstudio",
        "pymol",
        "kalgebra",
        "stellarium",
        "grass-core",
        "xterm",
        "tmux",
        "bubblewrap",
        "texlive-latex-base",
    ),
}

# How to tell that a package is present without dpkg: the executable it installs, or (an absolute
# path) a file it installs.
PROBES: dict[str, str] = {
    "bubblewrap": "bwrap",
    "tmux": "tmux",
    "xvfb": "Xvfb",
    "xdotool": "xdotool",
    "chromium": "chromium",
    "chromium-driver": "chromedriver",
    "golang-go": "go",
    "grass-core": "grass",
    "openbox": "openbox",
    "texstudio": "texstudio",
    "pymol": "pymol",
    "kalgebra": "kalgebra",
    "stellarium": "stellarium",
    "xterm": "xterm",
    "dbus": "dbus-daemon",
    "at-spi2-core": "/usr/libexec/at-spi-bus-launcher",
    "python3-pyatspi": "/usr/lib/python3/dist-packages/pyatspi/__init__.py",
    "maven": "mvn",
    "default-jdk-headless": "javac",
    "texlive-latex-base": "pdflatex",
    "imagemagick": "convert",
    "blender": "blender",
    "procps": "ps",
    "net-tools": "netstat",
    "sysstat": "iostat",
    "lsof": "lsof",
    "sqlite3": "sqlite3",
    "python3-pytest": "pytest-3",
    "make": "make",
    "docker.io": "dockerd",
    "docker-compose": "docker-compose",
}


class MissingSystemPackage(UserError):
    """A Debian package that this code needs is not installed."""


def declared(parts: Iterable[str] | None = None) -> tuple[str, ...]:
    """The packages declared for `parts` (all parts when None), each once, in table order."""
    names = list(DEBIAN_PACKAGES) if parts is None else list(parts)
    unknown = [p for p in names if p not in DEBIAN_PACKAGES]
    if unknown:
        raise UserError(
            f"no Debian packages are declared for {unknown}; parts are: {', '.join(DEBIAN_PACKAGES)}"
        )
    return tuple(dict.fromkeys(pkg for p in names for pkg in DEBIAN_PACKAGES[p]))


def is_installed(package: str) -> bool:
    """Whether `package` is present: its probe executable is on PATH, else dpkg says installed."""
    probe = PROBES.get(package)
    if probe is not None and probe.startswith("/"):  # a file the package installs (no executable of its own)
        return os.path.exists(probe)
    if probe is not None:
        return shutil.which(probe) is not None
    if shutil.which("dpkg-query") is None:
        return False
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True, check=False
    )
    return done.returncode == 0 and done.stdout.strip().endswith("installed")


def missing(packages: Iterable[str]) -> list[str]:
    """The packages among `packages` that are not installed."""
    return [p for p in packages if not is_installed(p)]


def install_command(packages: Iterable[str]) -> str:
    """The exact apt-get line that installs `packages`."""
    return "apt-get install -y --no-install-recommends " + " ".join(packages)


def require(*packages: str) -> None:
    """Raise `MissingSystemPackage` (one line, with the install command) unless all are present."""
    gone = missing(packages)
    if gone:
        raise MissingSystemPackage(
            f"needs the Debian package{'s' if len(gone) > 1 else ''} {', '.join(gone)}: "
            f"run `make deps` or `sudo {install_command(gone)}`"
        )


def skip_or_fail(packages: Iterable[str]) -> None:
    """For tests: skip naming the missing packages, or fail when `CI=true` (CI never passes by
    skipping what it was meant to install). Does nothing when all are present."""
    import pytest

    gone = missing(packages)
    if not gone:
        return
    msg = f"needs Debian package(s) {', '.join(gone)}: run `make deps` ({install_command(gone)})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and a declared package is missing: {msg}", pytrace=False)
    pytest.skip(msg)


def can_install() -> bool:
    """apt-get exists and we are root: `install` will run it instead of printing the line."""
    return shutil.which("apt-get") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


def install(parts: Iterable[str] | None = None, *, quiet: bool = False) -> list[str]:
    """Install the missing declared packages with apt-get (idempotent); returns what was missing.

    Without root or apt-get it prints the `apt-get install` line and returns the missing list.
    """
    gone = missing(declared(parts))
    say = (lambda _msg: None) if quiet else (lambda msg: print(msg, flush=True))
    if not gone:
        say("make deps: every declared Debian package is installed")
        return []
    if not can_install():
        say(f"make deps: missing {', '.join(gone)}; install them with:\n  sudo {install_command(gone)}")
        return gone
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    say(f"make deps: installing {', '.join(gone)} with apt-get")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *gone], check=True, env=env)
    still = missing(gone)
    if still:
        raise MissingSystemPackage(f"apt-get ran but {', '.join(still)} is still missing")
    return gone


def main(argv: list[str] | None = None) -> int:
    """`python -m iclr26.core.sysdeps [install|check|list] [PART ...]`."""
    parser = argparse.ArgumentParser(prog="python -m iclr26.core.sysdeps", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("install", "check", "list"), nargs="?", default="check")
    parser.add_argument(
        "parts", nargs="*", help="parts to cover (default: all): " + ", ".join(DEBIAN_PACKAGES)
    )
    args = parser.parse_args(argv)
    try:
        parts = args.parts or None
        if args.action == "list":
            for part, pkgs in DEBIAN_PACKAGES.items():
                if parts is None or part in parts:
                    marks = [f"{p}{'' if is_installed(p) else ' (missing)'}" for p in pkgs]
                    print(f"{part:18s} {', '.join(marks)}")
            return 0
        if args.action == "install":
            install(parts)
            return 0
        gone = missing(declared(parts))
        if gone:
            print(f"missing: {', '.join(gone)}\n  sudo {install_command(gone)}")
            return 1
        print("every declared Debian package is installed")
        return 0
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
