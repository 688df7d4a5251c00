"""Monitoring tasks: a service runs in the agent's sandbox and, at a seeded time 5-25 s after the
agent starts, develops an anomaly; the agent has the usual tools (ps, top, free, netstat, iostat,
lsof, /proc) and no source, and names the anomaly in `report.txt`. Two tasks are healthy controls.
Grading is binary on the label. The service is `server.py` with its mode written in, started by
`services/start.sh` and deleted from the work dir once it runs.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from iclr26.devops_gym.suite import TaskDraft, dedent

ANOMALIES: tuple[str, ...] = (
    "memory_leak",
    "disk_leak",
    "handle_exhaustion",
    "cpu_spike",
    "io_bottleneck",
    "inefficient_sql",
)
LABELS: tuple[str, ...] = (*ANOMALIES, "healthy")
SERVER = Path(__file__).with_name("server.py")
ONSET_RANGE_S = (5.0, 25.0)
REPORT = "report.txt"

START_SH = """#!/bin/bash
# Start the service in the background and wait until it has written its pid file.
python3 "$(dirname "$0")/server.py" < /dev/null > /dev/null 2>&1 &
for _ in $(seq 300); do [ -s var/app.pid ] && exit 0; sleep 0.05; done
echo "the service did not start" >&2; exit 1
"""

TESTS = '''"""Monitoring: the report names the anomaly the service developed."""

from checks import APP_DIR

EXPECTED = {label!r}


def test_report_names_the_anomaly():
    report = APP_DIR / "{report}"
    assert report.is_file(), "no {report} was written"
    words = report.read_text().split()
    assert words, "{report} is empty"
    assert words[0].strip().lower() == EXPECTED, f"reported {{words[0]!r}}"
'''

INSTRUCTION = """
A service was started from this directory a moment ago (its process is running; its data and
logs are under var/). Its source is not available. It may develop a problem after a while, or it
may be healthy: a single look is not enough. Observe it with the tools you have (ps, top, free,
vmstat, iostat, pidstat, netstat, lsof, du, /proc/<pid>/...) for as long as you need, then write
exactly one label to `report.txt`, the first word of the file, from:
memory_leak, disk_leak, handle_exhaustion, cpu_spike, io_bottleneck, inefficient_sql, healthy.
"""


def server_source(mode: str, fault_at: float) -> str:
    """`server.py` with `mode` and the onset written in."""
    if mode not in LABELS:
        raise ValueError(f"unknown monitoring mode {mode!r}; choose from {', '.join(LABELS)}")
    source = SERVER.read_text()
    source = re.sub(r'^MODE = ".*"$', f"MODE = {mode!r}", source, count=1, flags=re.M)
    return re.sub(r"^FAULT_AT = .*$", f"FAULT_AT = {fault_at:.1f}", source, count=1, flags=re.M)


def monitor_task(name: str, mode: str, rng: random.Random, difficulty: str) -> TaskDraft:
    """One monitoring task; the onset is drawn from `rng` (healthy services draw one too)."""
    fault_at = rng.uniform(*ONSET_RANGE_S)
    return TaskDraft(
        name=name,
        category="monitor",
        language="python",
        difficulty=difficulty,
        instruction=dedent(INSTRUCTION),
        workspace={},
        tests=TESTS.format(label=mode, report=REPORT),
        solution=f"echo {mode} > {REPORT}",
        services={"start.sh": START_SH, "server.py": server_source(mode, fault_at)},
        tags=(mode,),
        agent_timeout_s=300.0,
        test_timeout_s=60.0,
    )


def drafts(rng: random.Random) -> list[TaskDraft]:
    """Six anomalies and two healthy controls."""
    level = {"memory_leak": "easy", "disk_leak": "easy", "cpu_spike": "easy", "handle_exhaustion": "medium"}
    tasks = [monitor_task(m.replace("_", "-"), m, rng, level.get(m, "hard")) for m in ANOMALIES]
    tasks += [monitor_task(f"healthy-{i}", "healthy", rng, "medium") for i in (1, 2)]
    return tasks
