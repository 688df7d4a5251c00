"""`iclr26 run scienceboard`: the smoke preset on the real apps prints the domain table with a valid
task set (oracle 100, null 0 in every domain); the authors' task files are mapped with reasons;
config errors are named; task selection spreads over the kinds."""

from __future__ import annotations

import json

import pytest

from iclr26.core import RunContext
from iclr26.core.config import ConfigError
from iclr26.scienceboard.config import ScienceBoardConfig
from iclr26.scienceboard.suite import write_suite
from iclr26.scienceboard.system import PRESETS, run, select_tasks
from tests.scienceboard.test_apps import DESKTOP

APPS = ("texstudio", "pymol", "kalgebra", "stellarium", "grass-core", "xterm", "tmux", "bubblewrap",
        "texlive-latex-base")  # fmt: skip


@pytest.mark.debian(*DESKTOP, *APPS)
def test_smoke_preset_validates_the_task_set_in_every_domain(tmp_path):
    report = run(PRESETS["smoke"], RunContext(out_dir=tmp_path))
    rows = {r[0]: r for r in report.tables[0].rows}
    oracle, null = rows["oracle (reference solution)"], rows["null (does nothing)"]
    assert oracle[1:7] == [100.0] * 6 and null[1:7] == [0.0] * 6  # five domains and overall
    assert any(n.startswith("task set: valid") for n in report.notes)
    startup = {r[0]: r for r in report.tables[1].rows}
    assert set(startup) == {"grass", "kalgebra", "pymol", "stellarium", "texstudio"}
    assert all(r[3] < 30 for r in startup.values()), startup  # bench: < 10 s; CI may be loaded
    checks = [json.loads(x) for x in (tmp_path / "checks.jsonl").read_text().splitlines()]
    assert len(checks) == 10 and all(c["checks"] for c in checks)


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
