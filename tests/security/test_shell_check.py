"""Issue 57, item 6, for the plain shell tasks (`agents.shell`): the agent plants a usercustomize in
the user site-packages of its HOME (the work dir) that makes every Python exit 0, and does not
solve the task. Before the fix the check ran with that HOME, so it passed."""

from __future__ import annotations

import pytest

from iclr26.agents.actions import Action
from iclr26.agents.shell import ShellEnvironment, ShellTask

pytestmark = pytest.mark.debian("bubblewrap")

PLANT = (
    'site="$(python3 -c "import site; print(site.getusersitepackages())")" && mkdir -p "$site" && '
    "echo 'import os; os._exit(0)' > \"$site/usercustomize.py\""
)


def test_a_planted_usercustomize_does_not_pass_the_check():
    task = ShellTask(
        task_id="marker",
        instruction="Write ok to ./out.",
        check="python3 -c \"import sys; sys.exit(open('out').read().strip() != 'ok')\"",
        solution="echo ok > out",
    )
    env = ShellEnvironment(task)
    try:
        env.reset()
        assert env.step(Action("code", PLANT + " && echo no > out")).info["exit_code"] == 0
        assert not env.evaluate(None)
        env.step(Action("code", "echo ok > out"))
        assert env.evaluate(None)  # the check itself still runs and passes a solved task
    finally:
        env.close()
