"""Grounding versus planning and the command action space (issue 60): the pointer noise moves only
pointer calls, seeded; the plan names elements, never points, and reads back; the grounding-only agent
clicks the centre of the element the tree names and leaves out one it cannot find; `command('text')`
is the only call of the command space, and the reference solutions re-expressed in it type what the
pixel ones type; the two studies pick their tasks and name their claims before the run; on real
KAlgebra and GRASS, the grounding agent and the command-space oracle pass and a wrong command fails."""

from __future__ import annotations

import random
import re

import pytest

from iclr26.agents import Budget, InvalidAction, Observation, OracleAgent, run_episode
from iclr26.core.config import ConfigError
from iclr26.core.errors import UserError
from iclr26.scienceboard.command_space import (
    COMMAND_APPS,
    command_events,
    command_prompt,
    parse_commands,
    reference_commands,
)
from iclr26.scienceboard.config import ScienceBoardConfig
from iclr26.scienceboard.desktop import Node
from iclr26.scienceboard.env import GUI_PARSER, ScienceBoardEnv
from iclr26.scienceboard.grounding import (
    TARGETS,
    GroundingAgent,
    NoisyOracleAgent,
    Target,
    find,
    jitter,
    parse_target,
    plan,
    pointer_actions,
)
from iclr26.scienceboard.gui_actions import parse_pyautogui
from iclr26.scienceboard.suite import built_tasks
from iclr26.scienceboard.system import study
from iclr26.scienceboard.task import APPS, map_task
from tests.scienceboard.test_apps import DESKTOP

BY_ID = {t.task_id: t for t in built_tasks()}
BLOCK = "```python\npyautogui.click(320, 450)\npyautogui.write('a := 42')\npyautogui.press('enter')\n```"
OBS = Observation("")


def _clicks(code: str) -> list[tuple[int, int]]:
    return [
        (e.x, e.y) for e in parse_pyautogui(code.strip("`").removeprefix("python\n")) if e.kind == "click"
    ]


def test_jitter_moves_only_pointer_calls_seeded_and_on_screen():
    assert jitter(BLOCK, 0, random.Random(1)) == BLOCK and jitter("DONE", 20, random.Random(1)) == "DONE"
    a, b = jitter(BLOCK, 10, random.Random(3)), jitter(BLOCK, 10, random.Random(3))
    assert a == b and _clicks(a) != [(320, 450)]
    assert "pyautogui.write('a := 42')" in a and "pyautogui.press('enter')" in a
    moved = [_clicks(jitter(BLOCK, 20, random.Random(s)))[0] for s in range(300)]
    dx = [x - 320 for x, _ in moved]
    assert 14 < (sum(d * d for d in dx) / len(dx)) ** 0.5 < 26  # σ of the moves is about 20 px
    corner = "```python\npyautogui.click(0, 799)\n```"
    for s in range(50):
        (x, y) = _clicks(jitter(corner, 50, random.Random(s)))[0]
        assert 0 <= x < 1280 and 0 <= y < 800


def test_noisy_oracle_repeats_per_task_and_differs_by_sigma():
    sol = {"t": [BLOCK, "DONE"]}
    one, two, other = NoisyOracleAgent(sol, 10, 0), NoisyOracleAgent(sol, 10, 0), NoisyOracleAgent(sol, 20, 0)
    for agent in (one, two, other):
        agent.reset("t", "")
    first = one.act(OBS).text
    assert first == two.act(OBS).text and first != other.act(OBS).text
    assert one.act(OBS).text == "DONE" and one.act(OBS).text == "DONE"


def test_pointer_actions_counts_only_clicks_and_moves():
    assert pointer_actions([BLOCK, "DONE"]) == 1
    assert pointer_actions(["ANSWER: 5"]) == 0
    assert pointer_actions(BY_ID["tex-direct-water"].oracle) == 2


def test_targets_read_back_and_bad_words_are_refused():
    for target in [t for per in TARGETS.values() for t in per.values()]:
        assert parse_target(target.describe()) == target
    with pytest.raises(ValueError, match="not an element description"):
        parse_target("the point (320, 450)")


def test_every_pointing_reference_solution_has_a_plan_without_points():
    for t in built_tasks():
        app = map_task(t.task()).app
        steps = plan(t.oracle, app)
        assert len(steps) == len(t.oracle)
        text = "\n".join(steps)
        assert not re.search(r"\d+, \d+", text), text  # elements are named, never located
        assert text.count("click the ") == pointer_actions(t.oracle)


def _node(role: str, name: str = "", box=(10, 20, 100, 40), states=("showing", "visible")) -> Node:
    return Node("app", 1, role, name, "", "", tuple(states), box)


def test_find_takes_the_first_showing_match_with_a_box():
    hidden = _node("text", box=(0, 0, 5, 5), states=("editable",))
    nobox = _node("text", box=None, states=("showing", "editable"))
    field = _node("text", box=(11, 435, 616, 32), states=("showing", "editable"))
    label = _node("text", "log", box=(0, 0, 9, 9))
    assert find([hidden, nobox, label, field], Target("text", editable=True)) is field
    assert find([label], Target("text", editable=True)) is None
    sky = _node("filler", "Stellarium 0.22.2", box=(0, 0, 1280, 800))
    assert find([sky], Target("filler", "Stellarium", prefix=True)) is sky
    assert find([sky], Target("filler", "Stellarium")) is None


def test_grounding_agent_clicks_the_found_centre_and_leaves_out_the_missing():
    field = _node("text", box=(11, 435, 616, 32), states=("showing", "editable"))
    steps = plan(BY_ID["kalgebra-direct-define"].oracle, "kalgebra")
    agent = GroundingAgent({"k": steps}, lambda: [field])
    agent.reset("k", "")
    first = agent.act(OBS).text
    assert _clicks(first) == [(11 + 308, 435 + 16)] and "write('a := 42')" in first
    assert (agent.found, agent.missed, agent.act(OBS).text) == (1, 0, "DONE")
    blind = GroundingAgent({"k": steps}, lambda: [])
    blind.reset("k", "")
    block = blind.act(OBS).text
    assert _clicks(block) == [] and "write('a := 42')" in block and (blind.found, blind.missed) == (0, 1)
    answers = GroundingAgent({"r": plan(BY_ID["pymol-reasoning-ala-atoms"].oracle, "pymol")}, lambda: [])
    answers.reset("r", "")
    assert answers.act(OBS).text == "ANSWER: 5"


def test_command_space_accepts_only_command_calls():
    assert parse_commands("command('a := 42')\ncommand(\"show spheres\")") == ["a := 42", "show spheres"]
    assert parse_commands("command(text='a := 42')") == ["a := 42"]
    for bad, why in [
        ("pyautogui.click(1, 2)", "only command"),
        ("command(x)", "one literal string"),
        ("command('a', 'b')", "only command"),
        ("command(text='a', name='b')", "only command"),
        ("command(cmd='a')", "only command"),
        ("command('')", "non-empty"),
        ("command('a\\nb')", "one non-empty line"),
        ("command('a'", "not valid Python"),
    ]:
        with pytest.raises(InvalidAction, match=why):
            parse_commands(bad)
    events = command_events("grass", "g.region res=50")
    assert [e.kind for e in events] == ["click", "type", "key", "sleep"] and events[
        1
    ].text == "g.region res=50"
    with pytest.raises(InvalidAction, match="no command input"):
        command_events("texstudio", "x")
    assert "KAlgebra" in command_prompt("KAlgebra", "the screen") and "command('text')" in command_prompt(
        "GrassGIS", "the screen"
    )


def test_reference_commands_type_what_the_pixel_solutions_type():
    for t in built_tasks():
        if APPS.get(t.spec["type"]) not in COMMAND_APPS:
            continue
        for pixel, command in zip(t.oracle, reference_commands(t.oracle), strict=True):
            if not pixel.startswith("```"):
                assert command == pixel
                continue
            typed = [e.text for e in parse_pyautogui(pixel[10:-3]) if e.kind == "type"]
            assert parse_commands(command[10:-3]) == typed and typed


def test_the_two_studies_pick_their_tasks_and_name_their_claims():
    g = study(ScienceBoardConfig(experiment="grounding", per_domain=3, noise_px=(5, 20)))
    assert {a.name: a.role for a in g.arms} == {
        "oracle": "oracle", "noise_5": "method", "noise_20": "method", "grounding": "method",
        "always_fail": "floor", "random_click": "floor",
    }  # fmt: skip
    assert len(g.units) == 15 and all(pointer_actions(BY_ID[u.key].oracle) for u in g.units)
    claims = {(c.method, c.baselines, c.higher_is_better) for c in g.claims}
    assert ("grounding", ("always_fail", "random_click"), True) in claims
    assert ("noise_20", ("oracle",), False) in claims
    c = study(ScienceBoardConfig(experiment="command", per_domain=0))
    assert {a.name: dict(a.params) for a in c.arms if a.name.startswith("llm")} == {
        "llm_command": {"action_space": "command"},
        "llm_command_task": {"action_space": "command", "observation": "task"},
        "llm_pixel": {},
    }
    assert {a.name for a in c.arms} >= {
        "oracle_command",
        "always_fail",
        "random_click",
    }
    kinds = {(APPS[BY_ID[u.key].spec["type"]], BY_ID[u.key].kind) for u in c.units}
    assert {app for app, _ in kinds} == set(COMMAND_APPS) and {k for _, k in kinds} == {
        "direct",
        "basic",
        "knowledge",
    }
    assert len(c.units) == 15
    assert [(x.method, x.baselines) for x in c.claims] == [
        ("llm_command", ("llm_pixel", "always_fail", "random_click")),
        ("llm_command_task", ("llm_pixel", "always_fail", "random_click")),
    ]


def test_bad_experiment_config_is_named(tmp_path):
    with pytest.raises(ConfigError, match="experiment"):
        ScienceBoardConfig(experiment="pixels")
    with pytest.raises(ConfigError, match="noise_px"):
        ScienceBoardConfig(noise_px=(5, 5))
    with pytest.raises(ConfigError, match="noise_px"):
        ScienceBoardConfig(noise_px=(0,))
    tex = BY_ID["tex-direct-water"].task()
    with pytest.raises(UserError, match="no command input"):
        ScienceBoardEnv(tex, None, tmp_path, action_space="command")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="action_space"):
        ScienceBoardEnv(tex, None, tmp_path, action_space="voice")  # type: ignore[arg-type]
    with pytest.raises(UserError, match="observation must be one of"):
        ScienceBoardEnv(tex, None, tmp_path, observation="tasks")  # type: ignore[arg-type]


@pytest.mark.debian(*DESKTOP, "kalgebra", "grass-core", "xterm", "tmux", "bubblewrap")
def test_grounding_agent_and_command_space_on_real_apps(tmp_path):
    from iclr26.scienceboard.desktop import Desktop

    with Desktop() as desk:

        def episode(task_id: str, agent, space: str = "pixel"):
            t = BY_ID[task_id]
            folder = tmp_path / f"{task_id}-{space}-{len(list(tmp_path.iterdir()))}"
            env = ScienceBoardEnv(t.task(), desk, folder, pause_s=0.3, action_space=space)
            return run_episode(task_id, env, agent, GUI_PARSER, Budget(max_steps=3)), env

        k = BY_ID["kalgebra-direct-define"]
        grounder = GroundingAgent({k.task_id: plan(k.oracle, "kalgebra")}, desk.nodes)
        ep, _ = episode(k.task_id, grounder)
        assert ep.success and (grounder.found, grounder.missed) == (1, 0)
        ep, _ = episode(k.task_id, OracleAgent({k.task_id: reference_commands(k.oracle)}), "command")
        assert ep.success
        wrong = OracleAgent({k.task_id: ["```python\ncommand('a := 41')\n```", "DONE"]})
        ep, env = episode(k.task_id, wrong, "command")
        assert not ep.success and any("41" in r.detail for r in env.results)
        pixel = OracleAgent({k.task_id: [BLOCK, "DONE"]})
        ep, env = episode(k.task_id, pixel, "command")  # a pyautogui block is refused in this space
        assert not ep.success and "only command" in str(ep.steps[0].info)
        bare = ScienceBoardEnv(k.task(), desk, tmp_path / "bare", observation="task")
        try:
            seen = bare.reset().text
        finally:
            bare.close()
        assert seen.startswith("Task: In KAlgebra") and "accessibility tree" not in seen and "\t" not in seen
        g = BY_ID["grass-direct-resolution"]
        ep, _ = episode(g.task_id, OracleAgent({g.task_id: reference_commands(g.oracle)}), "command")
        assert ep.success
