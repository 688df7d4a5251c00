"""The non-LLM exploration baselines: random over valid actions, and Go-Explore without an LLM."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.glow.env import BudgetExhausted, GameState
from iclr26.glow.explore import BaselineResult, go_explore, random_agent
from iclr26.glow.memory import Archive

ROOMS = ("hall", "cellar", "gallery", "vault")


class CorridorGame:
    """A deterministic pure-Python stand-in for `TextGame`: rooms in a row, a coin in the last one.

    The only way to score is `go east` × (length − 1), then `take coin` (score 1, game over); `look`,
    `wait`, `examine wall` and `go west` are distractors. `budget` env steps can be taken in all
    (resets and restores are free), after which `step` raises `BudgetExhausted`.
    """

    scored = True
    max_score = 1

    def __init__(self, length: int = 4, budget: int | None = None) -> None:
        self.name = f"corridor{length}"
        self.length = length
        self.budget = budget
        self.steps_used = 0
        self._set(0, False, 0, ())

    def _set(self, room: int, coin: bool, moves: int, history: tuple[str, ...]) -> None:
        self.room, self.coin, self.moves, self.history = room, coin, moves, history

    @property
    def score(self) -> int:
        return int(self.coin)

    @property
    def budget_left(self) -> int | None:
        return None if self.budget is None else max(self.budget - self.steps_used, 0)

    def _describe(self) -> str:
        exits = [d for d, ok in (("east", self.room < self.length - 1), ("west", self.room > 0)) if ok]
        coin = " A gold coin glints on the floor." if self.room == self.length - 1 and not self.coin else ""
        return f"-= {ROOMS[self.room % len(ROOMS)].title()} {self.room} =- Exits: {', '.join(exits)}.{coin}"

    def reset(self) -> str:
        self._set(0, False, 0, ())
        return "Welcome to the corridor! " + self._describe()

    def valid_actions(self) -> list[str]:
        acts = ["look", "wait", "examine wall"]
        if self.room < self.length - 1:
            acts.append("go east")
        if self.room > 0:
            acts.append("go west")
        if self.room == self.length - 1 and not self.coin:
            acts.append("take coin")
        return sorted(acts)

    def step(self, action: str) -> tuple[str, int, bool, dict]:
        if self.budget is not None and self.steps_used >= self.budget:
            raise BudgetExhausted(f"budget of {self.budget} env steps spent")
        self.steps_used += 1
        before, reward, done = self.score, 0, False
        if action == "go east" and self.room < self.length - 1:
            self.room += 1
            obs = self._describe()
        elif action == "go west" and self.room > 0:
            self.room -= 1
            obs = self._describe()
        elif action == "take coin" and self.room == self.length - 1 and not self.coin:
            self.coin, done = True, True
            obs = "You take the coin. *** The End ***"
        elif action == "look":
            obs = self._describe()
        else:
            obs = "Nothing happens."
        reward = self.score - before
        self.moves += 1
        self.history += (action,)
        return obs, reward, done, {"score": self.score, "moves": self.moves, "steps_used": self.steps_used}

    def get_state(self) -> GameState:
        return GameState(
            jericho=(self.room, self.coin, self.moves),
            actions=self.history,
            score=self.score,
            moves=self.moves,
            hash=f"{self.room}:{int(self.coin)}",
        )

    def set_state(self, state: GameState) -> None:
        room, coin, moves = state.jericho
        self._set(room, coin, moves, state.actions)

    def replay(self, actions) -> str:
        obs = self.reset()
        for a in actions:
            obs = self.step(a)[0]
        return obs


def _check_curve(result: BaselineResult, budget: int) -> None:
    assert result.steps_used <= budget
    assert [s for s, _ in result.curve] == list(range(1, result.steps_used + 1))  # one point per step
    bests = [b for _, b in result.curve]
    assert bests == sorted(bests), "best-so-far never decreases"


@pytest.mark.parametrize("agent", ["random", "go_explore"])
@pytest.mark.parametrize("budget", [0, 1, 57])
def test_budget_never_exceeded_and_one_curve_point_per_step(agent, budget):
    game = CorridorGame(budget=10_000)
    if agent == "random":
        result = random_agent(game, budget, np.random.default_rng(0), episode_steps=7)
    else:
        result = go_explore(game, budget, np.random.default_rng(0), explore_steps=5)
    _check_curve(result, budget)
    assert result.steps_used == budget == game.steps_used
    assert result.agent == agent and result.game == "corridor4" and result.game_max_score == 1


@pytest.mark.parametrize("agent", [random_agent, go_explore])
def test_the_games_own_budget_stops_the_agent(agent):
    game = CorridorGame(budget=23)  # tighter than the agent's budget: the wrapper's budget wins
    result = agent(game, 100, 0)
    _check_curve(result, 23)
    assert result.steps_used == 23 == game.steps_used


def test_random_agent_resets_every_episode_and_is_seeded():
    game = CorridorGame(length=6)
    result = random_agent(game, 40, 3, episode_steps=4)
    assert result.details["episodes"] == 10  # 40 steps / 4 per episode (the coin needs 6)
    assert result.max_score == 0
    again = random_agent(CorridorGame(length=6), 40, 3, episode_steps=4)
    assert again.curve == result.curve


def test_go_explore_finds_the_coin_within_a_small_budget():
    for seed in range(5):
        result = go_explore(CorridorGame(), 150, np.random.default_rng(seed), explore_steps=3)
        assert result.max_score == 1, f"seed {seed}"
        # the random agent, with episodes too short to reach the coin from the start, cannot
        assert random_agent(CorridorGame(), 150, seed, episode_steps=3).max_score == 0
    assert result.details["cells"] == 4  # one cell per room (the coin state is terminal)


def test_go_explore_is_seeded():
    a = go_explore(CorridorGame(length=8), 80, 11, explore_steps=4)
    b = go_explore(CorridorGame(length=8), 80, 11, explore_steps=4)
    assert a.curve == b.curve and a.details == b.details


class WatchedArchive(Archive):
    """Checks, at every add, that the archive grows only with novel cells."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = self.grew = self.replaced = 0

    def add(self, state: GameState, score: int, steps: int) -> bool:
        self.calls += 1
        old = self.cell(state.hash)
        size = len(self)
        novel = super().add(state, score, steps)
        if old is None:
            assert novel and len(self) == size + 1
            self.grew += 1
        else:
            better = score > old.score or (score == old.score and steps < old.steps)
            assert novel == better and len(self) == size
            assert self.cell(state.hash).steps == (steps if better else old.steps)
            self.replaced += novel
        return novel


def test_go_explore_archive_grows_only_with_novel_cells():
    archive = WatchedArchive()
    result = go_explore(CorridorGame(length=8), 300, 5, explore_steps=6, archive=archive)
    assert archive.calls > len(archive)  # most visited states were already archived
    assert len(archive) == archive.grew == result.details["cells"] == 8
    assert result.details["cells_added"] == archive.grew + archive.replaced
    # each room's cell holds its shortest route found: room r is r steps from the start at best
    assert all(c.steps >= int(h.split(":")[0]) for h, c in ((c.key, c) for c in archive.cells()))


def test_archive_novelty_rule():
    game = CorridorGame()
    game.reset()
    start = game.get_state()
    archive = Archive()
    assert archive.add(start, 0, 5)
    assert not archive.add(start, 0, 5)  # same hash, same score, not shorter
    assert not archive.add(start, 0, 9)  # longer
    assert archive.add(start, 0, 2)  # shorter
    assert archive.cell(start.hash).steps == 2
    assert archive.add(start, 1, 7)  # higher score wins even when longer
    assert not archive.add(start, 0, 1)  # lower score loses even when shorter
    game.step("go east")
    assert archive.is_novel(game.get_state().hash, 0, 100)  # unseen hash
    assert len(archive) == 1


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="budget_steps"):
        random_agent(CorridorGame(), -1, 0)
    with pytest.raises(ValueError, match="explore_steps"):
        go_explore(CorridorGame(), 10, 0, explore_steps=0)
    with pytest.raises(TypeError, match="rng"):
        random_agent(CorridorGame(), 10, "seed")
    with pytest.raises(ValueError, match="empty"):
        Archive().sample_uniform(np.random.default_rng(0))


def test_baselines_on_a_generated_textworld_game(tw_game):
    from iclr26.glow.env import TextGame

    with TextGame(tw_game, step_budget=60) as game:
        result = go_explore(game, 1000, np.random.default_rng(0), explore_steps=4)
        _check_curve(result, 60)
        assert result.steps_used == game.steps_used == 60  # the wrapper's budget stops it
        assert result.max_score == game.max_score == 1  # two rooms: go west, take coin
        assert result.details["cells"] >= 2  # world hashes of both rooms
    with TextGame(tw_game) as game:
        result = random_agent(game, 40, 0, episode_steps=10)
        _check_curve(result, 40)
        assert result.steps_used == game.steps_used == 40


def test_oracle_reaches_every_max_score_null_and_noop_none(tw_game, tw_cooking):
    """The reference agents and the no-op floor play through `agents.run_episode` (glow.reference)."""
    from iclr26.glow import reference
    from iclr26.glow.env import TextGame

    for path in (tw_game, tw_cooking):
        with TextGame(path, step_budget=50) as game:
            oracle = reference.play("oracle", reference.oracle(game), game, 50)
            _check_curve(oracle, 50)
            assert oracle.max_score == game.max_score > 0
            assert oracle.steps_used == len(game.walkthrough())
            assert oracle.details["stop_reason"] in ("done", "env_done")
        with TextGame(path, step_budget=50) as game:
            null = reference.play("null", reference.NULL, game, 50)
            _check_curve(null, 50)
            assert null.max_score == 0 and null.steps_used == game.steps_used == 50
            assert null.details["stop_reason"] == "env_done"  # the game's env-step budget ended it
        with TextGame(path, step_budget=50) as game:
            noop = reference.play("noop", reference.NOOP, game, 50)
            assert noop.steps_used == game.steps_used == 0 and noop.curve == [] and noop.max_score == 0
            assert noop.details["stop_reason"] == "done"


def test_oracle_stops_at_the_budget(tw_game):
    from iclr26.glow import reference
    from iclr26.glow.env import TextGame

    with TextGame(tw_game, step_budget=1) as game:  # the walkthrough needs 2 steps
        result = reference.play("oracle", reference.oracle(game), game, 10)
    assert result.steps_used == 1 and result.max_score == 0


def test_the_command_parser_reads_a_command_or_done():
    from iclr26.agents import ParseError
    from iclr26.glow.reference import COMMANDS

    assert COMMANDS.parse("\n  go west \nthen more").content == "go west"
    assert COMMANDS.parse("DONE").kind == "done"
    with pytest.raises(ParseError, match="empty"):
        COMMANDS.parse("  \n")


def test_a_game_without_a_walkthrough_is_named(tw_game, tmp_path):
    import shutil

    from iclr26.glow.env import GameError, TextGame

    bare = tmp_path / "tw-bare.z8"  # scored (tw- name), but no TextWorld logic beside it
    shutil.copy(tw_game, bare)
    with (
        TextGame(bare, valid_actions="template") as game,
        pytest.raises(GameError, match=r"tw-bare\.z8.*walkthrough"),
    ):
        game.walkthrough()
