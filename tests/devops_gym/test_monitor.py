"""The monitoring fixtures really misbehave, and the healthy control does not, measured from
outside through /proc (memory, descriptors, CPU time, bytes written, disk use) and the service's
own query log."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from iclr26.devops_gym.suite.monitor import ANOMALIES, server_source


def _dir_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _sample(pid: int, root: Path) -> dict[str, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kib = int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1])
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    io = dict(line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    return {
        "rss_mib": rss_kib / 1024,
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "cpu_s": (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK"),
        "written_mib": int(io["wchar"]) / 2**20,
        "disk_mib": _dir_bytes(root / "var") / 2**20,
    }


@contextmanager
def _every_mode(tmp_path_factory, prefix: str, fault_at: float, env: dict[str, str] | None = None):
    """Every mode's service started at once, each in its own folder, yielded once each has written
    its pid file: {mode: (folder, process)}; all are killed on exit."""
    procs = {}
    try:
        for mode in (*ANOMALIES, "healthy"):
            root = tmp_path_factory.mktemp(f"{prefix}{mode}")
            (root / "server.py").write_text(server_source(mode, fault_at=fault_at))
            procs[mode] = (root, subprocess.Popen([sys.executable, "server.py"], cwd=root, env=env))
        for root, _ in procs.values():
            for _ in range(200):
                if (root / "var" / "app.pid").exists():
                    break
                time.sleep(0.05)
        yield procs
    finally:
        for _, p in procs.values():
            p.kill()
            p.wait()


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """Every mode run at once for 4 s with its fault from 0.5 s; the growth of each measure."""
    with _every_mode(tmp_path_factory, "", 0.5, {**os.environ, "ICLR26_FAULT_AT": "0.5"}) as procs:
        time.sleep(0.3)
        before = {m: _sample(p.pid, r) for m, (r, p) in procs.items()}
        time.sleep(4.0)
        after = {m: _sample(p.pid, r) for m, (r, p) in procs.items()}
    growth = {m: {k: after[m][k] - before[m][k] for k in after[m]} for m in procs}
    return growth, {m: r for m, (r, _) in procs.items()}


def test_the_healthy_control_stays_flat(measured):
    growth, _ = measured
    h = growth["healthy"]
    assert h["rss_mib"] < 5 and h["fds"] <= 2 and h["disk_mib"] < 1 and h["written_mib"] < 1
    assert h["cpu_s"] < 1.0  # a little work, well under a core over 4 s


def test_memory_leak_grows_resident_memory(measured):
    growth, _ = measured
    assert growth["memory_leak"]["rss_mib"] > 20


def test_disk_leak_grows_disk_use(measured):
    growth, _ = measured
    assert growth["disk_leak"]["disk_mib"] > 10


def test_handle_exhaustion_grows_open_descriptors(measured):
    growth, _ = measured
    assert growth["handle_exhaustion"]["fds"] > 100


def test_cpu_spike_burns_cpu(measured):
    growth, _ = measured
    # seven services share the test machine's cores: CPU is compared with the healthy control
    assert growth["cpu_spike"]["cpu_s"] > max(0.5, 10 * growth["healthy"]["cpu_s"])


def test_io_bottleneck_writes_heavily_with_flat_disk_use(measured):
    growth, _ = measured
    io = growth["io_bottleneck"]
    assert io["written_mib"] > 20 and io["disk_mib"] < 5


def test_inefficient_sql_scans_and_logs_slow_queries(measured):
    growth, roots = measured
    assert growth["inefficient_sql"]["cpu_s"] > max(0.5, 10 * growth["healthy"]["cpu_s"])
    lines = (roots["inefficient_sql"] / "var" / "log" / "queries.log").read_text().splitlines()
    ms = [float(line.split()[1]) for line in lines]
    assert len(ms) > 20 and sorted(ms)[len(ms) // 2] > 1.0  # full scans of 200k rows, not index hits


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown monitoring mode"):
        server_source("network_flood", 1.0)


@pytest.fixture(scope="module")
def before_onset(tmp_path_factory):
    """Every mode run at once with its fault far off (60 s): what a look before the onset shows."""
    with _every_mode(tmp_path_factory, "static-", 60.0) as procs:
        time.sleep(1.5)
        seen = {}
        for mode, (root, p) in procs.items():
            files = {str(f.relative_to(root)): f.stat().st_size for f in (root / "var").rglob("*")}
            status = Path(f"/proc/{p.pid}/status").read_text()
            threads = int(next(x for x in status.splitlines() if x.startswith("Threads")).split()[1])
            environ = Path(f"/proc/{p.pid}/environ").read_bytes().decode(errors="replace")
            seen[mode] = {"files": files, "fds": len(os.listdir(f"/proc/{p.pid}/fd")), "threads": threads,
                          "rss_mib": _sample(p.pid, root)["rss_mib"], "environ": environ}  # fmt: skip
    return seen


def test_no_static_tell_before_the_onset(before_onset):
    """The audit for a static tell: before the onset every mode shows the same files under var/
    (names; sizes equal but for the log's last lines), descriptors and threads, about the same
    resident memory, and no environment naming the mode (the old inefficient_sql database was 10x
    larger from the start, and a listing gave the label away)."""
    healthy = before_onset["healthy"]
    for mode, seen in before_onset.items():
        assert set(seen["files"]) == set(healthy["files"]), mode
        for name, size in seen["files"].items():
            if name.endswith(".log"):
                assert abs(size - healthy["files"][name]) < 200, (mode, name)
            elif not (Path(name).suffix == "" and size == 4096):  # folders
                assert size == healthy["files"][name], (mode, name)
        assert seen["fds"] == healthy["fds"] and seen["threads"] == healthy["threads"], mode
        assert abs(seen["rss_mib"] - healthy["rss_mib"]) < 3, mode
        assert not any(label in seen["environ"] for label in ANOMALIES), mode
