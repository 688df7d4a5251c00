"""GLoW, ReAct and Reflexion on a tiny pure-Python game with a scripted model (a test double, not an LLM)."""

import random
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from iclr26.core.llm.base import ChatModel, Completion
from iclr26.core.llm.usage import UsageMeter
from iclr26.glow import prompts as P
from iclr26.glow.agents import (
    GLoWConfig,
    GLoWPlayer,
    ReActConfig,
    ReActPlayer,
    ReflexionConfig,
    ReflexionPlayer,
    nearest_valid,
    normalise,
    send_command,
)
from iclr26.glow.env import BudgetExhausted, GameState

# -- a 4-room game: take the key (+5), unlock the cellar door (+5), open the chest in the vault (+10)

EXITS = {
    "hall": {"north": "kitchen", "east": "cellar"},
    "kitchen": {"south": "hall"},
    "cellar": {"west": "hall", "down": "vault"},
    "vault": {"up": "cellar"},
}


class FourRooms:
    """A deterministic fake of `TextGame`'s contract; max score 20, won by opening the chest."""

    name = "four-rooms"
    max_score = 20
    scored = True

    def __init__(self, budget: int | None = 60) -> None:
        self.step_budget = budget
        self.steps_used = 0
        self.resets = 0
        self._set(("hall", False, False, False), 0, 0, ())

    def _set(self, world: tuple, score: int, moves: int, actions: tuple) -> None:
        self.world, self.score, self.moves, self.actions = world, score, moves, actions

    def _describe(self) -> str:
        room, key, _, _ = self.world
        extra = {"kitchen": "" if key else " A brass key lies here.", "cellar": " A trapdoor leads down."}
        return f"You are in the {room}.{extra.get(room, '')}"

    @property
    def budget_left(self) -> int | None:
        return None if self.step_budget is None else self.step_budget - self.steps_used

    def reset(self) -> str:
        self.resets += 1
        self._set(("hall", False, False, False), 0, 0, ())
        return self._describe()

    def valid_actions(self) -> list[str]:
        room, key, unlocked, opened = self.world
        out = ["look", *EXITS[room]]
        if room == "kitchen" and not key:
            out.append("take key")
        if room == "cellar" and key and not unlocked:
            out.append("unlock door with key")
        if room == "vault" and not opened:
            out.append("open chest")
        return out

    def step(self, action: str) -> tuple[str, int, bool, dict]:
        if self.budget_left is not None and self.budget_left <= 0:
            raise BudgetExhausted("four-rooms: budget used up")
        self.steps_used += 1
        room, key, unlocked, opened = self.world
        reward, done, obs = 0, False, "Nothing happens."
        if action in EXITS[room] and not (action == "down" and not unlocked):
            room = EXITS[room][action]
            self.world = (room, key, unlocked, opened)
            obs = self._describe()
        elif action == "down":
            obs = "The trapdoor is locked."
        elif action == "take key" and room == "kitchen" and not key:
            key, reward, obs = True, 5, "Taken."
        elif action == "unlock door with key" and room == "cellar" and key and not unlocked:
            unlocked, reward, obs = True, 5, "The trapdoor unlocks."
        elif action == "open chest" and room == "vault" and not opened:
            opened, reward, done, obs = True, 10, True, "Gold! You have won."
        elif action == "look":
            obs = self._describe()
        self.world = (room, key, unlocked, opened)
        self.score += reward
        self.moves += 1
        self.actions = (*self.actions, action)
        return obs, reward, done, {"score": self.score, "moves": self.moves, "steps_used": self.steps_used}

    def get_state(self) -> GameState:
        return GameState(
            jericho=self.world,
            actions=self.actions,
            score=self.score,
            moves=self.moves,
            hash="|".join(map(str, self.world)),
            observation=self._describe(),
        )

    def set_state(self, state: GameState) -> None:
        self._set(state.jericho, state.score, state.moves, state.actions)

    def replay(self, actions: Sequence[str]) -> str:
        obs = self.reset()
        for a in actions:
            obs = self.step(a)[0]
        return obs


# -- a scripted ChatModel ---------------------------------------------------------------------


def kind_of(prompt: str) -> str:
    """Which template a prompt was made from."""
    if "Rate how well each candidate" in prompt:
        return "align"
    if "Name up to" in prompt:
        return "global"
    if "Compare these attempts" in prompt:
        return "reflect"
    if "what went wrong or was wasted" in prompt:
        return "reflexion"
    return "policy"


def solver(prompt: str) -> str:
    """A policy that knows the walkthrough, in the loose phrasings a small model uses."""
    seen = re.findall(r"You are in the (\w+)", prompt.split("Your recent moves")[-1])
    room = seen[-1] if seen else "hall"  # the last room described, in the history or now
    score = int(re.search(r"Score so far: (-?\d+)", prompt).group(1))
    plan = {
        0: {"hall": "go north", "kitchen": "Take the key."},
        5: {"kitchen": "s", "hall": "East", "cellar": "unlok door"},
        10: {"hall": "e", "cellar": "down", "vault": "**open the chest**"},
    }
    return f"Thought: keep going.\nAction: {plan.get(score, {}).get(room, 'look')}"


class ScriptedModel:
    """A test double of `ChatModel`: `reply(kind, prompt)` answers each call; it records the calls."""

    name = "scripted"
    supports_images = False
    supports_json_schema = False
    supports_logprobs = False

    def __init__(self, reply: Callable[[str, str], str], game: Any = None) -> None:
        self.reply, self.game = reply, game
        self.usage = UsageMeter()
        self.calls: list[tuple[str, str, int | None]] = []  # (kind, prompt, env steps used at the call)

    def chat(self, messages: Sequence[Any], **kwargs: Any) -> list[Completion]:
        prompt = messages[-1]["content"]
        kind = kind_of(prompt)
        self.calls.append((kind, prompt, None if self.game is None else self.game.steps_used))
        text = self.reply(kind, prompt)
        self.usage.record(len(prompt.split()), len(text.split()))
        return [Completion(text)]

    def stream(self, messages: Sequence[Any], **kwargs: Any) -> Any:
        raise NotImplementedError

    def kinds(self) -> list[str]:
        return [k for k, _, _ in self.calls]


def memory_replies(kind: str, prompt: str) -> str:
    """Readable g_LLM, align_LLM and f_LLM answers; the solver for the policy."""
    if kind == "global":
        return '{"state": "in the cellar with the key", "value": 10, "potential": 20}\n{"state": "kitchen"}'
    if kind == "align":
        n = len(re.findall(r"^\d+\. score", prompt, re.M))
        return "\n".join(f"{i}: {i % 7}" for i in range(1, n + 1))
    if kind == "reflect":
        return (
            '{"state": "in the kitchen", "advantage": "take the key at once (+5)"}\n'
            '{"state": "in the cellar", "advantage": "unlock the trapdoor"}'
        )
    if kind == "reflexion":
        return "Get the key from the kitchen first, then go east and unlock the trapdoor."
    return solver(prompt)


def glow_run(budget: int = 60, **changes: Any) -> tuple[Any, ScriptedModel, FourRooms]:
    """GLoW on FourRooms; `remap` on unless changed (the solver says "unlok door")."""
    game = FourRooms(budget)
    model = ScriptedModel(memory_replies, game)
    config = GLoWConfig(rollout_steps=8, **{"remap": True, **changes})
    result = GLoWPlayer(model, config).run(game, np.random.default_rng(0))
    return result, model, game


# -- the soft constraint ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("generated", "valid", "expected"),
    [
        ("Take the key.", ["north", "take key"], ("take key", False)),
        ("n", ["south", "north"], ("north", False)),
        ("go east", ["east", "west"], ("east", False)),
        ("unlok door", ["north", "unlock door with key", "look"], ("unlock door with key", True)),
        ("grab key", ["north", "take key", "open chest"], ("take key", True)),
        ("xyzzy", [], ("xyzzy", False)),
    ],
)
def test_nearest_valid(generated, valid, expected):
    assert nearest_valid(generated, valid) == expected


def test_normalise():
    assert normalise("  Open THE chest!! ") == "open chest"
    assert normalise("walk NE") == "northeast"
    assert normalise("go to the hall") == "go to hall"


def test_nearest_valid_breaks_ties_by_list_order():
    assert nearest_valid("zz", ["ab", "cd"]) == ("ab", True)


@pytest.mark.parametrize(
    ("generated", "remap", "expected"),
    [
        ("Take the key.", False, ("take key", False)),  # equal after normalise: the valid spelling
        ("Take the key.", True, ("take key", False)),
        ("unlok door", False, ("unlok door", True)),  # off the list: sent as generated
        ("unlok door", True, ("unlock door with key", True)),  # off the list: remapped
        ("dance\n wildly", False, ("dance wildly", True)),  # one line
    ],
)
def test_send_command_remaps_only_when_asked(generated, remap, expected):
    assert send_command(generated, ["north", "unlock door with key", "take key"], remap) == expected


def test_send_command_without_a_valid_list_keeps_the_command():
    assert send_command("xyzzy", [], False) == ("xyzzy", False)
    assert send_command("xyzzy", [], True) == ("xyzzy", False)


def test_glow_without_remap_sends_the_typo_and_stalls_at_the_key():
    # the paper's soft constraint (the default): "unlok door" goes to the game, which does nothing
    result, _, _ = glow_run(budget=60, remap=False)
    assert GLoWConfig().remap is False and ReActConfig().remap is False
    assert result.max_score == 5 and result.remapped > 0
    sent = [e for e in result.transcript if e["kind"] == "step" and e["action"] == "unlok door"]
    assert sent and all(e["generated"] is None and e["reward"] == 0 for e in sent)


# -- parsers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("Thought: the key matters.\nAction: **take key**", "take key"),
        ("> Action: 'go north'.", "go north"),
        ("- action 1: open chest\nObservation: ...\nAction: look", "open chest"),
        ("north", "north"),
        ("`open mailbox`", "open mailbox"),
        ("Command = <unlock door with key>", "unlock door with key"),
    ],
)
def test_parse_action(reply, action):
    assert P.parse_action(reply) == P.ParseResult(action)


@pytest.mark.parametrize(
    "reply",
    ["", "I think we should look around the room first, because it is dark.", "Action:  ", "what now?"],
)
def test_parse_action_failure_is_a_message(reply):
    res = P.parse_action(reply)
    assert not res.ok and res.value is None and "Action: <command>" in (res.error or "")


def test_parse_global_and_scores_and_reflection():
    g = P.parse_global(
        "Sure!\n{'state': 'cellar', 'value': 10, 'potential': '25 points'}\n{\"state\": \"hall\"}"
    )
    assert g.ok and g.value == [P.CriticalState("cellar", 10, 25), P.CriticalState("hall", 0, 0)]
    assert not P.parse_global("the cellar looks good").ok
    s = P.parse_scores("1: 3\n**2** - 8/10\ncandidate 4 = 1.5\n9: 7", n=4)
    assert s.value == [3, 8, 0, 1.5]
    assert not P.parse_scores("all look fine", n=3).ok
    r = P.parse_reflection('{"state": "kitchen", "advantage": "take key"}\n{"state": "x"}')
    assert r.value == [P.Insight("kitchen", "take key")]
    lines = P.parse_reflection("1. at the door: unlock it first\n2. in the vault -> open the chest")
    assert lines.value == [
        P.Insight("at the door", "unlock it first"),
        P.Insight("in the vault", "open the chest"),
    ]
    assert len(P.parse_reflection("\n".join(f"- s{i}: a{i}" for i in range(9))).value or []) == 4
    assert not P.parse_reflection("nothing to say").ok
    assert P.parse_plan("  go   east ").value == "go east" and not P.parse_plan("  ").ok


def test_templates_format_cleanly():
    filled = [
        P.POLICY_PROMPT.format(memory="", score=0, history="-", observation="-", valid_actions="-"),
        P.REACT_PROMPT.format(memory="", score=0, history="-", observation="-", valid_actions="-"),
        P.GLOBAL_PROMPT.format(frontier="-", n=3),
        P.GLOBAL_FROM_ARCHIVE_PROMPT.format(states="-", n=3),
        P.ALIGN_PROMPT.format(global_memory="-", candidates="-"),
        P.REFLECT_PROMPT.format(frontier="", rollouts="-"),
        P.REFLEXION_PROMPT.format(episode="-", score=0, best=0),
    ]
    for text in filled:
        assert "{" not in text.replace('{"state"', "") and not text.startswith("\n")


# -- GLoW -------------------------------------------------------------------------------------


def test_glow_reaches_the_max_score_within_the_budget():
    result, model, game = glow_run(budget=60)
    assert result.max_score == game.max_score == 20 and result.normalised_score == 1.0
    assert game.steps_used == result.steps_used == 60 and result.stop_reason == "budget"
    steps = [s for s, _ in result.curve]
    assert steps == sorted(steps) and steps[-1] <= 60 and result.curve[0] == (0, 0)
    assert [b for _, b in result.curve] == sorted(b for _, b in result.curve)
    assert result.actions == 60 and len(result.curve) == 61
    assert result.llm_calls == len(model.calls) == sum(result.calls.values())
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    assert result.remapped > 0  # "unlok door" was mapped to "unlock door with key"
    kinds = {e["kind"] for e in result.transcript}
    assert {"restore", "step", "reflection", "w_global", "rollout", "end"} <= kinds
    assert all(e["reason"] for e in result.transcript if e["kind"] == "restore")


def test_glow_restores_by_replay_too():
    result, _, game = glow_run(budget=40, restore="replay")
    assert game.steps_used <= 40 and result.max_score == 20 and game.resets > 1


def test_glow_mar_reflects_between_rollouts_only():
    result, model, _ = glow_run(budget=60)
    restores = sum(e["kind"] == "restore" for e in result.transcript)
    assert 0 < result.calls["reflect"] <= restores * (GLoWConfig().n_rollouts - 1)
    policy = [p for k, p, _ in model.calls if k == "policy"]
    assert any("Lessons from those attempts" in p and "take the key at once" in p for p in policy)
    assert any("Earlier attempts from this same starting point" in p for p in policy)


def test_without_mar_there_is_no_reflection():
    result, model, _ = glow_run(budget=60, mar=False)
    assert "reflect" not in result.calls and result.calls["policy"] > 0
    policy = [p for k, p, _ in model.calls if k == "policy"]
    assert not any("Lessons from" in p or "Earlier attempts" in p for p in policy)
    assert not any(e["kind"] == "reflection" for e in result.transcript)


def test_without_global_memory_selection_is_uniform():
    result, _, _ = glow_run(budget=60, global_memory=False)
    assert "global" not in result.calls and "align" not in result.calls
    reasons = [e["reason"] for e in result.transcript if e["kind"] == "restore"]
    assert len(reasons) > 2 and all("uniform" in r or "start state" in r for r in reasons)


def test_without_frontier_no_prompt_shows_it():
    _, model, _ = glow_run(budget=60, frontier=False)
    assert not any("The best play found so far" in p for _, p, _ in model.calls)
    glob = [p for k, p, _ in model.calls if k == "global"]
    assert glob and all("states reached so far" in p for p in glob)
    _, model_f, _ = glow_run(budget=60)
    assert any("The best play found so far" in p for _, p, _ in model_f.calls)


def test_without_all_three_only_the_policy_is_called():
    result, _, game = glow_run(budget=50, mar=False, global_memory=False, frontier=False)
    assert set(result.calls) == {"policy"} and game.steps_used == 50
    assert GLoWPlayer(ScriptedModel(memory_replies), GLoWConfig(mar=False)).name == "glow-mar"


def test_global_selection_restores_the_argmax_of_align():
    def replies(kind: str, prompt: str) -> str:
        if kind == "align":  # prefer the highest-scoring candidate listed
            scores = [int(s) for s in re.findall(r"^\d+\. score (\d+)", prompt, re.M)]
            return "\n".join(f"{i}: {s}" for i, s in enumerate(scores, 1))
        return memory_replies(kind, prompt)

    game = FourRooms(40)
    result = GLoWPlayer(ScriptedModel(replies, game), GLoWConfig(rollout_steps=4, remap=True)).run(
        game, random.Random(0)
    )
    restores = [e for e in result.transcript if e["kind"] == "restore"]
    assert restores[0]["score"] == 0 and "start state" in restores[0]["reason"]
    assert any("align_LLM rated it" in e["reason"] and e["score"] >= 5 for e in restores[1:])


def test_a_reply_without_an_action_becomes_the_next_observation():
    def replies(kind: str, prompt: str) -> str:
        if kind == "policy" and "Score so far: 0" in prompt and P.NO_ACTION not in prompt:
            return "Let me think about where the treasure might be hidden in this house."
        return memory_replies(kind, prompt)

    game = FourRooms(20)
    model = ScriptedModel(replies, game)
    result = GLoWPlayer(model, GLoWConfig(rollout_steps=6, remap=True)).run(game, random.Random(0))
    (first, second) = [(p, used) for k, p, used in model.calls if k == "policy"][:2]
    assert first[1] == second[1] == 0  # no env step between the two calls
    assert P.NO_ACTION in second[0] and "You are in the hall" in second[0]
    assert result.parse_failures >= 1 and result.failures["policy"] >= 1
    errors = [e for e in result.transcript if e["kind"] == "parse_error"]
    assert errors[0]["error"] == P.NO_ACTION and errors[0]["steps_used"] == 0
    assert result.max_score == 20


def test_unreadable_memory_replies_fall_back_without_stepping():
    game = FourRooms(40)
    model = ScriptedModel(lambda k, p: solver(p) if k == "policy" else "no idea, sorry", game)
    result = GLoWPlayer(model, GLoWConfig(rollout_steps=5, remap=True)).run(game, random.Random(1))
    assert result.failures.get("global", 0) >= 1 and result.failures.get("reflect", 0) >= 1
    assert game.steps_used == 40 and result.max_score == 20


def test_a_model_that_never_answers_stops_without_spending_steps():
    game = FourRooms(30)
    model = ScriptedModel(lambda k, p: "Hmm, that is a really interesting question to think about.", game)
    result = GLoWPlayer(model, GLoWConfig(rollout_steps=2, n_rollouts=1, remap=True)).run(
        game, random.Random(0)
    )
    assert result.stop_reason == "no_progress" and game.steps_used == 0 and result.curve == [(0, 0)]
    assert result.calls["policy"] == 2 * GLoWConfig().max_idle_iterations


def test_glow_needs_a_budget_and_checks_its_config():
    with pytest.raises(ValueError, match="no env-step budget"):
        GLoWPlayer(ScriptedModel(memory_replies)).run(FourRooms(None))
    with pytest.raises(ValueError, match=r"GLoWConfig\.n_rollouts"):
        GLoWConfig(n_rollouts=0)
    with pytest.raises(ValueError, match=r"GLoWConfig\.restore"):
        GLoWConfig(restore="teleport")  # type: ignore[arg-type]
    assert isinstance(ScriptedModel(memory_replies), ChatModel)


def test_run_result_as_dict():
    result, _, _ = glow_run(budget=20)
    d = result.as_dict()
    assert "transcript" not in d and d["curve"][0] == [0, 0] and d["max_score"] == result.max_score
    assert "transcript" in result.as_dict(transcript=True)


# -- ReAct and Reflexion ----------------------------------------------------------------------


def test_react_plays_episodes_at_the_same_budget():
    game = FourRooms(30)
    model = ScriptedModel(memory_replies, game)
    result = ReActPlayer(model, ReActConfig(episode_steps=8, remap=True)).run(game, random.Random(0))
    assert game.steps_used == 30 and set(result.calls) == {"policy"} and result.max_score == 20
    assert game.resets >= 3 and "Thought:" in model.calls[0][1]
    assert result.agent == "react"


def test_reflexion_reflects_between_episodes_and_reads_it_back():
    game = FourRooms(30)
    model = ScriptedModel(memory_replies, game)
    agent = ReflexionPlayer(model, ReflexionConfig(episode_steps=4))
    result = agent.run(game, random.Random(0))
    episodes = game.resets
    assert result.calls["reflexion"] == episodes - 1  # not after the last, cut-off episode
    assert agent.reflections and any(e["kind"] == "reflection" for e in result.transcript)
    policy = [p for k, p, _ in model.calls if k == "policy"]
    assert "Notes you wrote" not in policy[0] and "Get the key from the kitchen" in policy[-1]


def test_reflexion_config_checks_and_inherits_help():
    from iclr26.core.config import field_help

    with pytest.raises(ValueError, match=r"ReflexionConfig\.episode_steps"):
        ReflexionConfig(episode_steps=0)
    for cls in (GLoWConfig, ReActConfig, ReflexionConfig):
        assert all(field_help(cls).values()), cls


# -- on a generated TextWorld game, when the shared fixture exists -----------------------------


def test_glow_on_a_generated_textworld_game(request):
    try:
        path = request.getfixturevalue("tw_game")
    except pytest.FixtureLookupError:
        pytest.skip("the tw_game fixture (tests/glow/conftest.py) is not available")
    from iclr26.glow.env import TextGame

    with TextGame(path, step_budget=12) as game:

        def replies(kind: str, prompt: str) -> str:
            if kind == "policy":  # the first listed valid action
                listed = prompt.split("Commands the game understands here: ")[-1].split("\n")[0]
                return f"Action: {listed.split(', ')[0]}"
            return memory_replies(kind, prompt)

        result = GLoWPlayer(ScriptedModel(replies, game), GLoWConfig(rollout_steps=4, remap=True)).run(
            game, random.Random(0)
        )
        assert game.steps_used == result.steps_used <= 12 and result.curve[-1][0] <= 12
