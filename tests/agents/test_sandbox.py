"""Sandbox: every limit fires with its reason, no network, read-only system, path helpers."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest

from iclr26.agents.sandbox import PathEscapeError, Sandbox, SandboxLimits
from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.sysdeps import MissingSystemPackage

needs_bwrap = pytest.mark.debian("bubblewrap")
MIB = 1024 * 1024
FAST = SandboxLimits(
    timeout_s=10,
    episode_s=None,
    cpu_s=5,
    memory_bytes=256 * MIB,
    max_processes=64,
    file_size_bytes=MIB,
    open_files=64,
    tmpfs_bytes=8 * MIB,
    output_bytes=4096,
)


@pytest.fixture
def sandbox():
    with Sandbox(limits=FAST) as sb:
        yield sb


def _live_processes() -> int:
    """Processes on the host that are not zombies."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            count += state != b"Z"
    return count


@needs_bwrap
def test_command_runs_in_the_workdir_with_merged_output(sandbox):
    result = sandbox.run("echo out; echo err >&2; pwd; exit 3")
    assert result.exit_code == 3
    assert result.output.splitlines() == ["out", "err", str(sandbox.workdir)]
    assert (result.timed_out, result.truncated, result.reason, result.ok) == (False, False, None, False)
    assert sandbox.run("true").ok


@needs_bwrap
def test_timeout_kills_the_whole_sandbox_and_background_jobs_die_with_the_command(sandbox):
    positive = sandbox.run("(sleep 0.2; touch early) & sleep 0.6")
    assert positive.ok and (sandbox.workdir / "early").exists()  # a background job can write

    done = sandbox.run("(sleep 1; touch after_exit) & echo started")
    assert done.ok and done.output == "started\n" and done.duration_s < 1.0

    start = time.monotonic()
    slow = sandbox.run("(sleep 1; touch after_timeout) & sleep 30", timeout_s=0.5)
    assert time.monotonic() - start < 2.0
    assert (slow.timed_out, slow.reason, slow.exit_code) == (True, "timeout", None)
    time.sleep(1.3)
    assert not (sandbox.workdir / "after_exit").exists()
    assert not (sandbox.workdir / "after_timeout").exists()


@needs_bwrap
def test_sleep_30_with_a_1_s_timeout_returns_fast(sandbox):
    result = sandbox.run("sleep 30", timeout_s=1)
    assert result.reason == "timeout" and result.timed_out
    assert 0.9 < result.duration_s < 2.5


@needs_bwrap
def test_episode_budget_cuts_a_command_and_refuses_the_next():
    with Sandbox(limits=replace(FAST, episode_s=1.0)) as sb:
        first = sb.run("sleep 0.5")
        assert first.ok
        cut = sb.run("sleep 5")
        assert (cut.reason, cut.timed_out) == ("episode_timeout", True)
        assert cut.duration_s < 1.0
        assert sb.remaining_s == 0.0
        refused = sb.run("touch ran")
        assert (refused.reason, refused.exit_code, refused.duration_s) == ("episode_timeout", None, 0.0)
        assert "episode budget" in refused.output
        assert not (sb.workdir / "ran").exists()


@needs_bwrap
def test_cpu_limit_stops_a_busy_loop():
    with Sandbox(limits=replace(FAST, cpu_s=1, timeout_s=20)) as sb:
        direct = sb.run("while :; do :; done")
        assert (direct.reason, direct.timed_out, direct.exit_code) == ("cpu", False, 152)  # 128 + SIGXCPU
        assert direct.duration_s < 10  # stopped by 1 CPU second, not by the 20 s timeout
        child = sb.run("bash -c 'while :; do :; done'; echo survived")
        assert child.reason == "cpu" and "survived" in child.output
        assert child.duration_s < 10


@needs_bwrap
def test_memory_limit_fails_an_allocation_beyond_it():
    with Sandbox(limits=replace(FAST, memory_bytes=64 * MIB)) as sb:
        small = sb.run("x=$(head -c 8M /dev/zero | tr '\\0' a); echo ${#x}")
        assert small.ok and small.output.strip() == str(8 * MIB)
        big = sb.run("x=$(head -c 200M /dev/zero | tr '\\0' a); echo ${#x}")
        assert big.reason == "memory" and big.exit_code != 0
        assert "cannot allocate" in big.output
        if shutil.which("python3", path="/usr/bin:/bin"):
            py = sb.run("python3 -c 'bytearray(512 * 1024 * 1024)'")
            assert py.reason == "memory" and "MemoryError" in py.output


@needs_bwrap
def test_file_size_limit_stops_a_10_gb_write_at_the_limit(sandbox):
    free_before = shutil.disk_usage(sandbox.workdir).free
    head = sandbox.run("head -c 10G /dev/zero > big")
    assert head.reason == "file_size" and head.duration_s < 5
    assert (sandbox.workdir / "big").stat().st_size == MIB
    dd = sandbox.run("dd if=/dev/zero of=big2 bs=1M count=10240")
    assert (dd.reason, dd.exit_code) == ("file_size", 153)  # 128 + SIGXFSZ
    assert (sandbox.workdir / "big2").stat().st_size <= MIB
    assert free_before - shutil.disk_usage(sandbox.workdir).free < 100 * MIB


@needs_bwrap
def test_open_files_limit():
    with Sandbox(limits=replace(FAST, open_files=32)) as sb:
        result = sb.run("for i in $(seq 100); do exec {fd}>/dev/null || exit 1; done")
        assert (result.reason, result.exit_code) == ("open_files", 1)
        assert sb.run("for i in $(seq 10); do exec {fd}>/dev/null || exit 1; done").ok


@needs_bwrap
def test_a_real_fork_bomb_is_contained_and_the_host_can_still_fork():
    with Sandbox(limits=replace(FAST, max_processes=32)) as sb:
        # Harmless probe first: if the process limit were not enforced, stop before the bomb.
        probe = sb.run("for i in $(seq 60); do sleep 3 & done; wait", timeout_s=1.5)
        if probe.reason != "processes":
            pytest.fail(f"max_processes is not enforced (probe: {probe.reason}); not running the fork bomb")
        before = _live_processes()
        bomb = sb.run(":(){ :|:& };:; sleep 30", timeout_s=3)
        assert bomb.reason == "processes" and bomb.timed_out
        assert bomb.duration_s < 6
        assert "fork: retry: Resource temporarily unavailable" in bomb.output
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork
    deadline = time.monotonic() + 5
    while _live_processes() > before + 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _live_processes() <= before + 5  # nothing of the bomb survives


@needs_bwrap
def test_output_is_truncated_to_the_stated_size_with_a_marker():
    with Sandbox(limits=replace(FAST, output_bytes=1000)) as sb:
        result = sb.run("head -c 5000 /dev/zero | tr '\\0' x; echo END")
        assert result.truncated and result.ok
        assert result.output.startswith("x" * 500 + "\n[... 4004 bytes of output cut: 5004 bytes in all")
        assert result.output.endswith("x" * 496 + "END\n")
        assert "kept the first 500 and the last 500" in result.output
        small = sb.run("echo short")
        assert (small.output, small.truncated) == ("short\n", False)


@needs_bwrap
def test_no_network_inside(sandbox):
    result = sandbox.run("exec 3<>/dev/tcp/1.1.1.1/80 && echo CONNECTED")
    assert result.exit_code != 0 and "CONNECTED" not in result.output
    assert "Network is unreachable" in result.output
    assert result.duration_s < 2  # fails at once: there is no route at all
    interfaces = sandbox.run("tail -n +3 /proc/net/dev | cut -d: -f1").output.split()
    assert interfaces == ["lo"]
    if shutil.which("curl", path="/usr/bin:/bin"):
        curl = sandbox.run("curl -sS -m 5 http://1.1.1.1")
        assert curl.exit_code != 0 and curl.duration_s < 2


@needs_bwrap
def test_a_loopback_server_on_the_host_is_not_reachable_from_inside(sandbox):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.3)
    port = server.getsockname()[1]
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED"
    try:
        inside = sandbox.run(probe)
        assert "CONNECTED" not in inside.output and "Connection refused" in inside.output
        with pytest.raises(TimeoutError):
            server.accept()
        # The same probe without the network namespace does connect: the check above can fail.
        with Sandbox(limits=FAST, isolate=False) as open_box:
            assert open_box.isolated is False
            outside = open_box.run(probe)
        assert "CONNECTED" in outside.output
        server.accept()[0].close()
    finally:
        server.close()


@needs_bwrap
def test_the_system_is_read_only_and_the_workdir_is_writable(sandbox):
    result = sandbox.run("touch /usr/x; touch /etc/x; echo hello > note.txt")
    assert result.output.count("Read-only file system") == 2
    assert not Path("/usr/x").exists() and not Path("/etc/x").exists()
    assert (sandbox.workdir / "note.txt").read_text() == "hello\n"
    name = f"iclr26-private-{secrets.token_hex(4)}"
    assert sandbox.run(f"echo s > /tmp/{name} && cat /tmp/{name}").output == "s\n"
    assert not (Path("/tmp") / name).exists()  # /tmp inside is private


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only a root caller drops to another uid")
def test_root_callers_run_commands_as_an_unprivileged_uid(sandbox):
    assert sandbox.uid != 0
    assert sandbox.run("id -u").output.strip() == str(sandbox.uid)
    assert sandbox.run("touch /root/x 2>&1; cat /etc/shadow >/dev/null").exit_code != 0


@needs_bwrap
def test_file_helpers_stay_inside_the_workdir(sandbox):
    host = sandbox.write_file("src/app.py", "print('hi')\n")
    assert host == sandbox.workdir / "src" / "app.py"
    assert sandbox.run("cat src/app.py").output == "print('hi')\n"
    assert sandbox.run("echo more >> src/app.py").ok  # the sandbox may write what the host wrote
    assert sandbox.read_file(sandbox.workdir / "src" / "app.py") == "print('hi')\nmore\n"
    assert sandbox.read_bytes("src/app.py").startswith(b"print")
    for bad in ("../escape.txt", "src/../../escape.txt", "/etc/passwd"):
        with pytest.raises(PathEscapeError, match="outside the sandbox work dir"):
            sandbox.write_file(bad, "x")
    with pytest.raises(PathEscapeError, match="outside the sandbox work dir"):
        sandbox.read_file("/etc/hostname")
    assert sandbox.run("ln -s /etc/passwd link").ok
    with pytest.raises(PathEscapeError, match="resolves to '/etc/passwd'"):
        sandbox.read_file("link")
    with pytest.raises(PathEscapeError, match="work dir itself"):
        sandbox.write_file(".", "x")


@needs_bwrap
def test_workdir_lifecycle(tmp_path):
    with Sandbox(limits=FAST) as sb:
        made = sb.workdir
        assert made.is_dir()
    assert not made.exists()
    with Sandbox(limits=FAST, keep=True) as sb:
        kept = sb.workdir
        sb.run("echo x > f")
    try:
        assert (kept / "f").read_text() == "x\n"
    finally:
        shutil.rmtree(kept)
    given = Path(tempfile.mkdtemp(prefix="iclr26-test-given-"))
    try:
        (given / "existing.txt").write_text("before\n")
        with Sandbox(given, limits=FAST) as sb:
            assert sb.run("cat existing.txt && echo after >> existing.txt").ok
        assert (given / "existing.txt").read_text() == "before\nafter\n"  # a given dir stays
    finally:
        shutil.rmtree(given)
    with pytest.raises(RuntimeError, match="not open"):
        Sandbox(limits=FAST).run("true")
    if os.geteuid() == 0:  # pytest's tmp_path sits in a 0700 root directory
        with pytest.raises(UserError, match="unreachable for the sandbox uid"):
            Sandbox(tmp_path, limits=FAST).open()


def test_limits_are_validated_with_the_field_named():
    for field, value in [
        ("timeout_s", 0),
        ("timeout_s", float("inf")),
        ("episode_s", -1.0),
        ("cpu_s", 0),
        ("memory_bytes", 1024),
        ("max_processes", True),
        ("file_size_bytes", 1.5),
        ("open_files", 4),
        ("tmpfs_bytes", None),
        ("output_bytes", 10),
    ]:
        with pytest.raises(ConfigError, match=f"SandboxLimits.{field} must be"):
            SandboxLimits(**{field: value})
    assert SandboxLimits(cpu_s=None, episode_s=None).cpu_s is None


def test_missing_bubblewrap_refuses_instead_of_running_weaker(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap (nor anything else) on PATH
    with pytest.raises(MissingSystemPackage, match="bubblewrap"):
        Sandbox()
