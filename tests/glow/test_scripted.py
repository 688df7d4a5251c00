"""The dual-scale structure without language: the scripted noisy-walkthrough policy, W_local from
multi-path advantages, W_global from frontier score deltas, and the four players at one budget; on a
pure-Python corridor (a test double of `TextGame`) and on a generated TextWorld game."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.glow.env import BudgetExhausted, GameState, TextGame
from iclr26.glow.memory import Frontier, Trajectory, Transition
from iclr26.glow.scripted import (
    PLAYERS,
    critical_states,
    multipath_advantage,
    noisy_walkthrough,
    play,
    select_ucb,
)


class Corridor:
    """Rooms 0..L-1 east of each other, a coin (+1) at each of `coins` rooms; the walkthrough goes east,
    taking each coin; "west", "wait" and "sing" are the distractions."""

    name = "corridor"

    def __init__(self, length: int = 8, coins: tuple[int, ...] = (3, 7), budget: int = 100) -> None:
        self.length, self.coins, self.step_budget = length, coins, budget
        self.max_score = len(coins)
        self.steps_used = 0
        self.reset()

    def reset(self) -> str:
        self.room, self.taken, self.score, self.actions = 0, frozenset(), 0, ()
        return "room 0"

    @property
    def budget_left(self) -> int:
        return self.step_budget - self.steps_used

    def valid_actions(self) -> list[str]:
        out = ["sing", "wait", "west"] + (["east"] if self.room < self.length - 1 else [])
        return out + (["take coin"] if self.room in self.coins and self.room not in self.taken else [])

    def walkthrough_from_here(self) -> list[str]:
        left = [c for c in self.coins if c not in self.taken]
        if not left:
            return []
        here = ["take coin"] if self.room in left else []
        return here + ["east"] * max(min(left) - self.room, 0)

    def state_hash(self) -> str:
        return f"{self.room}|{sorted(self.taken)}"

    def step(self, action: str) -> tuple[str, int, bool, dict]:
        if self.budget_left <= 0:
            raise BudgetExhausted("corridor")
        self.steps_used += 1
        reward = 0
        if action == "east" and self.room < self.length - 1:
            self.room += 1
        elif action == "west" and self.room > 0:
            self.room -= 1
        elif action == "take coin" and self.room in self.coins and self.room not in self.taken:
            self.taken, reward = self.taken | {self.room}, 1
        self.score += reward
        self.actions = (*self.actions, action)
        return f"room {self.room}", reward, self.score == self.max_score, {}

    def get_state(self) -> GameState:
        world = (self.room, self.taken, self.score)
        return GameState(
            jericho=world, actions=self.actions, score=self.score, moves=0, hash=self.state_hash()
        )

    def set_state(self, state: GameState) -> None:
        self.room, self.taken, self.score = state.jericho
        self.actions = state.actions


def test_the_policy_follows_the_walkthrough_at_p_1_and_never_at_p_0():
    game, rng = Corridor(), np.random.default_rng(0)
    assert [noisy_walkthrough(game, 1.0, rng) for _ in range(5)] == ["east"] * 5
    picks = {noisy_walkthrough(game, 0.0, rng) for _ in range(200)}
    assert picks == {"sing", "wait", "west", "east"}  # uniform over the valid actions


def test_w_local_steers_the_random_branch():
    game, rng = Corridor(), np.random.default_rng(0)
    key = game.state_hash()
    good = {(key, "sing"): 0.5, (key, "east"): -0.2}
    assert {noisy_walkthrough(game, 0.0, rng, good) for _ in range(50)} == {"sing"}
    bad = {(key, "east"): -0.5, (key, "west"): -0.1}
    assert {noisy_walkthrough(game, 0.0, rng, bad) for _ in range(100)} == {"sing", "wait"}


def test_multipath_advantage_compares_actions_at_shared_states():
    # two rollouts from score 0 share state "a": east there led to +1 later, wait to nothing
    r1 = [("a", "east", 0), ("b", "take coin", 1)]
    r2 = [("a", "wait", 0), ("a", "wait", 0)]
    adv = multipath_advantage([r1, r2], 0)
    # G at a: east 1, wait 0, wait 0 -> baseline 1/3
    assert adv[("a", "east")] == pytest.approx(2 / 3) and adv[("a", "wait")] == pytest.approx(-1 / 3)
    assert ("b", "take coin") not in adv  # visited once: no contrast, no advantage
    assert multipath_advantage([r1], 0) == {}


def _tau(scores: list[int]) -> Trajectory:
    trs, before = [], 0
    for i, s in enumerate(scores):
        st = GameState(jericho=None, actions=(), score=s, moves=i, hash=f"h{i}-{s}")
        trs.append(Transition(f"a{i}", "", s - before, s, st))
        before = s
    return Trajectory(None, trs)


def test_w_global_is_the_frontier_states_after_a_score_delta_and_ucb_selects():
    f = Frontier(5)
    f.add(_tau([0, 1, 1, 3]))
    f.add(_tau([0, 0, 2]))
    crit = critical_states(f)
    assert sorted((tr.score, d) for tr, d in crit) == [(1, 1), (2, 2), (3, 2)]
    assert select_ucb(crit, {}, 0).score == 3  # no selections yet: the highest value
    many = {crit_tr.state.hash: 50 for crit_tr, _ in crit if crit_tr.score == 3}
    assert select_ucb(crit, many, 60).score == 2  # the top state is worn: the bonus moves on


@pytest.mark.parametrize("player", PLAYERS)
def test_every_player_spends_exactly_the_budget_and_is_seeded(player):
    runs = []
    for _ in range(2):
        game = Corridor(budget=60)
        runs.append(play(player, game, 0.3, 60, np.random.default_rng(4), segment_steps=10, episode_steps=20))
        assert game.steps_used == runs[-1].steps_used <= 60
    assert runs[0].curve == runs[1].curve and runs[0].steps_used > 0


def test_at_p_1_every_player_solves_the_corridor():
    for player in PLAYERS:
        result = play(player, Corridor(budget=40), 1.0, 40, np.random.default_rng(0), segment_steps=20)
        assert result.max_score == 2, player


def test_memory_helps_a_weak_policy_on_a_long_corridor():
    # p = 0.2 on a 30-room corridor with coins far apart: returning to the frontier keeps the progress
    # that no-memory episodes lose at every reset (a check that the structure does something, over seeds)
    def mean(player: str) -> float:
        out = []
        for seed in range(4):
            game = Corridor(30, (10, 20, 29), budget=600)
            out.append(play(player, game, 0.2, 600, np.random.default_rng(seed), segment_steps=20).max_score)
        return float(np.mean(out))

    assert mean("frontier_mar") > mean("no_memory")


def test_the_walkthrough_from_here_on_a_textworld_game_follows_set_state(tw_cooking):
    with TextGame(tw_cooking, step_budget=50, walkthrough=True) as game:
        walk = game.walkthrough_from_here()
        assert walk
        start = game.get_state()
        game.step(walk[0])
        after = game.walkthrough_from_here()
        assert after == walk[1:]
        game.set_state(start)
        assert game.walkthrough_from_here() == walk
    with TextGame(tw_cooking, step_budget=5) as game:
        assert game.walkthrough_from_here() == []  # not asked for


def test_the_structure_study_runs_as_a_glow_experiment(tmp_path, tw_game, monkeypatch):
    import json

    from iclr26.core.ledger import CELLS_FILE
    from iclr26.core.runner import run_system
    from iclr26.glow import SYSTEM, system

    monkeypatch.setattr(system, "_game_paths", lambda cfg: [tw_game])
    overrides = {"experiment": "structure", "step_budget": "8", "seeds": "2", "walk_p": "0.5,1.0"}
    record, _ = run_system(SYSTEM, "smoke", overrides, out=tmp_path / "run")
    cells = [json.loads(line) for line in (tmp_path / "run" / CELLS_FILE).read_text().splitlines()]
    assert {c["arm"] for c in cells} == {*PLAYERS, "random", "noop"} and len(cells) == 6 * 4
    assert all(c["metrics"]["steps_used"] <= 8 for c in cells)
    at_1 = [c["metrics"] for c in cells if c["arm"] in PLAYERS and c["metrics"]["p"] == 1.0]
    assert all(m["solved"] == 1 for m in at_1)  # the walkthrough itself wins the 2-step game
    assert all(c["metrics"]["normalised"] == 0 for c in cells if c["arm"] == "noop")
    per_p = record.report.tables[0]
    assert per_p.title.startswith("Memory structure") and [r[:2] for r in per_p.rows] == [
        ["0.5", "go_explore"], ["0.5", "no_memory"], ["1", "go_explore"], ["1", "no_memory"]
    ]  # fmt: skip
    check = record.report.claim_check
    assert check is not None and check.method == "frontier_mar" and check.n == 4
