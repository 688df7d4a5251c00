"""The scripted monitor names each anomaly from /proc alone, and says healthy for the control; its
thresholds decide (a changed threshold changes the label)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from iclr26.devops_gym.observer import OBSERVER, chunk_s, observer_agent, observer_commands, sampler_source
from iclr26.devops_gym.suite.monitor import LABELS, REPORT, server_source


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    """Every mode's service with its fault from 1 s, and the sampler beside each for up to 9 s."""
    servers, samplers = {}, {}
    for mode in LABELS:
        root = tmp_path_factory.mktemp(mode)
        (root / "server.py").write_text(server_source(mode, fault_at=1.0))
        env = {**os.environ, "ICLR26_FAULT_AT": "1.0"}
        servers[mode] = (root, subprocess.Popen([sys.executable, "server.py"], cwd=root, env=env))
    try:
        for root, _ in servers.values():
            for _ in range(200):
                if (root / "var" / "app.pid").exists():
                    break
                time.sleep(0.05)
        for mode, (root, _) in servers.items():
            # each sampler keeps its samples in its own folder (in the sandbox, /tmp is private)
            source = sampler_source().replace("/tmp/observer-samples.json", str(root / "samples.json"))
            (root / "observer.py").write_text(source)
            samplers[mode] = subprocess.Popen([sys.executable, "observer.py", "9", "final"], cwd=root)
        for p in samplers.values():
            p.wait(timeout=60)
    finally:
        for _, p in servers.values():
            p.kill()
            p.wait()
    return {m: (r / REPORT).read_text().strip() for m, (r, _) in servers.items()}


@pytest.mark.parametrize("mode", LABELS)
def test_the_observer_names_the_mode(labels, mode):
    assert labels[mode] == mode


def test_the_commands_watch_past_the_latest_onset():
    commands = observer_commands(15.0)
    assert commands[0].startswith("cat > /tmp/observer.py")
    assert len(commands) == 1 + 3 and commands[-1].endswith(" final")
    assert all(c.endswith(" more") for c in commands[1:-1])
    with pytest.raises(ValueError, match="chunk_s"):
        observer_commands(1.0)
    assert chunk_s(20.0) == 15.0 and chunk_s(120.0) == 15.0 and chunk_s(10.0) == 7.0  # inside the timeout


def test_the_observer_is_named_as_scripted(suite):
    from iclr26.devops_gym.task import load_tasks

    tasks = load_tasks(suite)
    agent = observer_agent(tasks, command_timeout_s=20.0)
    assert "scripted" in agent.name and agent.name == OBSERVER
    agent.reset("build/go-compilation-error", "")
    assert agent.act(None).text == "DONE"  # type: ignore[arg-type]
