"""`make test` the way a newcomer runs it: a fresh clone of this checkout's HEAD, a fresh HOME, CI=true,
and no desktop, tmux or docker processes left from earlier runs.

    python benchmarks/core/fresh_clone.py            # one run; saves results/fresh_clone.json
    python benchmarks/core/fresh_clone.py --runs 3   # three runs one after another

Before each run the leftover processes a previous run could have left (Xvfb, dbus, AT-SPI, openbox,
tmux, dockerd, containerd, the ScienceBoard apps) are stopped and the page cache is dropped (as root),
so nothing is warm but what a fresh machine has. Saves, per run: the commit, the exit status, the
wall time of `make test` (installs included, `.venv` is created in the clone), pytest's own time
and its passed / skipped / failed counts, with the command, date and machine. The top README's
test-time line quotes this file.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # benchmarks/_meta.py
from _meta import provenance

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).parent / "results" / "fresh_clone.json"
LEFTOVERS = ("Xvfb", "dbus-daemon", "at-spi-bus-launcher", "at-spi2-registryd", "openbox", "tmux",
             "dockerd", "containerd", "kalgebra", "texstudio", "stellarium")  # fmt: skip
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ \w+.*?) in (?P<secs>[\d.]+)s", re.M)


def stop_leftovers() -> list[str]:
    """Stop the processes an earlier run may have left; the names of those that were running."""
    found = []
    for name in LEFTOVERS:
        if subprocess.run(["pkill", "-x", name], capture_output=True).returncode == 0:
            found.append(name)
    time.sleep(1)
    if os.geteuid() == 0:
        subprocess.run(["sync"], check=False)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    return found


def pytest_summary(log: str) -> dict:
    """pytest's last summary line: its seconds and counts (passed, skipped, failed, ...)."""
    found = SUMMARY.findall(log)
    if not found:
        return {}
    counts, secs = found[-1]
    parsed = {k: int(n) for n, k in re.findall(r"(\d+) (\w+)", counts)}
    return {"pytest_s": float(secs), **parsed}


def one_run(work: Path) -> dict:
    left = stop_leftovers()
    clone, home = work / "clone", work / "home"
    home.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "ICLR26_"))}
    env |= {
        "HOME": str(home),
        "CI": "true",
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    }
    start = time.perf_counter()
    proc = subprocess.run(["bash", ".ci/run"], cwd=clone, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    log = proc.stdout + proc.stderr
    (work.parent / f"{work.name}.log").write_text(log)
    return {"commit": commit, "rc": proc.returncode, "wall_s": round(wall, 1), "leftovers_stopped": left,
            **pytest_summary(log)}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the clones (under /tmp)")
    a = ap.parse_args()
    runs = []
    for i in range(a.runs):
        work = Path(tempfile.mkdtemp(prefix="iclr26-fresh-")) / f"run{i}"
        try:
            runs.append(one_run(work))
        finally:
            if not a.keep:
                shutil.rmtree(work, ignore_errors=True)
        print(json.dumps(runs[-1]), f"(log: {work.parent / (work.name + '.log')})", flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({**provenance(), "runs": runs}, indent=1) + "\n")
    print(f"saved {RESULTS}")
    return 0 if all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
