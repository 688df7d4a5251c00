"""`iclr26 run devops_gym` as a study: the smoke preset end to end (suite written, oracle 100%, null 0%,
the floor's row, the category and standard tables), resuming from cells.jsonl, the claim against the
floor judged on constructed cells, config errors, and the Docker runner's availability."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from iclr26.agents import Episode
from iclr26.core import RunContext
from iclr26.core.config import ConfigError
from iclr26.core.ledger import CELLS_FILE, CellRecord, append_cell
from iclr26.core.runner import run_system
from iclr26.core.study import run_study
from iclr26.devops_gym import SYSTEM
from iclr26.devops_gym.config import DevOpsConfig
from iclr26.devops_gym.docker import docker_available
from iclr26.devops_gym.runner import TrialResult
from iclr26.devops_gym.system import PRESETS, run, select_tasks, study
from tests.devops_gym.conftest import DEBIAN

CATEGORIES = {"build", "monitor", "issue_resolving", "test_generation", "end_to_end"}


@pytest.mark.debian(*DEBIAN)
def test_smoke_preset_prints_the_category_table_and_resumes(tmp_path):
    record, run_dir = run_system(SYSTEM, "smoke", runs_root=tmp_path, jobs=2)
    report = record.report
    table, standard = report.tables
    rows = {r[0]: r for r in table.rows}
    oracle, null = rows["oracle (reference solution)"], rows["null (does nothing)"]
    assert oracle[1:7] == [100.0] * 6 and null[1:7] == [0.0] * 6 and oracle[7] == 5
    assert rows["constant (reports healthy)"][7] == 5  # the floor, in the system's table too
    assert any(n.startswith("suite valid: oracle 5/5, null 0/5") for n in report.notes)
    assert [r[:4] for r in standard.rows] == [
        ["constant", "floor (constant label)", 5, 0.0], ["oracle", "oracle", 5, 1.0], ["null", "null", 5, 0.0]
    ]  # fmt: skip
    ledger = (run_dir / CELLS_FILE).read_bytes()
    cells = [json.loads(line) for line in ledger.splitlines()]
    assert len(cells) == 15 and {c["metrics"]["category"] for c in cells} == CATEGORIES
    assert not (run_dir / "trials.jsonl").exists()  # the study's ledger is the only one
    again, _ = run_system(SYSTEM, "smoke", out=run_dir)  # every cell is read back, none rerun
    assert (run_dir / CELLS_FILE).read_bytes() == ledger
    assert again.report.tables[0].rows == table.rows


def _cell(cfg: DevOpsConfig, arm: str, task, resolved: int) -> CellRecord:
    """A finished cell as `_measure` records it, with the verdict given."""
    trial = TrialResult(task.task_id, task.spec.category, task.spec.difficulty, arm, bool(resolved),
                        "none", {}, 1, 0, 0, 0.1, 0.1, 0.1, "done", 0,
                        Episode(task.task_id, arm, stop_reason="done").to_json())  # fmt: skip
    metrics = {**dataclasses.asdict(trial), "resolved": resolved}
    return CellRecord(arm, task.task_id, metrics, cfg.seed, 0.1, None, [], study(cfg, []).config_hash())


@pytest.mark.parametrize(
    ("llm", "floor", "verdict"),
    [
        ({"*": 1}, {"*": 0}, "held"),  # the agent resolves what the floor cannot
        ({"*": 0}, {"*": 0}, "uninformative"),  # 0 vs 0: a model that resolves nothing says nothing
        ({"*": 0}, {"monitor": 1, "*": 0}, "within noise"),  # the floor's one healthy guess: 1 task of 5
        ({"monitor": 1, "build": 1, "*": 0}, {"monitor": 1, "*": 0}, "within noise"),  # one task of 5 apart
        ({"*": 0}, {"*": 1}, "did not hold"),  # below the floor on every task
    ],
)
def test_the_claim_against_the_floor_is_judged_from_the_ledger(suite, tmp_path, llm, floor, verdict):
    """The llm and floor cells written to the ledger beforehand: the run measures nothing (each cell is
    done) and judges the agent against the constant-label floor with the one rule."""
    cfg = dataclasses.replace(PRESETS["smoke"], agents=("constant", "llm"))
    tasks = select_tasks(cfg, suite)
    for arm, outcome in (("llm", llm), ("constant", floor)):
        for t in tasks:
            append_cell(tmp_path / CELLS_FILE, _cell(cfg, arm, t, outcome.get(t.spec.category, outcome["*"])))
    result = run_study(study(cfg, tasks), RunContext(out_dir=tmp_path))
    check = result.report.claim_check
    assert (check.method, check.baseline, check.n, check.verdict) == ("llm", "constant", 5, verdict)
    assert (tmp_path / "episodes.html").is_file()


def test_bad_config_values_are_named():
    with pytest.raises(ConfigError, match="categories"):
        DevOpsConfig(categories=("deploy",))
    with pytest.raises(ConfigError, match="agents"):
        DevOpsConfig(agents=("claude",))
    with pytest.raises(ConfigError, match="--jobs N"):  # the run's now, not the system's
        SYSTEM.config("smoke", {"jobs": "4"})


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


@pytest.mark.parametrize(("observer", "verdict"), [(1, "held"), (0, "within noise")])  # 0 vs the 2 of 8
def test_the_scripted_monitor_is_judged_against_the_floor(suite, tmp_path, observer, verdict):
    """The observer's cells on the monitoring tasks only (its other cells stay empty): paired with
    the floor over those, where the floor guesses the two healthy controls."""
    cfg = dataclasses.replace(PRESETS["smoke"], agents=("constant", "observer"), per_category=0,
                              categories=("monitor", "build"), languages=("go", "python"))  # fmt: skip
    tasks = select_tasks(cfg, suite)
    for t in tasks:
        floor = int(t.spec.category == "monitor" and t.path.name.startswith("healthy"))
        append_cell(tmp_path / CELLS_FILE, _cell(cfg, "constant", t, floor))
        if t.spec.category == "monitor":
            append_cell(tmp_path / CELLS_FILE, _cell(cfg, "observer", t, observer))
    result = run_study(study(cfg, tasks), RunContext(out_dir=tmp_path))
    check = result.report.claim_check
    assert (check.method, check.baseline, check.n, check.verdict) == ("observer", "constant", 8, verdict)


def test_the_observer_leaves_other_categories_empty_and_the_ladder_names_the_fix(suite, tmp_path):
    from iclr26.devops_gym.system import ARMS, NAMED_COMMAND, _measure

    cfg = DevOpsConfig(agents=("observer",), named_command=True)
    tasks = {t.task_id: t for t in select_tasks(cfg, suite)}
    build = next(t for t in tasks.values() if t.spec.category == "build")
    unit = study(cfg, [build]).units[0]
    assert _measure(cfg, tasks, set(), ARMS["observer"], unit, RunContext(out_dir=tmp_path)) == {}
    assert "bash solution.sh" in NAMED_COMMAND and "DONE" in NAMED_COMMAND
    with pytest.raises(ConfigError, match="named_command"):
        DevOpsConfig(named_command="yes")  # type: ignore[arg-type]


@pytest.mark.debian(*DEBIAN)
def test_the_ladder_rung_is_solved_by_following_its_instruction(suite):
    """An agent that runs the command the rung names resolves the task (a scripted follower, not a
    model); one that writes only a comment, as SmolLM2 does, does not."""
    import re

    from iclr26.devops_gym.evaluate import run_task
    from iclr26.devops_gym.runner import RunLimits
    from iclr26.devops_gym.system import named_command_task
    from iclr26.devops_gym.task import load_task
    from tests.devops_gym.conftest import ScriptAgent

    task = named_command_task(load_task(suite / "build" / "go-misconfigured-module"))
    command = re.search(r"run `([^`]+)`", task.spec.instruction).group(1)  # type: ignore[union-attr]
    limits = RunLimits(command_timeout_s=120.0, max_steps=3)
    assert run_task(task, ScriptAgent(command), limits, oracle=True).resolved
    assert not run_task(task, ScriptAgent("# run the script"), limits, oracle=True).resolved
