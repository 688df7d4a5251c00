"""A scripted monitoring agent (named as scripted: no model): it samples the service through `/proc`
(resident memory, open descriptors, CPU ticks, the threads' run and run-queue time, bytes read and
written) and the disk use of `var/`, once a second, and names the anomaly by fixed thresholds on the
growth over the last few seconds. Busy is judged by the share of wall time the threads were running
or waiting to run (`schedstat`), which stays near 1 for a CPU-bound service however loaded the
machine is, and what keeps it busy by the bytes it reads per CPU-second (a table scan reads, a
spinning thread does not).

It shows that the monitoring tasks are solvable by observation alone, beside the constant-label
floor. Its commands run in the agent's sandboxed shell like any agent's: the first writes the
sampler (`SAMPLER`, standard library only) to the sandbox's private /tmp, each later one samples for
`chunk_s` seconds (keeping the samples in /tmp between commands), and the last writes `healthy` if
nothing crossed a threshold by then. A label other than `healthy` is written as soon as a window
crosses its threshold; later commands then return at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from iclr26.agents import OracleAgent
from iclr26.devops_gym.suite.monitor import ONSET_RANGE_S, REPORT
from iclr26.devops_gym.task import Task

OBSERVER = "scripted monitor (/proc thresholds)"
"""The scripted agent's name in every table."""
WINDOW_S = 3
"""Seconds of samples a decision looks back over."""
THRESHOLDS: dict[str, float] = {
    "fds_per_s": 10.0,  # handle_exhaustion leaks 50 a second
    "fds_level": 200.0,  # ... and stays near the 1,024 limit once it reaches it
    "rss_mib_per_s": 3.0,  # memory_leak holds 10 MiB/s
    "disk_mib_per_s": 3.0,  # disk_leak writes 10 MiB/s of files it keeps
    "write_mib_per_s": 3.0,  # io_bottleneck rewrites 4 MiB each tick with flat disk use
    "cpu_cores": 0.3,  # cpu_spike and inefficient_sql each keep about a core busy on an idle machine
    "runnable_share": 0.5,  # ... and a thread runnable all the time on a loaded one
    "read_mib_per_cpu_s": 10.0,  # a full scan reads the table via read(); a spinning thread reads nothing
}
"""The decision thresholds (each well below its anomaly's rate and far above the healthy service's)."""

SAMPLER = r"""
import json, os, sys, time

STATE = "/tmp/observer-samples.json"
REPORT = {report!r}
WINDOW = {window}
TH = {thresholds!r}


def disk_mib(root):
    total = 0
    for d, _, files in os.walk(root):
        for f in files:
            try:
                total += os.lstat(os.path.join(d, f)).st_size
            except OSError:
                pass
    return total / 2**20


def sample(pid):
    status = open(f"/proc/{{pid}}/status").read().splitlines()
    rss = int(next(x for x in status if x.startswith("VmRSS")).split()[1]) / 1024
    stat = open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()
    io = dict(x.split(": ") for x in open(f"/proc/{{pid}}/io").read().splitlines())
    return {{
        "t": time.time(), "rss": rss, "fds": len(os.listdir(f"/proc/{{pid}}/fd")),
        "cpu": (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK"),
        "rchar": int(io["rchar"]) / 2**20, "wchar": int(io["wchar"]) / 2**20, "disk": disk_mib("var"),
        "sched": sched_s(pid), "run": run_s(pid),
    }}


def _schedstat(pid):
    out = []
    for t in os.listdir(f"/proc/{{pid}}/task"):
        try:
            out.append([int(x) for x in open(f"/proc/{{pid}}/task/{{t}}/schedstat").read().split()[:2]])
        except OSError:
            pass
    return out


def sched_s(pid):
    # seconds the threads spent running or runnable (waiting for a CPU)
    return sum(a + b for a, b in _schedstat(pid)) / 1e9


def run_s(pid):
    # seconds the threads spent running
    return sum(a for a, _ in _schedstat(pid)) / 1e9


def decide(s):
    if s[-1]["fds"] >= TH["fds_level"]:
        return "handle_exhaustion"
    if len(s) < 2:
        return None
    a = next((x for x in s if x["t"] >= s[-1]["t"] - WINDOW), s[0])
    b = s[-1]
    dt = b["t"] - a["t"]
    if dt < 1.5:
        return None
    rate = {{k: (b[k] - a[k]) / dt for k in b if k != "t"}}
    if rate["fds"] >= TH["fds_per_s"]:
        return "handle_exhaustion"
    if rate["rss"] >= TH["rss_mib_per_s"]:
        return "memory_leak"
    if rate["disk"] >= TH["disk_mib_per_s"]:
        return "disk_leak"
    if rate["wchar"] >= TH["write_mib_per_s"]:
        return "io_bottleneck"
    if rate["cpu"] >= TH["cpu_cores"] or rate["sched"] >= TH["runnable_share"]:
        cpu_s = max(b["run"] - a["run"], b["cpu"] - a["cpu"], 0.01)
        per_cpu = (b["rchar"] - a["rchar"]) / cpu_s
        return "inefficient_sql" if per_cpu >= TH["read_mib_per_cpu_s"] else "cpu_spike"
    return None


def main(seconds, final):
    if os.path.exists(REPORT):
        print("reported:", open(REPORT).read().strip())
        return
    pid = int(open("var/app.pid").read())
    samples = json.load(open(STATE)) if os.path.exists(STATE) else []
    end = time.time() + seconds
    while True:
        samples.append(sample(pid))
        json.dump(samples, open(STATE, "w"))
        label = decide(samples)
        if label:
            break
        if time.time() >= end:
            break
        time.sleep(1.0)
    if label or final:
        label = label or "healthy"
        open(REPORT, "w").write(label + "\n")
    last = samples[-1]
    print(f"{{len(samples)}} samples; rss {{last['rss']:.0f}} MiB; fds {{last['fds']}};",
          f"disk {{last['disk']:.1f}} MiB; label:", label or "none yet")


main(float(sys.argv[1]), sys.argv[2] == "final")
"""
SAMPLER_PATH = "/tmp/observer.py"


def sampler_source() -> str:
    """The sampler with the report's name, the window and the thresholds written in."""
    return SAMPLER.format(report=REPORT, window=WINDOW_S, thresholds=THRESHOLDS).lstrip()


def observer_commands(chunk_s: float, watch_s: float = ONSET_RANGE_S[1] + 2 * WINDOW_S) -> list[str]:
    """The agent's shell commands: write the sampler, then sample `chunk_s` seconds at a time until
    `watch_s` seconds (past the latest onset and a window) have been watched; the last says healthy
    if nothing crossed a threshold."""
    if chunk_s < 2:
        raise ValueError(f"chunk_s must be at least 2 s, got {chunk_s}")
    n = max(1, int(-(-watch_s // chunk_s)))
    write = f"cat > {SAMPLER_PATH} <<'SAMPLER_EOF'\n{sampler_source()}SAMPLER_EOF"
    runs = [f"python3 {SAMPLER_PATH} {chunk_s:g} {'final' if i == n - 1 else 'more'}" for i in range(n)]
    return [write, *runs]


def chunk_s(command_timeout_s: float) -> float:
    """Seconds each sampling command runs: at most 15, and 3 s inside the runner's command timeout."""
    return max(2.0, min(15.0, command_timeout_s - 3.0))


def observer_agent(tasks: Iterable[Task], command_timeout_s: float) -> OracleAgent:
    """The scripted monitor on monitoring tasks (DONE at once elsewhere, as the floor); each sampling
    command runs `chunk_s(command_timeout_s)` seconds."""
    replies = [f"```bash\n{c}\n```" for c in observer_commands(chunk_s(command_timeout_s))]
    agent = OracleAgent({t.task_id: replies if t.spec.category == "monitor" else ["DONE"] for t in tasks})
    agent.name = OBSERVER
    return agent
