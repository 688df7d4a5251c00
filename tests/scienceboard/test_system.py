"""`iclr26 run scienceboard`: the smoke preset on the real apps prints the domain table with a valid
task set (oracle 100, null 0 in every domain) and the floors, resumes from cells.jsonl; the study's
arms, floors and claim; the floors' agents; the authors' task files are mapped with reasons; config
errors are named; task selection spreads over the kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from iclr26.agents import Episode, Observation, Step, read_episodes
from iclr26.core import RunContext
from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.core.ledger import read_cells
from iclr26.scienceboard.config import ScienceBoardConfig
from iclr26.scienceboard.env import GUI_PARSER
from iclr26.scienceboard.floors import RandomClicks, always_fail
from iclr26.scienceboard.gui_actions import parse_pyautogui
from iclr26.scienceboard.suite import write_suite
from iclr26.scienceboard.system import PRESETS, run, select_tasks, study
from iclr26.scienceboard.views import action_table
from tests.scienceboard.test_apps import DESKTOP

APPS = ("texstudio", "pymol", "kalgebra", "stellarium", "grass-core", "xterm", "tmux", "bubblewrap",
        "texlive-latex-base")  # fmt: skip


@pytest.mark.debian(*DESKTOP, *APPS)
def test_smoke_preset_validates_the_task_set_in_every_domain(tmp_path):
    report = run(PRESETS["smoke"], RunContext(out_dir=tmp_path))
    rows = {r[0]: r for r in report.tables[0].rows}
    oracle, null = rows["oracle (reference solution)"], rows["null (does nothing)"]
    assert oracle[1:7] == [100.0] * 6 and null[1:7] == [0.0] * 6  # five domains and overall
    assert rows["always-FAIL (floor)"][1:7] == [0.0] * 6  # smoke's tasks are direct: none infeasible
    assert rows["random clicks (floor)"][6] < 100.0
    assert any(n.startswith("task set: valid") for n in report.notes)
    startup = {r[0]: r for r in report.tables[1].rows}
    assert set(startup) == {"grass", "kalgebra", "pymol", "stellarium", "texstudio"}
    assert all(r[3] < 30 for r in startup.values()), startup  # bench: < 10 s; CI may be loaded
    checks = [json.loads(x) for x in (tmp_path / "checks.jsonl").read_text().splitlines()]
    assert len(checks) == 20 and all(c["checks"] for c in checks)
    standard = next(t for t in report.tables if t.title.startswith("scienceboard: every arm"))
    assert {r[0]: r[1] for r in standard.rows}["random_click"] == "floor (random clicks)"
    assert (
        len(read_cells(tmp_path / "cells.jsonl")) == 20 and report.claim_check is None
    )  # no model: no claim
    again = run(PRESETS["smoke"], RunContext(out_dir=tmp_path))  # every cell read back: no app starts
    assert (
        again.tables[0].rows == report.tables[0].rows
        and len(read_episodes(tmp_path / "episodes.jsonl")) == 20
    )


def test_the_study_names_its_arms_floors_and_claim_before_the_run():
    s = study(ScienceBoardConfig(per_domain=2, llm_domains=("gis",)))
    assert {a.name: a.role for a in s.arms} == {
        "oracle": "oracle", "null": "null", "always_fail": "floor", "random_click": "floor", "llm": "method",
    }  # fmt: skip
    [claim] = s.claims
    assert claim.method == "llm" and claim.baselines == ("always_fail", "random_click")
    assert claim.interval == "bootstrap" and claim.floor == 0.0 and s.pass_metric == "success"
    assert len(s.units) == 10
    cell = s.measure(s.arm("llm"), s.units[0], RunContext(out_dir=Path("/nonexistent")))
    assert cell == {}  # the model agent runs only its gis subset: an empty cell elsewhere
    assert not study(ScienceBoardConfig(agents=("oracle", "null", "llm"))).claims  # no floor: no claim
    demo = study(PRESETS["demo"])
    assert [u.key for u in demo.units] == ["kalgebra-direct-define", "grass-infeasible-satellite",
                                           "tex-direct-water"]  # fmt: skip
    with pytest.raises(UserError, match="task_ids: no built-here task no-such-task"):
        study(ScienceBoardConfig(task_ids=("no-such-task",)))


def test_the_floors_act_as_declared():
    fail = always_fail()
    fail.reset("t", "")
    assert fail.act(Observation("x")).text == "FAIL" and fail.name == "always-FAIL (floor)"
    clicks = RandomClicks(seed=0, clicks=3)
    replies = []
    for task in ("a", "a", "b"):
        clicks.reset(task, "")
        replies.append([clicks.act(Observation("x")).text for _ in range(4)])
    assert replies[0] == replies[1] != replies[2]  # seeded per task: the same clicks on a rerun
    assert replies[0][3] == "DONE" and all(GUI_PARSER.parse(r).kind == "code" for r in replies[0][:3])
    assert all(
        0 <= a.x < 1280 and 0 <= a.y < 800
        for r in replies[0][:3]
        for a in parse_pyautogui(GUI_PARSER.parse(r).content)
    )


def test_the_action_table_counts_what_the_model_did():
    def step(i, reply, action=None, **kw):
        return Step(i, "obs", reply, action, **kw)

    click = {"kind": "code", "content": "pyautogui.click(1, 1)", "language": "python"}
    eps = [
        Episode("t1", "llm", [step(0, "c", click), step(1, "c", click, info={"invalid_action": "off"})],
                stop_reason="max_steps"),
        Episode("t2", "llm", [step(0, "?", parse_error="no block")], stop_reason="max_steps"),
    ]  # fmt: skip
    rows = dict(action_table(eps).rows)
    assert (
        rows["turns"] == 3
        and rows["click calls"] == 2
        and rows["click calls at the commonest point (1, 1)"] == 2
    )
    assert rows["replies that did not parse"] == 1 and rows["actions that could not be carried out"] == 1
    assert rows["episodes ended by max_steps"] == 2


def test_the_authors_layout_is_mapped_with_reasons(tmp_path):
    root = write_suite(tmp_path / "tasks")
    lean = root / "VM" / "Lean"
    lean.mkdir()
    (lean / "A-01.json").write_text(
        json.dumps({"type": "Lean", "sort": "Raw", "steps": 5, "version": "0.1", "instruction": "prove",
                    "initialize": [], "evaluate": [{"type": "stop", "value": "DONE"}]})
    )  # fmt: skip
    report = run(ScienceBoardConfig(tasks=str(root)), RunContext(out_dir=tmp_path / "out"))
    rows = {r[0]: r for r in report.tables[0].rows}
    assert rows["all"][1:] == [39, 1] and rows["Lean"][1:] == [0, 1]
    assert "offline" in report.tables[1].rows[0][0]


def test_selection_spreads_over_kinds_and_bad_config_is_named():
    picked = select_tasks(ScienceBoardConfig(), 5, ("gis",))
    assert len(picked) == 5 and len({t.kind for t in picked}) == 5
    for bad, message in [
        ({"domains": ("lean",)}, "domains"),
        ({"agents": ("gpt",)}, "agents"),
        ({"observation": "video"}, "observation"),
        ({"llm_domains": ("algebra",), "domains": ("gis",)}, "llm_domains"),
        ({"pause_s": 9}, "pause_s"),
        ({"history_turns": 0}, "history_turns"),
        ({"task_timeout_s": 0}, "task_timeout_s"),
    ]:
        with pytest.raises(ConfigError, match=message):
            ScienceBoardConfig(**bad)


def test_the_textual_observation_needs_a_terminal_app(tmp_path):
    from iclr26.core.errors import UserError
    from iclr26.scienceboard.env import ScienceBoardEnv
    from iclr26.scienceboard.suite import built_tasks

    task = next(t for t in built_tasks() if t.task_id == "kalgebra-direct-define").task()
    with pytest.raises(UserError, match="textual observation is a terminal's text; kalgebra has no terminal"):
        ScienceBoardEnv(task, desktop=None, workdir=tmp_path, observation="textual")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="observation must be one of"):
        ScienceBoardEnv(task, desktop=None, workdir=tmp_path, observation="video")  # type: ignore[arg-type]
