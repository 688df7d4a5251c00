"""The built-here task set: every task is a valid task file our environment runs, the kinds are all
present, the oracle's replies are in the action format, and the set round-trips through the
authors' file layout."""

from __future__ import annotations

from iclr26.scienceboard.env import GUI_PARSER
from iclr26.scienceboard.gui_actions import parse_pyautogui
from iclr26.scienceboard.suite import built_tasks, write_suite
from iclr26.scienceboard.task import load_tasks, map_task


def test_every_built_task_is_supported_and_its_oracle_parses(tmp_path):
    tasks = built_tasks()
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert {t.kind for t in tasks} >= {"direct", "knowledge", "reasoning", "infeasible"}
    for t in tasks:
        assert map_task(t.task()).supported, t.task_id
        for reply in t.oracle:
            action = GUI_PARSER.parse(reply)
            if action.kind == "code":
                assert parse_pyautogui(action.content)
    loaded = load_tasks(write_suite(tmp_path))
    assert sorted(x.instruction for x in loaded) == sorted(t.task().instruction for t in tasks)
