"""`iclr26 run devops_gym`: the smoke preset end to end (suite written, oracle 100%, null 0%, the
category table), resuming from trials.jsonl, config errors, and the Docker runner's availability."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr26.core import RunContext
from iclr26.core.config import ConfigError
from iclr26.devops_gym.config import DevOpsConfig
from iclr26.devops_gym.docker import docker_available
from iclr26.devops_gym.system import PRESETS, run
from tests.devops_gym.conftest import DEBIAN


@pytest.mark.debian(*DEBIAN)
def test_smoke_preset_prints_the_category_table_and_resumes(tmp_path):
    cfg = PRESETS["smoke"]
    report = run(cfg, RunContext(out_dir=tmp_path))
    table = report.tables[0]
    rows = {r[0]: r for r in table.rows}
    oracle, null = rows["oracle (reference solution)"], rows["null (does nothing)"]
    assert oracle[1:7] == [100.0] * 6 and null[1:7] == [0.0] * 6 and oracle[7] == 5
    assert any(n.startswith("suite valid: oracle 5/5, null 0/5") for n in report.notes)
    trials = (tmp_path / "trials.jsonl").read_text().splitlines()
    assert len(trials) == 10 and {json.loads(t)["category"] for t in trials} == {
        "build", "monitor", "issue_resolving", "test_generation", "end_to_end"
    }  # fmt: skip
    again = run(cfg, RunContext(out_dir=tmp_path))  # every trial is read back, none rerun
    assert len((tmp_path / "trials.jsonl").read_text().splitlines()) == 10
    assert again.tables[0].rows == table.rows


def test_bad_config_values_are_named():
    with pytest.raises(ConfigError, match="categories"):
        DevOpsConfig(categories=("deploy",))
    with pytest.raises(ConfigError, match="agents"):
        DevOpsConfig(agents=("claude",))
    with pytest.raises(ValueError, match="jobs"):
        DevOpsConfig(jobs=0)


def test_a_task_folder_that_does_not_exist_is_named(tmp_path):
    from iclr26.core.errors import UserError

    with pytest.raises(UserError, match="does not exist"):
        run(DevOpsConfig(tasks=str(tmp_path / "nowhere"), agents=("null",)), RunContext(out_dir=tmp_path))


def test_runner_docker_without_an_engine_says_why(tmp_path):
    from iclr26.core.errors import UserError

    if docker_available()[0]:
        pytest.skip("a Docker engine is present")
    with pytest.raises(UserError, match="runner=docker needs a Docker engine"):
        run(DevOpsConfig(runner="docker", agents=("null",)), RunContext(out_dir=tmp_path))


def test_a_dockerfile_only_task_gets_terminal_benchs_one_service_compose_file(suite):
    from iclr26.devops_gym.docker import CLIENT, DockerEnvironment
    from iclr26.devops_gym.task import load_task

    task = load_task(suite / "build" / "go-compilation-error")
    env = DockerEnvironment(task)
    command = env._compose()
    compose = Path(command[-1]).read_text()
    env.down()
    assert command[-2] == "-f" and f"{CLIENT}:" in compose and str(task.path) in compose
    assert (task.path / "Dockerfile").read_text().startswith("FROM golang:1.19")
